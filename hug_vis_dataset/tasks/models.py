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

from typing import Any, Callable, Mapping


def _lpips(device: str):
    from ..models.lpips import load_lpips

    return load_lpips(device=device)


def _face_detector(device: str):
    from ..models.arcface import SCRFDDetector

    return SCRFDDetector(device=device)


def _face_embedder(device: str):
    from ..models.arcface import ArcFaceEmbedder

    return ArcFaceEmbedder(device=device)


def _syncnet(device: str):
    from ..models.syncnet import load_syncnet

    return load_syncnet(device=device)


def _inception(device: str):
    from ..models.inception import load_inception

    return load_inception(device=device)


def _utmos(device: str):
    from ..models.utmos import load_utmos22_strong

    return load_utmos22_strong(device=device)


#: Model kind -> loader (each raises the weights layer's error naming the missing file).
LOADERS: dict[str, Callable[[str], Any]] = {
    "lpips": _lpips,
    "face_detector": _face_detector,
    "face_embedder": _face_embedder,
    "syncnet": _syncnet,
    "inception": _inception,
    "utmos": _utmos,
}


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

    def get(self, kind: str) -> Any:
        """The model of ``kind``, loading it once."""
        if kind not in self._models:
            if kind not in LOADERS:
                raise KeyError(f"unknown model kind {kind!r}; known: {sorted(LOADERS)}")
            self._models[kind] = LOADERS[kind](self.device)
        return self._models[kind]


_PROCESS_CACHE: "ModelCache | None" = None


def process_models(device: str = "cpu") -> ModelCache:
    """The worker process's cache (one per process and device)."""
    global _PROCESS_CACHE
    if _PROCESS_CACHE is None or _PROCESS_CACHE.device != device:
        _PROCESS_CACHE = ModelCache(device)
    return _PROCESS_CACHE
