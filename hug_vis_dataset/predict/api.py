"""``predict``, ``export_inputs`` and ``collect_outputs``: the Python API behind ``hugvis predict``.

Example:
    >>> import tempfile, os, json
    >>> from hug_vis_dataset.synth import synthesize
    >>> root = tempfile.mkdtemp()
    >>> _ = synthesize(root, actors=1, scripts=1, seconds=0.2, size=(32, 18), emotions=["Happy"], actions=1,
    ...                systems=False)
    >>> out = os.path.join(tempfile.mkdtemp(), "sub")   # never inside the dataset: the guard refuses that
    >>> predict("emotion", "baseline", root, out, progress=False).counts()
    {'ok': 1, 'failed': 0, 'skipped': 0}
    >>> json.loads(open(os.path.join(out, "predictions.jsonl")).readline())["answer"]
    'Happy'
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable, Sequence

from ..outputs import claim
from ..datamodel.results import BASELINE_MODEL
from .clips import open_clip_source
from .runner import PredictSetupError, PredictSummary, run_file_task

TASKS = ("matting", "audio_driven", "vision_driven", "voice_cloning", "emotion")
# The name its rows are stored under, which the report and the leaderboard recognise.
BASELINE = BASELINE_MODEL
#: The matting model made of a real network: MediaPipe Selfie Segmentation's soft mask (``--model selfie-segmentation``).
SELFIE_SEGMENTATION = "selfie-segmentation"
#: Input settings a run uses when none are given: the baseline reads the transcript; other
#: adapters have no default (the user chooses what the model can take).
BASELINE_SETTINGS = ("Text",)


def _check_task(task: str) -> None:
    if task not in TASKS:
        raise PredictSetupError(f"unknown task {task!r}; choose one of {', '.join(TASKS)}")


def emotion_adapter(model: "str | Callable", timeout: float = 60.0, retries: int = 3, backoff: float = 1.0,
                    pipeline_task: "str | None" = None) -> tuple[Callable, str]:
    """(callable, description) of an emotion ``--model`` value (see :mod:`.adapters`)."""
    from . import adapters, emotion

    if callable(model):
        return model, getattr(model, "__name__", type(model).__name__)
    if model == BASELINE:
        return emotion.keyword_baseline, "baseline (transcript keywords)"
    kind, _, rest = model.partition(":")
    if kind == "openai" and rest:
        chat = adapters.OpenAIChat(rest, timeout=timeout, retries=retries, backoff=backoff)
        return chat, chat.describe()
    if kind == "transformers" and rest:
        pipe = adapters.TransformersEmotion(rest, pipeline_task=pipeline_task)
        return pipe, pipe.describe()
    return adapters.load_callable(model), model


def predict(task: str, model: "str | Callable", dataset: "str | Path", out: "str | Path", *,
            limit: "int | None" = None, resume: bool = False, settings: "Sequence[str] | None" = None,
            language: str = "auto", video_frames: int = 8, text_column: str = "transcript",
            chunk_frames: int = 32, matting_reads_path: bool = False, timeout: float = 60.0, retries: int = 3, backoff: float = 1.0,
            pipeline_task: "str | None" = None, revision: "str | None" = None,
            progress: bool = True, into_existing: bool = False, circular: int = 1) -> PredictSummary:
    """Run a model (or the task's baseline) on every clip of ``dataset`` and write a submission.

    Args:
        task: matting, audio_driven, vision_driven, voice_cloning or emotion.
        model: ``"baseline"``, ``"module:function"``, ``"openai:MODEL"``, ``"transformers:ID"``
            (emotion), ``"selfie-segmentation"`` (matting: MediaPipe's soft person mask as alpha), or a Python
            callable. Generation tasks take only the baseline here; run
            other generators through :func:`export_inputs` and :func:`collect_outputs`.
        dataset: release tree, dataset repo folder or Hub id (as ``hugvis evaluate --dataset``).
        out: the submission folder (``hugvis evaluate --predictions``).
        limit: only the first ``limit`` clips in grid order.
        resume: keep outputs that exist and verify; otherwise every clip is redone.
        settings: emotion input settings (Table 4 names); default Text for the baseline.
        language, video_frames, text_column: emotion protocol options (:mod:`.emotion`); ``language="both"`` asks
            every question in English and in Chinese.
        circular: emotion: ask each clip and setting under this many option orders (1..7; :mod:`.emotion`).
        chunk_frames: frames per matting chunk.
        matting_reads_path: the matting model is called once per clip with the video's path
            (:class:`~.matting.MattingPrediction`) instead of on frame chunks.
        timeout, retries, backoff: the chat endpoint's request policy.
        pipeline_task: the ``transformers`` pipeline task when it cannot be inferred.
        revision: Hub revision when ``dataset`` is a Hub id.
        progress: tqdm bar.
        into_existing: ``out`` may be a non-empty folder hugvis did not make (nothing in it is replaced).

    The submission folder is this command's one output (:func:`hug_vis_dataset.outputs.claim`): never the
    dataset or inside it, and a folder holding another model's (or task's) predictions is refused.

    Raises:
        PredictSetupError: an unknown task or adapter, a setting the adapter cannot take.
        OutputError: ``out`` overlaps the dataset, holds another model's predictions, or a file there that
            this run would replace is not the toolkit's.
    """
    _check_task(task)
    if task != "emotion" and (circular != 1 or language == "both"):
        raise PredictSetupError("--circular and --language both apply to emotion only")
    name = model if isinstance(model, str) else getattr(model, "__name__", "callable")
    output = claim("hugvis predict", out, "submission", inputs=[("--dataset", dataset)],
                   attrs={"task": task, "model": name}, into_existing=into_existing)
    source = open_clip_source(dataset, task, revision)
    clips = list(source.clips(limit))
    label = f"{name} @ {time.strftime('%Y-%m-%dT%H:%M:%S')}"
    if task == "emotion":
        from .emotion import predict_emotion

        fn, name = emotion_adapter(model, timeout, retries, backoff, pipeline_task)
        if not settings:
            if model != BASELINE:
                raise PredictSetupError("emotion needs the input settings to run (e.g. --setting Text "
                                        "--setting 'Video + Text')")
            settings = BASELINE_SETTINGS
        if model == BASELINE:
            from .emotion import setting_modalities

            without_text = [s for s in settings if "Text" not in setting_modalities(s)]
            if without_text:
                raise PredictSetupError(f"the keyword baseline reads the transcript; {without_text} have no Text")
        return predict_emotion(clips, fn, output, settings, model_name=name, language=language,
                               video_frames=video_frames, text_column=text_column, resume=resume,
                               progress=progress, run=label, circular=circular)
    if task == "matting":
        from .adapters import load_callable
        from .matting import MattingPrediction, chroma_key_alpha

        if model == SELFIE_SEGMENTATION:  # MediaPipe's person mask as alpha (models/mediapipe/segmentation.py)
            from ..models.mediapipe.segmentation import SelfieSegmentation

            fn: Any = SelfieSegmentation()
        else:
            fn = chroma_key_alpha if model == BASELINE else (model if callable(model) else load_callable(model))
        matting = MattingPrediction(fn, chunk_frames, reads_path=matting_reads_path and model != BASELINE)
        return run_file_task(matting, clips, output, resume, progress, len(clips), label)
    if model != BASELINE:
        raise PredictSetupError(f"{task} runs generators outside the toolkit: use --export DIR, run the generator, "
                                f"then --collect OUTPUTS (or --model baseline)")
    from .generation import baseline

    return run_file_task(baseline(task), clips, output, resume, progress, len(clips), label)


def export_inputs(task: str, dataset: "str | Path", out: "str | Path", *, limit: "int | None" = None,
                  resume: bool = False, revision: "str | None" = None, progress: bool = True,
                  into_existing: bool = False) -> PredictSummary:
    """Write each clip's generation inputs to ``out/<clip_id>/`` and ``out/manifest.jsonl``."""
    from .generation import ExportInputs, write_manifest

    _check_task(task)
    output = claim("hugvis predict", out, "inputs", label="--export", inputs=[("--dataset", dataset)],
                   attrs={"task": task}, into_existing=into_existing)
    exporter = ExportInputs(task)
    clips = list(open_clip_source(dataset, task, revision).clips(limit))
    summary = run_file_task(exporter, clips, output, resume, progress, len(clips), f"export {task}")
    write_manifest(output, [c.clip_id for c in clips])
    return summary


def collect_outputs(task: str, outputs: "str | Path", dataset: "str | Path", out: "str | Path", *,
                    limit: "int | None" = None, resume: bool = False, revision: "str | None" = None,
                    progress: bool = True, into_existing: bool = False) -> PredictSummary:
    """Copy a generator's per-clip outputs into the submission layout, checking each clip.

    The collected folder then goes through the scorer's own checks (what ``hugvis evaluate
    --check-only`` runs: :func:`hug_vis_dataset.scoring.check.check_submission`); a clip they
    refuse is counted failed, with the coverage report's ``clip: why`` text, so a submission
    collected clean scores clean.
    """
    from .generation import CollectOutputs

    _check_task(task)
    output = claim("hugvis predict", out, "submission", inputs=[("--collect", outputs), ("--dataset", dataset)],
                   attrs={"task": task, "model": "collected"}, into_existing=into_existing)
    collector = CollectOutputs(task, outputs)
    clips = list(open_clip_source(dataset, task, revision).clips(limit))
    summary = run_file_task(collector, clips, output, resume, progress, len(clips), f"collect {task} from {outputs}")
    return _scorer_checks(summary, task, dataset, revision)


def _scorer_checks(summary: PredictSummary, task: str, dataset: "str | Path", revision: "str | None") -> PredictSummary:
    """Move the collected clips that the scorer's checks refuse from ``ok``/``skipped`` to ``failed``."""
    from ..scoring.check import check_submission

    # The clip source above has already opened (and, for a repo folder, verified) the dataset.
    coverage = check_submission(task, summary.out, dataset, revision=revision, verify_dataset=False)
    refused = coverage.refusals()
    for kept in (summary.ok, summary.skipped):
        for clip in [c for c in kept if c in refused]:
            kept.remove(clip)
            summary.failed.append(clip)
            summary.failures.append((clip, refused[clip]))
    return summary
