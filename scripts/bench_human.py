"""Per-frame CPU cost of the human-motion rows at 1080p: the door against the bare model calls (issue 53).

On clips made from a real photograph (scikit-image's astronaut, framed as a seated half-body shot at
``--size``, moving, its mouth opening with a syllable rhythm; tests/human_photos.py), it times:

* ``door``: :meth:`TaskScorer.score_clip` of ``vision_driven`` with every human-motion row (body, hands, face:
  the generated and the reference video through the landmark networks, in the one decode) and of
  ``audio_driven`` with its rows (the generated video and the driving audio), the feature cache off (the
  reference's landmarks computed: the first system scored against a dataset) and on (read back: every later one);
* ``model calls``: the CPU spent inside the LiteRT interpreters during that same door run (each
  :class:`~hug_vis_dataset.models.mediapipe.runtime.TfliteNet` call timed: setting the input, ``invoke``,
  copying the outputs), i.e. what the networks alone cost for exactly the calls the door made;
* ``ideal``: one decode of each video the door decodes (PyAV to RGB, as the library decodes; timed here on
  the same files) + those model calls: the least any door can cost;
* ``door / ideal``: the goal is at most 1.3 (everything else: the crops, anchors, suppression, projections,
  tracking, the tracks and the metrics); ``door / model calls`` beside it.

No frame is skipped (no subsampling). CPU time is ``time.process_time`` (all threads; LiteRT runs one thread).
It prints a Markdown table and the full-grid CPU-hours it implies (8,400 clips x 180 frames = 1.51 M frames per
system; the reference's landmarks once per dataset).

Usage: ``python scripts/bench_human.py [--size 1920x1080] [--frames 60] [--repeat 2]``
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

GRID_FRAMES = 8400 * 180


class ModelClock:
    """Times every TfliteNet call (CPU seconds, and the count) while installed."""

    def __init__(self) -> None:
        from hug_vis_dataset.models.mediapipe.runtime import TfliteNet

        self.cls, self.original = TfliteNet, TfliteNet.__call__
        self.seconds, self.calls = 0.0, 0

    def __enter__(self) -> "ModelClock":
        clock = self

        def timed(net, tensor):
            start = time.process_time()
            try:
                return clock.original(net, tensor)
            finally:
                clock.seconds += time.process_time() - start
                clock.calls += 1

        self.cls.__call__ = timed
        return self

    def __exit__(self, *exc) -> None:
        self.cls.__call__ = self.original


def make_clips(folder: Path, size: tuple[int, int], frames: int) -> dict[str, Path]:
    import human_photos as P

    from hug_vis_dataset.readers.media import write_wav
    from hug_vis_dataset.metrics.human_tracks import speech_envelope

    image = P.photo("astronaut")
    samples, envelope = P.syllables(frames / 30, seed=1)
    per_frame = speech_envelope(envelope, 16000, 30.0, frames)
    rng = np.random.default_rng(0)
    talking = [P.open_mouth(image, "astronaut", 18 * e) for e in per_frame]
    ref = [P.scene(f, dx=8 * math.sin(t / 6), size=size) for t, f in enumerate(talking)]
    pred = [P.scene(f, dx=8 * math.sin(t / 6) + rng.normal(0, 3), dy=abs(rng.normal(0, 3)), size=size)
            for t, f in enumerate(talking)]
    out = {"ref": P.write_clip(folder / "ref.mp4", ref), "pred": P.write_clip(folder / "pred.mp4", pred),
           "audio": folder / "ref.wav"}
    write_wav(out["audio"], samples, 16000)
    return out


def decode_seconds(path: Path) -> float:
    """CPU seconds of one decode of a video to RGB chunks (the library's decoder)."""
    from hug_vis_dataset.readers.media import iter_video_frames

    start = time.process_time()
    for _ in iter_video_frames(path, 32):
        pass
    return time.process_time() - start


def door(task: str, clips: dict[str, Path], models, cache: bool) -> tuple[float, float, int, dict]:
    from hug_vis_dataset import catalog
    from hug_vis_dataset.tasks import get_task

    if cache:
        os.environ.pop("HUGVIS_NO_FEATURE_CACHE", None)
    else:
        os.environ["HUGVIS_NO_FEATURE_CACHE"] = "1"
    rows = [m for m in catalog.clip_metrics(task) if catalog.spec(m).call == catalog.PER_TRACK]
    reference = {"video": str(clips["ref"]), "audio": str(clips["audio"]), "portrait": str(clips["ref"])}
    with ModelClock() as clock:
        start = time.process_time()
        scores = get_task(task).score_clip(str(clips["pred"]), reference, rows, models, {"chunk_frames": 32})
        total = time.process_time() - start
    return total, clock.seconds, clock.calls, scores.values


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="1920x1080")
    parser.add_argument("--frames", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    size = tuple(int(v) for v in args.size.split("x"))
    from hug_vis_dataset.tasks import ModelCache

    models = ModelCache()
    for kind in ("human_pose", "human_hands", "human_face"):
        models.get(kind)  # loading is not per frame
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["HUGVIS_CACHE_DIR"] = str(Path(tmp) / "cache")  # an empty feature cache of this run's own
        os.environ.setdefault("HUGVIS_WEIGHTS_DIR", str(Path.home() / ".cache" / "hugvis" / "weights"))
        clips = make_clips(Path(tmp), size, args.frames)
        lines = ["| door | reference landmarks | door CPU ms / frame | ideal (decode + model calls) ms | "
                 "model calls ms | model calls / frame | door / ideal | door / model calls |",
                 "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
        results = {}
        for task in ("vision_driven", "audio_driven"):
            for cache in (False, True):
                if cache:
                    door(task, clips, models, True)  # stores the reference's landmarks: the runs below read them
                runs = []
                for _ in range(args.repeat):  # the decode timed next to each door run: a change of load cancels
                    decoded = decode_seconds(clips["pred"]) + (0.0 if cache else decode_seconds(clips["ref"]))
                    runs.append((*door(task, clips, models, cache), decoded))
                total, model, calls, ideal = (float(np.median([r[i] for r in runs])) for i in (0, 1, 2, 4))
                ideal += model
                ratio = float(np.median([r[0] / (r[1] + r[4]) for r in runs]))
                where = "read from the feature cache" if cache else "computed (cache off)"
                results[(task, cache)] = total / args.frames
                lines.append(f"| {task} | {where} | {1000 * total / args.frames:.1f} | "
                             f"{1000 * ideal / args.frames:.1f} | {1000 * model / args.frames:.1f} "
                             f"| {calls / args.frames:.1f} | {ratio:.2f} | {float(np.median([r[0] / r[1] for r in runs])):.2f} |")
                print(f"{task} cache={cache}: {[round(r[0], 2) for r in runs]} s, values {runs[0][3]}", flush=True)
    print(f"\n{args.frames} frames at {size[0]}x{size[1]}, median of {args.repeat} runs, one LiteRT thread\n")
    print("\n".join(lines))
    hours = {key: value * GRID_FRAMES / 3600 for key, value in results.items()}
    print(f"\nfull grid, one system (reference landmarks cached): vision_driven {hours[('vision_driven', True)]:.1f} "
          f"CPU-hours, audio_driven {hours[('audio_driven', True)]:.1f}; the reference's landmarks once per dataset: "
          f"{hours[('vision_driven', False)] - hours[('vision_driven', True)]:.1f} (body, hands, face)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
