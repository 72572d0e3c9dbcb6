"""What a stored run is bound to: its predictions, its dataset and its metric definitions.

A re-run may keep a clip's stored rows only when nothing that made them has changed. Three
fingerprints decide it:

* **the clip's input** (:func:`clip_fingerprint`, stored in every row as ``input_sha256``): the
  sha256 of the prediction file(s) of that clip, or of the answers for emotion. Files are hashed
  through a :class:`~hug_vis_dataset.hashing.DigestCache` kept with the run, so a file whose size
  and mtime are unchanged is not read again (the fast pre-check), and a changed file always is.
* **the dataset** (:func:`dataset_key`): the reference source's content fingerprint (checksums,
  clip count, Hub id and revision), without where it lies on disk.
* **the metric definitions** (:func:`metric_definitions`): per metric, a digest of its catalog
  row (definition, range, scale, protocol), the pinned sha256 of its weights and the library
  version.

The run's :class:`RunBinding` (``run.json``) records the predictions root, the dataset key, the
definitions and the library version. The re-run rule is :func:`reusable_metrics` (per clip and
metric) and :func:`reusable_clips` (clips kept whole). What a run was computed with, recorded in its summary's
provenance beside the binding: :func:`package_versions` and :func:`weights_used`.

Example:
    >>> import tempfile, os
    >>> folder = tempfile.mkdtemp(); path = os.path.join(folder, "a.wav")
    >>> _ = open(path, "wb").write(b"RIFF")
    >>> from hug_vis_dataset.hashing import DigestCache
    >>> first = clip_fingerprint((path,), None, DigestCache())
    >>> first == clip_fingerprint((path,), None, DigestCache()), len(first)
    (True, 64)
    >>> _ = open(path, "wb").write(b"RIFX")
    >>> clip_fingerprint((path,), None, DigestCache()) == first    # changed bytes, changed fingerprint
    False
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..errors import InputFileError
from ..hashing import DigestCache
from ..readers import read_json

RUN_BINDING_FILE = "run.json"
DIGESTS_FILE = ".input-digests.json"  # the pre-check cache; local to a machine, never published
INPUT_COLUMN = "input_sha256"
BINDING_SCHEMA = 1
#: Keys of a reference source's fingerprint that say where it is, not what it holds.
_LOCATION_KEYS = ("path", "shards_verified")


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str, separators=(",", ":")).encode("utf-8")


def _entry_digest(entry: str, cache: DigestCache) -> str:
    """sha256 of one prediction entry: a file's bytes, a folder's files (by relative name), or the
    entry's text when it is not a path (a row locator into the dataset, covered by the dataset key)."""
    path = Path(entry)
    if path.is_file():
        return _file_digest(path, cache)
    if path.is_dir():
        digest = hashlib.sha256(b"folder\0")
        for member in sorted(p for p in path.rglob("*") if p.is_file()):
            digest.update(member.relative_to(path).as_posix().encode("utf-8") + b"\0")
            digest.update(_file_digest(member, cache).encode("ascii") + b"\0")
        return digest.hexdigest()
    return hashlib.sha256(b"text\0" + str(entry).encode("utf-8")).hexdigest()


def _file_digest(path: Path, cache: DigestCache) -> str:
    """A prediction file's sha256 within a media file's limit (regular_files.py); a file larger than any clip's
    is fingerprinted by its size and time, never read: the scorer refuses it, naming it, and the clip fails."""
    try:
        return cache.sha256(path, kind="media file")
    except InputFileError as err:
        st = path.stat()
        return hashlib.sha256(f"refused\0{err.problem}\0{st.st_size}\0{st.st_mtime_ns}".encode()).hexdigest()


