"""MediaPipe Selfie Segmentation as a matting model: the network's soft person mask as the alpha matte.

Re-derived from ``mediapipe/modules/selfie_segmentation/selfie_segmentation_cpu.pbtxt`` (google-ai-edge/
mediapipe, read, not copied): the whole frame resized, without letterbox (``keep_aspect_ratio: false``), to
the model's input in ``[0, 1]`` (the general model 256 x 256 for ``model_selection: 0``; the landscape model
144 x 256 for 1, made for 16:9 frames); ``TensorsToSegmentationCalculator`` with ``activation: NONE`` (the
network's last layer is already a sigmoid) resized back to the frame's size, bilinear. Which model: the
landscape one for frames wider than 3:2 (HUG-VIS is 16:9), else the general one.

``hugvis predict matting --model selfie-segmentation`` writes its masks as the submission (a baseline made of
a real network, scored like any submission); docs/PREDICT.md.

Example:
    >>> import skimage.data
    >>> model = SelfieSegmentation()
    >>> alpha = model(skimage.data.astronaut()[None])
    >>> alpha.shape, alpha.dtype, bool(alpha[0, 300, 250] > 0.9), bool(alpha[0, 40, 480] < 0.1)
    ((1, 512, 512), dtype('float32'), True, True)
"""

from __future__ import annotations

import numpy as np

from .geometry import crop, full_image

#: The name of the model for ``hugvis predict matting --model``.
MODEL_NAME = "selfie-segmentation"
#: Width / height above which the landscape model runs.
LANDSCAPE_ABOVE = 1.5


class SelfieSegmentation:
    """``f(frames (n, H, W, 3) uint8) -> alpha (n, H, W) float32 in [0, 1]`` (a matting model of
    :mod:`hug_vis_dataset.predict.matting`). The networks load on first use."""

    def __init__(self, threads: int = 1) -> None:
        self.threads = threads
        self._nets: dict[str, object] = {}

    def _net(self, landscape: bool):
        from .runtime import TfliteNet

        name = "mediapipe_selfie_segmentation" + ("_landscape" if landscape else "")
        if name not in self._nets:
            self._nets[name] = TfliteNet.load(name, threads=self.threads)
        return self._nets[name]

    def __call__(self, frames: np.ndarray) -> np.ndarray:
        import cv2

        frames = np.asarray(frames)
        n, height, width = frames.shape[:3]
        net = self._net(width / height > LANDSCAPE_ABOVE)
        size = net.size
        out = np.empty((n, height, width), np.float32)
        for i, frame in enumerate(frames):
            (mask,) = net(crop(frame, full_image(width, height), size, (0.0, 1.0), zero_border=True))
            mask = np.asarray(mask, np.float32).reshape(size[1], size[0])
            out[i] = cv2.resize(mask, (width, height), interpolation=cv2.INTER_LINEAR)
        return np.clip(out, 0.0, 1.0)
