"""One ``.tflite`` model run with ``ai-edge-litert`` (LiteRT, the TensorFlow Lite interpreter).

The files come through the weights layer (:func:`hug_vis_dataset.weights.resolve`), so a missing file
raises :class:`~hug_vis_dataset.weights.WeightsMissingError` naming it, the wheel it comes from and the
override; a missing ``ai-edge-litert`` is :class:`~hug_vis_dataset.tasks.base.MetricUnavailable`'s
sibling, one line with the install command. MediaPipe's CPU graphs run these models through the
XNNPACK delegate; LiteRT's Python interpreter applies XNNPACK to float models by default too.

Example:
    >>> net = TfliteNet.load("mediapipe_face_detection_short_range")
    >>> net.input_shape, [shape for _, shape in net.outputs]
    ((1, 128, 128, 3), [(1, 896, 16), (1, 896, 1)])
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

INSTALL_HINT = "pip install 'ai-edge-litert==2.3.0' (the hug-vis extra [human])"


class LiteRtMissingError(ImportError):
    """``ai-edge-litert`` is not installed (the human-motion metrics and the selfie baseline need it)."""


def _interpreter_class():
    try:
        from ai_edge_litert.interpreter import Interpreter
    except ImportError as err:  # one line, with the fix
        raise LiteRtMissingError(f"the MediaPipe models need ai-edge-litert: {INSTALL_HINT}") from err
    return Interpreter


class TfliteNet:
    """A model with one float32 image input ``(1, H, W, 3)``; :meth:`__call__` returns its outputs in order.

    Args:
        path: the ``.tflite`` file.
        threads: interpreter threads (1 by default: parallel work is one process per worker).
        name: the registry name (for messages and the feature cache's key).
    """

    def __init__(self, path: "str | Path", threads: int = 1, name: str = "") -> None:
        interpreter = _interpreter_class()(model_path=str(path), num_threads=int(threads))
        interpreter.allocate_tensors()
        self.name = name or Path(path).stem
        self.path = Path(path)
        self._interpreter = interpreter
        (detail,) = interpreter.get_input_details()
        self._input = detail["index"]
        self.input_shape = tuple(int(v) for v in detail["shape"])
        # Output tensors in the model's declared order (MediaPipe's SplitTensorVector ranges count in it).
        self.outputs = [(d["index"], tuple(int(v) for v in d["shape"])) for d in interpreter.get_output_details()]

    @classmethod
    def load(cls, name: str, path: "str | Path | None" = None, threads: int = 1) -> "TfliteNet":
        """The registered model ``name`` (``path`` overrides where it is read from)."""
        from ...weights import resolve

        return cls(resolve(name, path=path), threads=threads, name=name)

    @property
    def size(self) -> tuple[int, int]:
        """``(width, height)`` of the input tensor."""
        return self.input_shape[2], self.input_shape[1]

    def __call__(self, tensor: np.ndarray) -> list[np.ndarray]:
        """Run on one ``(H, W, 3)`` (or ``(1, H, W, 3)``) float32 tensor; copies of the outputs, batch removed."""
        tensor = np.ascontiguousarray(tensor, dtype=np.float32).reshape(self.input_shape)
        self._interpreter.set_tensor(self._input, tensor)
        self._interpreter.invoke()
        return [np.array(self._interpreter.get_tensor(index)[0]) for index, _ in self.outputs]

    def __getstate__(self) -> dict[str, Any]:  # an interpreter does not pickle: reopen the file
        return {"path": str(self.path), "name": self.name,
                "threads": 1}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["path"], threads=state["threads"], name=state["name"])