def clip_fingerprint(prediction: "Iterable[str]", payload: Any, cache: DigestCache) -> str:
    """sha256 of what a clip's rows are computed from (``""`` when the clip has no prediction).

    Args:
        prediction: the clip's prediction entries (a duplicate has several: all are hashed).
        payload: task data other than files (emotion answers); hashed instead of the shared file.
        cache: digests by path, size and mtime.
    """
    entries = tuple(prediction)
    if payload is not None:
        return hashlib.sha256(b"payload\0" + _canonical(payload)).hexdigest()
    if not entries:
        return ""
    digest = hashlib.sha256(b"prediction\0")
    for entry in entries:
        digest.update(Path(str(entry)).name.encode("utf-8") + b"\0" + _entry_digest(str(entry), cache).encode() + b"\0")
    return digest.hexdigest()


def dataset_key(fingerprint: Mapping[str, Any]) -> str:
    """sha256 of a reference source's fingerprint without its location (a moved copy is the same dataset).

    Example:
        >>> dataset_key({"kind": "release", "path": "/a", "metadata_sha256": "x"}) == \\
        ...     dataset_key({"kind": "release", "path": "/b", "metadata_sha256": "x"})
        True
    """
    content = {k: v for k, v in fingerprint.items() if k not in _LOCATION_KEYS}
    return hashlib.sha256(_canonical(content)).hexdigest()


def library_version() -> str:
    from .. import __version__

    return __version__


def metric_definitions(metrics: Iterable[str]) -> dict[str, str]:
    """Per metric, a digest of everything that defines its value here (see the module docstring).

    Example:
        >>> sorted(metric_definitions(["mad", "mse"]))
        ['mad', 'mse']
    """
    from .. import catalog, weights

    out = {}
    for name in metrics:
        spec = catalog.spec(name)
        pinned = [(w, weights.get_spec(w).sha256) for w in spec.weights]
        out[name] = hashlib.sha256(_canonical({
            "name": spec.name, "definition": spec.definition, "value_range": list(spec.value_range),
            "paper_scale": spec.paper_scale, "protocol": spec.protocol, "mode": spec.mode, "weights": pinned,
            "library": library_version()})).hexdigest()[:16]
    return out


# ----------------------------------------------------------------------------- provenance
#: The packages whose versions a summary records (they can change a value).
PROVENANCE_PACKAGES = ("hug-vis", "numpy", "scipy", "pandas", "pyarrow", "torch", "opencv-python-headless", "av",
                       "soundfile", "librosa", "scikit-image", "lpips", "resemblyzer", "speechmos", "onnxruntime",
                       "ray", "datasets")


def package_versions(names: Iterable[str] = PROVENANCE_PACKAGES) -> dict[str, "str | None"]:
    """Installed versions of the packages that can change a value (None when absent).

    Example:
        >>> versions = package_versions(["numpy", "no-such-package"])
        >>> sorted(versions), versions["no-such-package"]
        (['no-such-package', 'numpy', 'python'], None)
    """
    from importlib import metadata

    out = {"python": sys.version.split()[0]}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def weights_used(task: str, metrics: Iterable[str]) -> dict[str, dict]:
    """sha256 and path of every pretrained file behind the metrics that ran.

    Digests come from the weights' process-wide cache: the availability check before scoring has
    already hashed the pinned files (some are hundreds of MB). ``task`` names the run the metrics are of.

    Example:
        >>> weights_used("matting", ["mad", "mse"])  # no network behind them
        {}
    """
    from .. import catalog, weights

    out = {}
    for name in catalog.weights_of(metrics):
        status = weights.weight_status(name, check=False)
        if status.path is not None:
            out[name] = {"path": str(status.path), "sha256": weights.PINNED_HASHES.sha256(status.path),
                         "pinned_sha256": weights.get_spec(name).sha256}
    return out


@dataclass(frozen=True)
class RunBinding:
    """What one stored run was computed from (``run.json``)."""

    task: str
    model: str
    predictions: str  # the predictions root, resolved (or the reference-derived mode's name)
    dataset: str  # :func:`dataset_key`
    definitions: dict = field(default_factory=dict)  # metric -> digest
    library: str = ""
    schema: int = BINDING_SCHEMA

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    @classmethod
    def read(cls, folder: "str | Path") -> "RunBinding | None":
        """The binding stored in ``folder``, or None when there is none or it cannot be read
        (an unreadable binding binds nothing: every clip is rescored)."""
        path = Path(folder) / RUN_BINDING_FILE
        try:
            data = read_json(path)  # strict: a duplicated "dataset" binds nothing, it is not "the last one"
            binding = cls(**{k: data[k] for k in ("task", "model", "predictions", "dataset")},
                          definitions=dict(data.get("definitions") or {}), library=str(data.get("library", "")),
                          schema=int(data.get("schema", 0)))
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return None
        if not all(isinstance(v, str) for v in (binding.task, binding.model, binding.predictions, binding.dataset)):
            return None
        return binding


