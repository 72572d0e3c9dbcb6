"""Voice cloning (Table 9): UTMOS, DNSMOS (OVRL, plus SIG/BAK/P.808) and speaker similarity.

DNSMOS's four scores come from one kernel call (read window by window), speaker similarity from
Resemblyzer's own preprocessing; every row the catalog calls per clip (UTMOS, and any new audio metric:
one row and one function, :mod:`hug_vis_dataset.tasks.dispatch`) gets the clip decoded once to 16 kHz
mono float32 samples (the reference too, when a row compares with it).

Also the paper's "Real audio" row: each clip's prediction is another recording of the same actor
(:func:`hug_vis_dataset.metrics.voice.real_audio_pairs`), read from the reference source itself.
"""

from __future__ import annotations

from typing import Any, Mapping

from .. import catalog
from ..grid import ClipId
from .base import ClipScores, SubmissionError, TaskScorer
from .dispatch import clip_values, error_text, needs_reference
from .submission import PredictionIndex

#: ``--predictions`` value (and CLI flag ``--real-audio``) that scores the release's own recordings.
REAL_AUDIO = "real-audio"


def _audio(source: str):
    """A file path, or (samples, rate) of a recording inside a dataset repo."""
    from ..references import is_row_locator, read_reference_audio

    return read_reference_audio(source) if is_row_locator(source) else (source, None)


class VoiceCloningTask(TaskScorer):
    name = "voice_cloning"
    reference_kinds = ("audio",)
    kernels = {"hug_vis_dataset.metrics.voice:dnsmos": "_dnsmos",
               "hug_vis_dataset.metrics.voice:speaker_similarity": "_speaker"}
    passes = {catalog.PER_CLIP: "_audio_pass"}

    def reference(self, record) -> dict[str, str]:
        return {"audio": str(record.audio_path)}

    def index_from_references(self, refs, predictions) -> PredictionIndex:
        """The Real-audio row: each clip predicted by the same actor's next recording (an unpaired
        clip stays missing and is counted by the coverage report)."""
        from types import SimpleNamespace

        from ..metrics.voice import real_audio_pairs

        if str(predictions) != REAL_AUDIO:
            raise SubmissionError(f"task {self.name} has no reference-derived mode for {predictions!r}")
        records = [SimpleNamespace(cid=cid, clip_id=refs.record(cid).clip_id, audio_path=None)
                   for cid in refs.clip_ids()]
        pairs, _unpaired = real_audio_pairs(records)
        index = PredictionIndex()
        for pair in pairs:
            partner = ClipId.parse(pair.partner_id)
            index.found[ClipId.parse(pair.clip_id)] = [refs.reference(partner)["audio"]]
        return index

    def note(self, prediction: str) -> str:
        """Stereo (or more) predictions are scored on their channel mean: said in the rows' ``error``."""
        from ..media import downmix_note
        from ..references import is_row_locator

        return "" if is_row_locator(prediction) else (downmix_note(prediction) or "")

    def check(self, prediction: str, reference: Mapping[str, str], expected: Mapping[str, Any]) -> None:
        from ..media import MediaError, audio_info
        from ..references import is_row_locator

        if is_row_locator(prediction):
            return  # a recording of the release itself (Real-audio row)
        try:
            frames, rate, _ = audio_info(prediction)
        except MediaError as err:
            raise SubmissionError(f"unreadable prediction: {err}") from None
        want = int(expected.get("sample_rate") or 0)
        if want and rate != want:
            raise SubmissionError(f"wrong sample rate: prediction is {rate} Hz, the release's clips are {want} Hz")
        if frames == 0:
            raise SubmissionError("empty audio: the prediction has no samples")

    def _dnsmos(self, prediction, reference, metrics, models, options) -> ClipScores:
        from ..metrics.voice import dnsmos

        scores = dnsmos(*_audio(prediction), device=models.device)
        return ClipScores({m: float(scores[m]) for m in metrics}, notes={"dnsmos_windows": scores["dnsmos_windows"]})

    def _speaker(self, prediction, reference, metrics, models, options) -> ClipScores:
        from ..metrics.voice import speaker_similarity

        pred, pred_rate = _audio(prediction)
        ref, ref_rate = _audio(reference["audio"])
        batch = int(options.get("batch_size") or 16)
        return ClipScores({"speaker_similarity": float(speaker_similarity(pred, ref, pred_rate, ref_rate,
                                                                          device=models.device, batch_partials=batch))})

    def _audio_pass(self, prediction, reference, metrics, models, options) -> ClipScores:
        """The per-clip rows (UTMOS ...) on the clip read once as 16 kHz mono samples (and the reference
        recording, when a row compares with it); a row whose function raises fails alone."""
        from ..metrics.voice import prepare_audio

        pred = prepare_audio(*_audio(prediction))
        paired, ref, errors = [m for m in metrics if needs_reference([m])], None, {}
        if paired:
            try:
                ref = prepare_audio(*_audio(reference["audio"]))
            except Exception as err:  # noqa: BLE001 - an unreadable reference fails the rows comparing with it
                errors = dict.fromkeys(paired, error_text(err))
        values, more = clip_values([m for m in metrics if m not in errors], models, pred, ref)
        return ClipScores(values, errors={**errors, **more})
