"""The networks a scorer uses, loaded once per process and kept across clips.

A worker (local process or Ray actor) holds one :class:`ModelCache`; every clip it scores reuses
the loaded models. Tests and callers inject their own objects (``overrides``), e.g. a detector
and an embedder built from tiny ONNX files, so every door can run the same scorer with them.

Example:
    >>> cache = ModelCache(overrides={"face_detector": "my-detector"})
    >>> cache.get("face_detector")
    'my-detector'
"""

from __future__ import annotations

from typing import Any, Mapping


#: Model kind -> (module, loader) of :mod:`hug_vis_dataset.models`; every loader takes ``device=`` and
#: raises the weights layer's error naming the missing file, its source and the override.
LOADERS: dict[str, tuple[str, str]] = {
    "lpips": ("hug_vis_dataset.models.lpips", "load_lpips"),
    "face_detector": ("hug_vis_dataset.models.arcface", "SCRFDDetector"),
    "face_embedder": ("hug_vis_dataset.models.arcface", "ArcFaceEmbedder"),
    "syncnet": ("hug_vis_dataset.models.syncnet", "load_syncnet"),
    "inception": ("hug_vis_dataset.models.inception", "load_inception"),
    "utmos": ("hug_vis_dataset.models.utmos", "load_utmos22_strong"),
    "asr": ("hug_vis_dataset.models.whisper", "load_whisper_large_v3"),
    "distill_mos": ("hug_vis_dataset.models.distill_mos", "load_distill_mos"),
    # MediaPipe's landmark networks (LiteRT, CPU): the parts the human-motion rows' tracks are built from
    "human_pose": ("hug_vis_dataset.models.mediapipe.holistic", "load_pose"),
    "human_hands": ("hug_vis_dataset.models.mediapipe.holistic", "load_hands"),
    "human_face": ("hug_vis_dataset.models.mediapipe.holistic", "load_face"),
}


def load_model(kind: str, device: str = "cpu") -> Any:
    """Load one model of ``kind`` on ``device`` (imported only when asked: ``hugvis --help`` stays fast)."""
    import importlib

    module, name = LOADERS[kind]
    return getattr(importlib.import_module(module), name)(device=device)


class ModelCache:
    """Models by kind (:data:`LOADERS`), loaded on first use.

    Args:
        device: ``cpu``, ``cuda``, ``cuda:N`` or ``auto`` (:func:`hug_vis_dataset.models.device.resolve_device`);
            torch models are moved to it, ONNX sessions put the CUDA provider first on a GPU.
        overrides: kind -> an object to use instead of loading one.
    """

    def __init__(self, device: str = "cpu", overrides: "Mapping[str, Any] | None" = None):
        unknown = set(overrides or {}) - set(LOADERS)
        if unknown:
            raise ValueError(f"unknown model kind(s) {sorted(unknown)}; known: {sorted(LOADERS)}")
        self.device = device
        self._models: dict[str, Any] = dict(overrides or {})
        self._injected = set(overrides or {})

    def get(self, kind: str) -> Any:
        """The model of ``kind``, loading it once."""
        if kind not in self._models:
            if kind not in LOADERS:
                raise KeyError(f"unknown model kind {kind!r}; known: {sorted(LOADERS)}")
            self._models[kind] = load_model(kind, self.device)
        return self._models[kind]


    def identity(self, kind: str, weight_names: "tuple[str, ...]") -> "str | None":
        """What a feature computed by ``kind`` depends on, for the feature cache's key: the pinned
        sha256 of its weights, or an injected model's ``cache_key`` attribute (None: an injected model
        without one, whose features are never cached).

        Example:
            >>> class Toy:
            ...     cache_key = "toy-v1"
            >>> ModelCache(overrides={"inception": Toy()}).identity("inception", ("inception_fid",))
            'injected:toy-v1'
        """
        if kind in self._injected:
            key = getattr(self._models[kind], "cache_key", None)
            return None if key is None else f"injected:{key}"
        from .. import weights

        return "weights:" + ",".join(f"{w}={weights.get_spec(w).sha256}" for w in weight_names)


_PROCESS_CACHE: "ModelCache | None" = None


def process_models(device: str = "cpu") -> ModelCache:
    """The worker process's cache (one per process and device)."""
    global _PROCESS_CACHE
    if _PROCESS_CACHE is None or _PROCESS_CACHE.device != device:
        _PROCESS_CACHE = ModelCache(device)
    return _PROCESS_CACHE
