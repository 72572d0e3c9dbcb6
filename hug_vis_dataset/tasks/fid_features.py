"""FID's Inception features from the one-decode pass of a clip (:func:`hug_vis_dataset.tasks.generation.video_pass`).

When a run scores FID (``"fid"`` in the job option ``set_features``), the pass computes the Inception
features of the prediction's frames as they are decoded and returns them with the clip's result
(:attr:`~hug_vis_dataset.tasks.base.ClipOutcome.set_features`); the runner keeps them with the clip's
rows and the set-level step reads them instead of decoding the prediction again. A reference whose
features are not yet in the shared feature cache gets them from the reference frames of the same
decode, stored under the key :func:`~hug_vis_dataset.tasks.generation.reference_features` reads.

Values equal the decoding path's bit for bit: the frames of each video are regrouped into the chunks
:func:`~hug_vis_dataset.tasks.generation.video_features` decodes (``chunk_frames`` frames, the last one
shorter), whatever pieces the pass splits them into, so the network sees the same batches
(``tests/test_fid_one_decode.py``). Nothing here can fail a per-clip metric: a failure drops the
features, and the set-level step decodes that clip as before (and meets the failure itself).
"""

from __future__ import annotations

import sys
from typing import Any, Mapping

import numpy as np

#: Kind of the reference features in the shared feature cache.
CACHE_KIND = "fid_reference"


def fid_batch(options: "Mapping[str, Any] | None") -> int:
    """Frames per Inception forward pass: ``batch_size``, default 16."""
    return int((options or {}).get("batch_size") or 16)


def narrow(features: np.ndarray) -> np.ndarray:
    """float32 when that is exact (the network computes in float32), else the array unchanged."""
    small = np.asarray(features).astype(np.float32)
    return small if np.array_equal(small.astype(np.float64), features) else features


def reference_entry(ref: str, models) -> "tuple[Any, dict | None]":
    """``(cache, key parts)`` of a reference video's FID features in the shared feature cache, or
    ``(None, None)`` when they are not cached (cache disabled, or an injected extractor without a key)."""
    from .. import catalog
    from ..cache.features import FEATURE_VERSIONS, reference_digest, shared_cache

    identity = models.identity("inception", catalog.spec("fid").weights)
    cache = shared_cache()
    if cache is None or identity is None:
        return None, None
    return cache, {"reference": reference_digest(ref), "extractor": identity, "version": FEATURE_VERSIONS[CACHE_KIND]}


def store_reference(cache, parts: dict, features: np.ndarray) -> None:
    """Put a reference's features in the cache as :meth:`FeatureCache.get_or_compute` would."""
    try:
        cache.store(CACHE_KIND, parts, {"features": narrow(features)})
    except OSError as err:  # a read-only or full cache only costs recomputing in the set-level step
        print(f"feature cache: cannot write {cache.folder} ({err}); values are unchanged", file=sys.stderr)


class ChunkedInception:
    """Inception features of one video fed in pieces, computed per ``chunk`` frames as decoded."""

    def __init__(self, net, chunk: int, batch: int) -> None:
        self.net, self.chunk, self.batch = net, int(chunk), int(batch)
        self.frames = 0
        self._pending: list[np.ndarray] = []
        self._held = 0
        self._parts: list[np.ndarray] = []

    def feed(self, frames: np.ndarray) -> None:
        self.frames += len(frames)
        while len(frames):
            take = min(len(frames), self.chunk - self._held)
            self._pending.append(frames[:take])
            self._held += take
            frames = frames[take:]
            if self._held == self.chunk:
                self._run()

    def _run(self) -> None:
        from ..models.inception import inception_features

        if self._held:
            block = self._pending[0] if len(self._pending) == 1 else np.concatenate(self._pending)
            self._parts.append(inception_features(self.net, block, self.batch))
            self._pending, self._held = [], 0

    def result(self) -> np.ndarray:
        """``(frames, 2048)`` float64, as :func:`~hug_vis_dataset.tasks.generation.video_features` returns."""
        from ..models.inception import FEATURE_DIM

        self._run()
        return np.concatenate(self._parts) if self._parts else np.zeros((0, FEATURE_DIM))


class PassFeatures:
    """The FID side of one clip's pass: the prediction's features, and the reference's when the cache
    lacks them (:meth:`start` says whether; :meth:`feed` each decoded piece; :meth:`finish`)."""

    def __init__(self, prediction: ChunkedInception, reference: "ChunkedInception | None", entry) -> None:
        self.prediction: "ChunkedInception | None" = prediction
        self.reference = reference
        self.entry = entry

    @classmethod
    def start(cls, reference_video: "str | None", models, options: Mapping[str, Any]) -> "PassFeatures | None":
        """None unless the run scores FID (``"fid"`` in ``options["set_features"]``) and Inception loads."""
        if "fid" not in (options.get("set_features") or ()) or reference_video is None:
            return None
        chunk, batch = int(options.get("chunk_frames", 32)), fid_batch(options)
        try:
            net = models.get("inception")
            cache, parts = reference_entry(reference_video, models)
            # Presence only: the set-level step loads (and sha-checks) the entry; a corrupt one is
            # recomputed there, by decoding the reference again.
            missing = cache is not None and not cache.has(CACHE_KIND, parts)
        except Exception:  # noqa: BLE001 - the set-level step meets (and reports) the same failure
            return None
        return cls(ChunkedInception(net, chunk, batch), ChunkedInception(net, chunk, batch) if missing else None,
                   (cache, parts) if missing else None)

    @property
    def active(self) -> bool:
        return self.prediction is not None or self.reference is not None

    @property
    def wants_reference(self) -> bool:
        return self.reference is not None

    def feed(self, prediction: np.ndarray, reference: "np.ndarray | None") -> None:
        try:
            if self.prediction is not None:
                if reference is not None and prediction.shape != reference.shape:
                    self.prediction = None  # a clip failing its frame metrics: the set-level step decides
                else:
                    self.prediction.feed(prediction)
            if self.reference is not None and reference is not None:
                self.reference.feed(reference)
        except Exception:  # noqa: BLE001 - dropped: the set-level step decodes this clip as before
            self.prediction = self.reference = None

    def finish(self, reference_video: str) -> "dict[str, np.ndarray]":
        """Cache the reference's features when every one of its frames was fed; the prediction's
        features by set metric (``{"fid": (frames, 2048) float32}``), or ``{}``."""
        from ..readers.media import video_info

        out = {}
        try:
            if self.prediction is not None:
                out["fid"] = narrow(self.prediction.result())
        except Exception:  # noqa: BLE001 - as in feed
            out = {}
        try:
            # Pieces stop with the prediction: a longer reference was not decoded to its end.
            if self.reference is not None and self.reference.frames == video_info(reference_video).frames:
                store_reference(*self.entry, self.reference.result())
        except Exception:  # noqa: BLE001 - not cached: the set-level step computes it
            pass
        return out


__all__ = ["CACHE_KIND", "ChunkedInception", "PassFeatures", "fid_batch", "narrow", "reference_entry",
           "store_reference"]
