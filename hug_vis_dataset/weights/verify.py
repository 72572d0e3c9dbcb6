"""Whether a pretrained file can be used here: pinned hash, loadable format, status lines.

:func:`check_loadable` is the one answer every caller uses (the scorers per metric, ``hugvis
weights verify``, reports through :func:`missing_note`): None when the file is usable, else one
line naming the file, what is wrong and the command that fixes it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from .registry import WeightsDirError, WeightsMissingError, download_command, get_spec
from .resolve import PINNED_HASHES, find_weight

_TORCH_SUFFIXES = (".pt", ".pth", ".model", ".ckpt")
_FORMAT_CACHE: dict[tuple[str, int, int], "str | None"] = {}


def format_problem(path: "str | Path") -> "str | None":
    """Why a weights file does not load as what its suffix says, or None when it does.

    ``.onnx`` must parse as an ONNX model (``onnx``, else ``onnxruntime``); ``.pt``/``.pth``/
    ``.model``/``.ckpt`` must unpickle with ``torch.load(weights_only=True)``: what our
    loaders do, and it never runs code from the file. Other suffixes are not checked. The answer
    is cached by path, size and mtime.

    Example:
        >>> import tempfile, os
        >>> bad = os.path.join(tempfile.mkdtemp(), "det.onnx"); _ = open(bad, "wb").write(b"garbage")
        >>> format_problem(bad).startswith("not a valid ONNX model")
        True
    """
    path = Path(path)
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _FORMAT_CACHE:
        _FORMAT_CACHE[key] = _format_problem(path)
    return _FORMAT_CACHE[key]


def _format_problem(path: Path) -> "str | None":
    suffix = path.suffix.lower()
    if suffix == ".onnx":
        try:
            try:
                import onnx
            except ImportError:
                import onnxruntime as ort

                ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
            else:
                onnx.load_model(str(path), load_external_data=False)
        except Exception as err:  # noqa: BLE001 - any parser failure means "not a model"
            return f"not a valid ONNX model ({type(err).__name__}: {_first_line(err)})"
        return None
    if suffix in _TORCH_SUFFIXES:
        try:
            import torch
        except ImportError:  # pragma: no cover - torch is a core dependency
            return None
        try:
            torch.load(str(path), map_location="cpu", weights_only=True)
        except Exception as err:  # noqa: BLE001 - UnpicklingError, RuntimeError, EOFError ...
            return f"not a loadable torch checkpoint ({type(err).__name__}: {_first_line(err)})"
        return None
    return None


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0][:200] if text else ""


def check_loadable(name: str) -> "str | None":
    """Whether the weights ``name`` can be used here: None when they can, else one line saying
    why (which file, what is wrong, how to fix it).

    Checks, in order: the file is found (an explicit override must point at a file, and
    ``$HUGVIS_WEIGHTS_DIR``, when set, at a folder: that line names the variable, not the file); it matches
    the pinned sha256 when one is pinned; otherwise it loads as its format (:func:`format_problem`).
    The scorers call this per metric, so one broken file disables only the metrics that need it.

    Example:
        >>> check_loadable("lpips_alex_linear") is None
        True
    """
    spec = get_spec(name)
    try:
        found = find_weight(name)
    except WeightsDirError as err:  # one setting behind every file: its line names the variable and the fix
        return str(err)
    except WeightsMissingError as err:
        detail = str(err).splitlines()[-1].strip()
        return f"weights {name!r}: {detail}; point it at the file {spec.filename} or unset it"
    if found is None:
        if spec.source == "wheel":  # one line: the file, where it comes from, the command and the override
            from .registry import GROUPS, env_var

            group = next((g for g, members in GROUPS.items() if name in members), name)
            return (f"weights {name!r} ({spec.filename}, from {spec.origin()}) missing: run "
                    f"`{download_command([group])}` or set {env_var(name)}=/path/to/{spec.filename}")
        return f"weights {name!r} ({spec.filename}) missing: run `{download_command([name])}`"
    path = found[0]
    if spec.sha256 is not None:
        actual = PINNED_HASHES.sha256(path)
        if actual != spec.sha256:
            return (f"weights {name!r}: hash mismatch: {path} has sha256 {actual[:12]}..., pinned "
                    f"{spec.sha256[:12]}...; replace the file ({download_command([name])})")
        return None  # the pinned bytes are known to load
    problem = format_problem(path)
    if problem:
        return f"weights {name!r}: {path} is {problem}; replace the file ({download_command([name])})"
    return None


@dataclass(frozen=True)
class WeightStatus:
    """What ``hugvis weights list/verify`` prints for one file.

    ``hash_status``: ``ok``, ``mismatch``, ``no pinned hash`` (format checked and loadable),
    ``unloadable`` (unpinned and not loadable), ``not checked``, ``missing``, or
    ``bad override`` (an explicit path / variable points at nothing). ``problem`` is
    :func:`check_loadable`'s line when the file cannot be used.
    """

    name: str
    path: "Path | None"
    found_by: str
    hash_status: str
    metrics: tuple[str, ...] = field(default_factory=tuple)
    problem: str = ""

    @property
    def failed(self) -> bool:
        """A present or explicitly requested file that cannot be used."""
        return self.hash_status in ("mismatch", "unloadable", "bad override")


def weight_status(name: str, check: bool = True) -> WeightStatus:
    """Presence (and, with ``check``, hash agreement or loadability) of one registered file."""
    spec = get_spec(name)
    try:
        found = find_weight(name)
    except WeightsMissingError:
        return WeightStatus(name, None, "", "bad override", spec.metrics, check_loadable(name) or "")
    if found is None:
        return WeightStatus(name, None, "", "missing", spec.metrics)
    if not check:
        return WeightStatus(name, found[0], found[1], "not checked", spec.metrics)
    problem = check_loadable(name) or ""
    if spec.sha256 is not None:
        state = "mismatch" if problem else "ok"
    else:
        state = "unloadable" if problem else "no pinned hash"
    return WeightStatus(name, found[0], found[1], state, spec.metrics, problem)


def is_available(name: str) -> bool:
    """True when the file is present locally, matches its pinned hash and loads."""
    return check_loadable(name) is None


def missing_note(names: Iterable[str]) -> "str | None":
    """Why a metric needing ``names`` cannot run here, with the command that fixes it; None when
    every file is available. The one wording used by reports, demos and the scoring summary:
    absent files get ``needs weights: run `hugvis weights download ...```; a file that is present
    but broken (hash mismatch, not loadable, bad override) gets :func:`check_loadable`'s line.

    Example:
        >>> missing_note(["lpips_alex_linear"]) is None
        True
    """
    absent, broken = [], []
    for name in names:
        problem = check_loadable(name)
        if problem is None:
            continue
        if weight_status(name, check=False).hash_status == "missing":
            absent.append(name)
        else:
            broken.append(problem)
    # dict.fromkeys: a bad $HUGVIS_WEIGHTS_DIR gives every file the same line; say it once
    notes = list(dict.fromkeys(broken)) + ([f"needs weights: run `{download_command(absent)}`"] if absent else [])
    return "; ".join(notes) if notes else None