def reusable_metrics(rows, stored: "RunBinding | None", current: RunBinding, fingerprints: Mapping[str, str],
                     clip_metrics: Iterable[str], retry_failed: bool = True) -> dict[str, frozenset]:
    """Per clip, the metrics whose stored rows a re-run keeps; every other requested metric of the
    clip is computed again (and a stored metric no longer requested is dropped).

    A metric's rows of a clip are kept when the stored run is bound to the same dataset, the metric
    is requested now (``clip_metrics``) with an unchanged definition, each of those rows names the
    current input fingerprint of the clip, and (with ``retry_failed``) none of them failed. A run
    that adds metrics (``--metrics``) therefore computes only the added ones; one whose inputs or
    dataset changed keeps nothing.

    Example:
        >>> import pandas as pd
        >>> b = RunBinding("matting", "m", "/p", "d", {"mad": "1", "mse": "1"})
        >>> rows = pd.DataFrame({"clip_id": ["a", "b"], "metric": ["mad", "mad"], "status": ["ok", "ok"],
        ...                      "input_sha256": ["x", "y"]})
        >>> {c: sorted(m) for c, m in reusable_metrics(rows, b, b, {"a": "x", "b": "changed"}, ["mad", "mse"]).items()}
        {'a': ['mad']}
    """
    if stored is None or stored.dataset != current.dataset or len(rows) == 0 or INPUT_COLUMN not in rows:
        return {}
    wanted = set(clip_metrics)
    same_definition = {m for m in wanted if stored.definitions.get(m) == current.definitions.get(m)}
    keep: dict[str, frozenset] = {}
    for (clip, metric), part in rows.groupby(["clip_id", "metric"], sort=False):
        if metric not in same_definition:
            continue
        if (part[INPUT_COLUMN] != fingerprints.get(clip, "")).any():
            continue
        if retry_failed and (part["status"] != "ok").any():
            continue
        keep[clip] = keep.get(clip, frozenset()) | {metric}
    return keep


def reusable_clips(rows, stored: "RunBinding | None", current: RunBinding, fingerprints: Mapping[str, str],
                   clip_metrics: Iterable[str], retry_failed: bool = True) -> set[str]:
    """The clips whose stored rows a re-run keeps whole: every metric computed now is kept
    (:func:`reusable_metrics`) and the clip has no stored metric beyond them.

    Example:
        >>> import pandas as pd
        >>> b = RunBinding("matting", "m", "/p", "d", {"mad": "1"})
        >>> rows = pd.DataFrame({"clip_id": ["a", "b"], "metric": ["mad", "mad"], "status": ["ok", "ok"],
        ...                      "input_sha256": ["x", "y"]})
        >>> sorted(reusable_clips(rows, b, b, {"a": "x", "b": "changed"}, ["mad"]))
        ['a']
    """
    wanted = frozenset(clip_metrics)
    kept = reusable_metrics(rows, stored, current, fingerprints, wanted, retry_failed)
    if not kept:
        return set()
    stored_metrics = rows.groupby("clip_id", sort=False)["metric"].agg(frozenset)
    return {clip for clip, metrics in kept.items() if metrics == wanted and stored_metrics[clip] == wanted}


__all__ = ["DIGESTS_FILE", "INPUT_COLUMN", "PROVENANCE_PACKAGES", "RUN_BINDING_FILE", "RunBinding", "clip_fingerprint",
           "dataset_key", "library_version", "metric_definitions", "package_versions", "reusable_clips",
           "reusable_metrics", "weights_used"]
