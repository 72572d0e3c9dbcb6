"""Audio-driven and vision-driven generation and voice cloning: baselines, export and collect.

Generators usually run as their own scripts, so the toolkit does not call them. Instead:

* :class:`ExportInputs` writes, per clip, the inputs the task defines into ``DIR/<clip_id>/``
  plus one ``DIR/manifest.jsonl`` line per clip (``hugvis predict TASK --export DIR``):

  ==================  ===========================================================================
  task                files in ``DIR/<clip_id>/``
  ==================  ===========================================================================
  ``audio_driven``    ``source.png`` (the source portrait: first video frame, lossless),
                      ``driving_audio.wav`` (the clip's recording, released bytes), ``transcript.txt``
  ``vision_driven``   ``source.png``, ``driving_video.mp4`` (the clip's video, released bytes:
                      self-reenactment, so it is also the reference the output is compared with)
  ``voice_cloning``   ``enrollment.wav`` (the actor's recording of this performance),
                      ``target_text.txt`` (the assigned prompt to say in that voice)
  ==================  ===========================================================================

  Each manifest line also gives the output the generator must write (``output``: the file name
  the submission expects) and the properties it must match: ``num_frames`` and ``fps`` (videos),
  ``width``/``height`` (vision-driven), ``sample_rate`` (voice).

* :class:`CollectOutputs` gathers a generator's outputs, found as ``OUTPUTS/<clip_id>.<ext>`` or
  as the single media file inside ``OUTPUTS/<clip_id>/``, into the submission layout
  (``hugvis predict TASK --collect OUTPUTS --out SUBMISSION``), checking each clip: frame count
  and frame rate equal to the reference video (and size, for vision-driven; an audio track, for
  audio-driven: lip-sync metrics read the prediction's own audio); voice: not empty,
  at the release's sample rate (other rates are resampled with :func:`hug_vis_dataset.readers.media.resample`
  and the log says so).

Baselines (``--model baseline``), trivial by design, to give every task a real row:

* :class:`CopySourceFrame` (audio- and vision-driven): the source portrait repeated for the
  clip's frame count at the reference frame rate; the audio-driven video carries the driving
  audio (lip-sync metrics read it from the prediction).
* :class:`ReferenceReplay` (voice cloning): the enrollment recording itself, written as the
  clone. It is the same recording the metrics compare with, so it bounds speaker similarity
  from above; it is not a model.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

import numpy as np

from ..readers import InputFileError
from ..readers.json_files import read_json, require_fields
from ..readers.regular_files import check_regular
from .clips import ClipInputs, reference_fps, reference_frame_count
from .runner import FileTask, PredictionError

if TYPE_CHECKING:
    from ..outputs import Output

GENERATION_TASKS = ("audio_driven", "vision_driven", "voice_cloning")
VIDEO_SUFFIXES = (".mp4", ".mkv", ".mov")
AUDIO_SUFFIXES = (".wav", ".flac")
MANIFEST = "manifest.jsonl"
CLIP_MANIFEST = "inputs.json"
#: Frame rates closer than this are equal (containers store rates as rationals).
FPS_TOLERANCE = 1e-3


def _suffixes(task: str) -> tuple[str, ...]:
    return AUDIO_SUFFIXES if task == "voice_cloning" else VIDEO_SUFFIXES


def _copy_reference(ref: str, dest: Path, suffix: str) -> None:
    """The released bytes of a reference (file or repo cell), unchanged."""
    from ..references import reference_file

    with reference_file(ref, suffix) as src:
        shutil.copyfile(src, dest)


def _write_png_rgb(path: Path, rgb: np.ndarray) -> None:
    import cv2

    ok, buf = cv2.imencode(".png", np.ascontiguousarray(rgb[..., ::-1]))
    if not ok:
        raise PredictionError(f"PNG encoding failed for {path.name}")
    path.write_bytes(buf.tobytes())


def has_audio_stream(path: "str | Path") -> bool:
    """True when the container has an audio track (lip-sync metrics read the prediction's own audio)."""
    import av

    check_regular(path, "media file")  # never a FIFO (FFmpeg would wait for a writer) nor a device
    with av.open(str(path)) as container:
        return bool(container.streams.audio)


def check_video(path: "str | Path", clip: ClipInputs, same_size: bool, with_audio: bool = False) -> dict:
    """Frame count, rate (and size, and an audio track) of a generated video against the clip's reference.

    Raises:
        PredictionError: naming what differs.
    """
    from ..readers.media import MediaError, video_info

    try:
        info = video_info(path)
    except MediaError as err:
        raise PredictionError(f"unreadable video: {err}") from None
    n_ref, fps_ref = reference_frame_count(clip), reference_fps(clip)
    problems = []
    if info.frames != n_ref:
        problems.append(f"{info.frames} frames, the reference has {n_ref}")
    if abs(info.fps - fps_ref) > FPS_TOLERANCE:
        problems.append(f"{info.fps:g} fps, the reference has {fps_ref:g}")
    if same_size and clip.width and (info.width, info.height) != (clip.width, clip.height):
        problems.append(f"{info.width}x{info.height}, the reference is {clip.width}x{clip.height}")
    if with_audio and not has_audio_stream(path):
        problems.append("no audio track (audio-driven videos carry the driving audio)")
    if problems:
        raise PredictionError("the video has " + "; ".join(problems))
    return {"frames": info.frames, "fps": info.fps, "size": f"{info.width}x{info.height}"}


def check_audio(path: "str | Path", clip: ClipInputs) -> dict:
    """A generated recording must be readable, not empty, at the release's sample rate."""
    from ..readers.media import MediaError, audio_info

    try:
        frames, rate, _ = audio_info(path)
    except MediaError as err:
        raise PredictionError(f"unreadable audio: {err}") from None
    if frames == 0:
        raise PredictionError("the audio has no samples")
    if clip.sample_rate and rate != clip.sample_rate:
        raise PredictionError(f"the audio is {rate} Hz, the release's clips are {clip.sample_rate} Hz")
    return {"samples": frames, "sample_rate": rate}


class _GenerationOutput(FileTask):
    """Output naming and checks of a generation task's submission."""

    def __init__(self, task: str):
        if task not in GENERATION_TASKS:
            raise ValueError(f"{task} is not a generation task ({', '.join(GENERATION_TASKS)})")
        self.task = task

    def output_name(self, clip) -> str:
        return clip.clip_id + (".wav" if self.task == "voice_cloning" else ".mp4")

    def verify(self, clip, path: Path) -> dict:
        if self.task == "voice_cloning":
            return check_audio(path, clip)
        return check_video(path, clip, same_size=self.task == "vision_driven", with_audio=self.task == "audio_driven")


def repeat_frame(frame: np.ndarray, count: int, chunk_frames: int = 32) -> Iterator[np.ndarray]:
    """``count`` copies of ``frame`` in chunks of at most ``chunk_frames`` (memory flat in count).

    Example:
        >>> [c.shape for c in repeat_frame(np.zeros((2, 2, 3), np.uint8), 5, 2)]
        [(2, 2, 2, 3), (2, 2, 2, 3), (1, 2, 2, 3)]
    """
    block = np.broadcast_to(frame, (min(chunk_frames, max(count, 1)),) + frame.shape)
    for start in range(0, count, chunk_frames):
        yield block[: min(chunk_frames, count - start)]


class CopySourceFrame(_GenerationOutput):
    """Baseline of audio- and vision-driven generation: the source portrait, held still."""

    def write(self, clip, path: Path) -> dict:
        from ..readers.media import write_video
        from ..references import read_reference_audio, read_reference_portrait

        portrait = read_reference_portrait(clip.media["portrait"])
        count, fps = reference_frame_count(clip), reference_fps(clip)
        audio, rate = (read_reference_audio(clip.media["audio"]) if self.task == "audio_driven" else (None, 16000))
        write_video(path, repeat_frame(portrait, count), fps=fps, audio=audio, sample_rate=rate)
        return {"baseline": "copy source frame"}


class ReferenceReplay(_GenerationOutput):
    """Baseline of voice cloning: the enrollment recording written back as the clone."""

    def write(self, clip, path: Path) -> dict:
        from ..readers.media import write_wav
        from ..references import read_reference_audio

        audio, rate = read_reference_audio(clip.media["audio"])
        write_wav(path, audio, rate)
        return {"baseline": "reference replay"}


def baseline(task: str) -> FileTask:
    """The built-in baseline of a generation task."""
    return ReferenceReplay(task) if task == "voice_cloning" else CopySourceFrame(task)


class ExportInputs(FileTask):
    """``DIR/<clip_id>/`` with the task's inputs and ``inputs.json`` (see the module docstring)."""

    def __init__(self, task: str):
        if task not in GENERATION_TASKS:
            raise ValueError(f"--export is for {', '.join(GENERATION_TASKS)}, not {task}")
        self.task = task

    def output_name(self, clip) -> str:
        return clip.clip_id

    def write(self, clip, path: Path) -> dict:
        from ..references import read_reference_portrait

        path.mkdir(parents=True)
        inputs: dict[str, str] = {}
        entry: dict = {"clip_id": clip.clip_id, "task": self.task, "output": _GenerationOutput(self.task)
                       .output_name(clip)}
        if self.task in ("audio_driven", "vision_driven"):
            _write_png_rgb(path / "source.png", read_reference_portrait(clip.media["portrait"]))
            inputs["source"] = "source.png"
            entry.update(num_frames=reference_frame_count(clip), fps=reference_fps(clip))
        if self.task == "audio_driven":
            _copy_reference(clip.media["audio"], path / "driving_audio.wav", ".wav")
            inputs["driving_audio"] = "driving_audio.wav"
            self._text(path, "transcript.txt", clip, inputs, "transcript")
        elif self.task == "vision_driven":
            _copy_reference(clip.media["video"], path / "driving_video.mp4", ".mp4")
            inputs["driving_video"] = "driving_video.mp4"
            entry.update(width=clip.width, height=clip.height)
        else:
            _copy_reference(clip.media["audio"], path / "enrollment.wav", ".wav")
            inputs["enrollment_audio"] = "enrollment.wav"
            self._text(path, "target_text.txt", clip, inputs, "target_text")
            entry.update(sample_rate=clip.sample_rate, target_text=clip.text.get("transcript", ""))
        entry["inputs"] = {name: f"{clip.clip_id}/{file}" for name, file in inputs.items()}
        (path / CLIP_MANIFEST).write_text(json.dumps(entry, ensure_ascii=False, indent=1), encoding="utf-8")
        return {"inputs": sorted(inputs)}

    @staticmethod
    def _text(path: Path, name: str, clip, inputs: dict, key: str) -> None:
        text = clip.text.get("transcript")
        if not text:
            raise PredictionError(f"the dataset has no transcript for {clip.clip_id}")
        (path / name).write_text(text + "\n", encoding="utf-8")
        inputs[key] = name

    def verify(self, clip, path: Path) -> None:
        entry_path = path / CLIP_MANIFEST
        if not entry_path.is_file():
            raise PredictionError(f"{path.name}/{CLIP_MANIFEST} is missing")
        try:  # strict, and checked: an "inputs" that is not an object fails this clip, naming the file
            entry = require_fields(read_json(entry_path), {"inputs": dict}, entry_path)
        except InputFileError as err:
            raise PredictionError(str(err)) from None
        missing = [f for f in entry["inputs"].values() if not (path / Path(f).name).is_file()]
        if missing:
            raise PredictionError(f"missing exported files: {', '.join(missing)}")


def write_manifest(output: "Output", clip_ids: list[str]) -> Path:
    """``manifest.jsonl`` of the export folder: the ``inputs.json`` of each exported clip, in the given order."""
    folder = output.root
    lines = [json.dumps(read_json(folder / clip_id / CLIP_MANIFEST), ensure_ascii=False) + "\n"
             for clip_id in clip_ids if (folder / clip_id / CLIP_MANIFEST).is_file()]
    return output.write_text(MANIFEST, "".join(lines))


def find_output(outputs: Path, clip_id: str, suffixes: tuple[str, ...]) -> Path:
    """The generator's output of a clip: ``<clip_id>.<ext>`` or the one media file in ``<clip_id>/``.

    Raises:
        PredictionError: none, or more than one candidate.
    """
    found = [outputs / f"{clip_id}{s}" for s in suffixes if (outputs / f"{clip_id}{s}").is_file()]
    folder = outputs / clip_id
    if folder.is_dir():
        found += sorted(p for p in folder.iterdir() if p.suffix.lower() in suffixes and p.is_file()
                        and not p.name.startswith(("driving_", "enrollment")))
    if not found:
        raise PredictionError(f"no output for this clip in {outputs} (expected {clip_id}{suffixes[0]} or "
                              f"{clip_id}/<name>{suffixes[0]})")
    if len(found) > 1:
        raise PredictionError("several outputs: " + ", ".join(str(p.relative_to(outputs)) for p in found))
    return found[0]


class CollectOutputs(_GenerationOutput):
    """Copies each clip's generator output into the submission layout after checking it."""

    def __init__(self, task: str, outputs: "str | Path"):
        super().__init__(task)
        self.outputs = Path(outputs)
        if not self.outputs.is_dir():
            raise FileNotFoundError(f"outputs folder {self.outputs} does not exist")

    def output_name(self, clip) -> str:
        if self.task == "voice_cloning":
            return clip.clip_id + ".wav"
        # Keep the generator's container (.mkv/.mov are accepted by the scorer too).
        try:
            suffix = find_output(self.outputs, clip.clip_id, _suffixes(self.task)).suffix.lower()
        except PredictionError:
            suffix = _suffixes(self.task)[0]
        return clip.clip_id + suffix

    def write(self, clip, path: Path) -> dict:
        source = find_output(self.outputs, clip.clip_id, _suffixes(self.task))
        details = {"source": str(source)}
        if self.task == "voice_cloning":
            details.update(self._collect_audio(source, clip, path))
        else:
            shutil.copyfile(source, path)
        return details

    @staticmethod
    def _collect_audio(source: Path, clip, path: Path) -> dict:
        from ..readers.media import MediaError, audio_info, read_audio, resample, write_wav

        try:
            _, rate, _ = audio_info(source)
        except MediaError as err:
            raise PredictionError(f"unreadable audio: {err}") from None
        want = int(clip.sample_rate or rate)
        if source.suffix.lower() == ".wav" and rate == want:
            shutil.copyfile(source, path)
            return {}
        # Other containers and rates are re-written as the 16-bit WAV the release ships.
        audio, _ = read_audio(source)
        write_wav(path, resample(audio, rate, want), want)
        return {"note": f"re-written as {want} Hz WAV from {source.suffix} at {rate} Hz"} if rate != want else {}
