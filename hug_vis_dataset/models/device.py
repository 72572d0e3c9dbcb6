"""Where the networks run: one device rule for every torch model and onnxruntime session.

``device`` is ``"cpu"``, ``"cuda"`` (or ``"cuda:N"``) or ``"auto"`` (CUDA when torch sees a GPU,
else CPU). :func:`resolve_device` turns it into a concrete torch device string once;
:func:`onnx_providers` gives the matching onnxruntime execution providers, CUDA first when the
device is CUDA and the installed onnxruntime has the CUDA provider (the CPU-only wheel does not:
then the session runs on CPU and a warning says so).

Every loader in :mod:`hug_vis_dataset.models` takes ``device=`` and the embedding functions
move their inputs to the model's device (:func:`module_device`), so values do not depend on
where or in which batch sizes they are computed beyond float rounding.

Example:
    >>> resolve_device("cpu")
    'cpu'
    >>> onnx_providers("cpu")
    ['CPUExecutionProvider']
"""

from __future__ import annotations

import warnings
from pathlib import Path

DEVICES = ("auto", "cpu", "cuda")
"""Accepted device names (``cuda:N`` picks GPU ``N``)."""

DEFAULT_DEVICE = "cpu"
"""Default of the loaders: CPU, so results never depend silently on the machine."""


class DeviceError(ValueError):
    """A device that is unknown or not present on this machine."""


def _cuda_available() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def resolve_device(device: str = "auto") -> str:
    """Concrete torch device string for ``"auto"``, ``"cpu"``, ``"cuda"`` or ``"cuda:N"``.

    Raises:
        DeviceError: an unknown name, or CUDA requested on a machine where torch sees no GPU.

    Example:
        >>> resolve_device("CPU")
        'cpu'
    """
    name = str(device).strip().lower()
    if name == "auto":
        return "cuda" if _cuda_available() else "cpu"
    if name == "cpu":
        return "cpu"
    if name == "cuda" or (name.startswith("cuda:") and name[5:].isdigit()):
        if not _cuda_available():
            raise DeviceError(f"device {device!r} requested but torch sees no CUDA GPU here; "
                              "use --device cpu (or auto)")
        return name
    raise DeviceError(f"unknown device {device!r}: use one of {', '.join(DEVICES)} or cuda:N")


def onnx_providers(device: str = "auto") -> list[str]:
    """onnxruntime execution providers for ``device``: CUDA first when it is CUDA and available.

    Example:
        >>> onnx_providers("cpu")
        ['CPUExecutionProvider']
    """
    import onnxruntime as ort

    resolved = resolve_device(device)
    if resolved == "cpu":
        return ["CPUExecutionProvider"]
    if "CUDAExecutionProvider" in ort.get_available_providers():
        return ["CUDAExecutionProvider", "CPUExecutionProvider"]
    warnings.warn("onnxruntime has no CUDAExecutionProvider (install onnxruntime-gpu): "
                  "ONNX models run on CPU", RuntimeWarning, stacklevel=2)
    return ["CPUExecutionProvider"]


def onnx_session(path: "str | Path", device: str = DEFAULT_DEVICE, threads: "int | None" = 1):
    """An onnxruntime session of ``path`` on ``device`` (see :func:`onnx_providers`).

    Args:
        path: the ``.onnx`` file.
        device: ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"auto"``.
        threads: CPU threads per operator (1 keeps runs deterministic and polite on shared CPUs;
            ``None`` lets onnxruntime choose).
    """
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    if threads is not None:
        options.intra_op_num_threads = threads
    providers: list = onnx_providers(device)
    resolved = resolve_device(device)
    if providers[0] == "CUDAExecutionProvider" and ":" in resolved:
        providers[0] = ("CUDAExecutionProvider", {"device_id": int(resolved.split(":")[1])})
    return ort.InferenceSession(str(path), sess_options=options, providers=providers)


def module_device(module) -> "object":
    """The torch device of a module's parameters; CPU for a module without parameters and for
    duck-typed stand-ins that have no ``parameters()`` (test doubles, wrappers)."""
    import torch

    for parameter in getattr(module, "parameters", lambda: ())():
        return parameter.device
    return torch.device("cpu")


def check_batch_size(batch_size: int) -> int:
    """``batch_size`` as an int >= 1, else ``ValueError`` naming the fix.

    Example:
        >>> check_batch_size(16)
        16
    """
    if isinstance(batch_size, bool) or int(batch_size) != batch_size or batch_size < 1:
        raise ValueError(f"batch_size must be a whole number >= 1, got {batch_size!r}")
    return int(batch_size)
