"""Parquet files checked against a declared schema: built-repo shards and stored results rows.

``pyarrow`` opens any Parquet file and ``datasets`` casts what it can: a shard with an extra column
fails deep inside ``load_dataset`` without naming the shard, one without ``alpha_matte`` loads with
every matte ``None``, and a results file whose ``value`` column became text is compared as strings.
:func:`open_parquet` reads the footer only, checks the file's Arrow schema against a
:class:`ParquetSchema` (required columns and their types, optional ones, whether other columns are
allowed) and raises :class:`~hug_vis_dataset.readers.InputFileError` naming the file, the column and
the fix; a truncated or non-Parquet file (no footer, a footer that does not parse) is the same
one-line error. :func:`read_parquet` and :func:`read_parquet_frame` read the checked table.

A column's declared type is an Arrow type (compared exactly, ``large_`` variants and field order of a
struct aside) or one of the loose kinds of :data:`KINDS` for files pandas wrote, whose integer width
or all-null columns vary with the rows a batch held.

Example:
    >>> import os, tempfile
    >>> import pyarrow as pa, pyarrow.parquet as pq
    >>> rows = ParquetSchema("results rows", required={"clip_id": "string", "value": "number"},
    ...                      fix="delete it to recompute those clips")
    >>> path = os.path.join(tempfile.mkdtemp(), "rows.parquet")
    >>> pq.write_table(pa.table({"clip_id": ["a"], "value": ["0.5"]}), path)
    >>> try:
    ...     read_parquet(path, rows)
    ... except InputFileError as err:
    ...     print(err.where, "|", err.problem)
    column 'value' | holds string, expected a number
    >>> _ = open(path, "wb").write(b"PAR1 not really")
    >>> try:
    ...     open_parquet(path, rows)
    ... except InputFileError as err:
    ...     print(err.problem.split(" (")[0])
    is not a readable Parquet file
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Union

from .base import InputFileError

#: Loose column kinds: the Arrow types each accepts (an all-null column has type ``null``).
KINDS: dict[str, str] = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "bool": "true/false",
}

ColumnType = Union[str, Any]  # a KINDS key or a pyarrow.DataType


@dataclass(frozen=True)
class ParquetSchema:
    """What a kind of Parquet file must hold.

    Attributes:
        what: the kind of file, as errors name it (``"a shard of the 'matting' config"``).
        required: column -> type (a :data:`KINDS` key or a ``pyarrow.DataType``).
        optional: columns that may be absent; when present, of this type.
        extra_allowed: whether other columns may be present (refused for built-repo shards: the
            dataset card's ``features`` list exactly the declared ones).
        fix: what to do about a file that does not match.
    """

    what: str
    required: Mapping[str, ColumnType]
    optional: Mapping[str, ColumnType] = field(default_factory=dict)
    extra_allowed: bool = True
    fix: str = ""

    @classmethod
    def from_arrow(cls, schema: Any, what: str, fix: str) -> "ParquetSchema":
        """Exactly the columns of an Arrow schema, with their types, and nothing else."""
        return cls(what, {f.name: f.type for f in schema}, {}, False, fix)

    def columns(self) -> list[str]:
        """Declared column names (required, then optional)."""
        return list(self.required) + [c for c in self.optional if c not in self.required]


def _normal(kind: Any) -> Any:
    """``kind`` with ``large_`` variants made plain and dictionaries unwrapped, recursively."""
    import pyarrow as pa

    if pa.types.is_dictionary(kind):
        return _normal(kind.value_type)
    if pa.types.is_large_string(kind) or pa.types.is_string_view(kind):
        return pa.string()
    if pa.types.is_large_binary(kind) or pa.types.is_binary_view(kind):
        return pa.binary()
    if pa.types.is_large_list(kind) or pa.types.is_list(kind):
        return pa.list_(_normal(kind.value_type))
    if pa.types.is_struct(kind):
        return pa.struct(sorted(((kind.field(i).name, _normal(kind.field(i).type)) for i in range(kind.num_fields)),
                                key=lambda pair: pair[0]))
    return kind


def type_matches(actual: Any, declared: ColumnType) -> bool:
    """True when an Arrow type satisfies a declared type (see the module docstring).

    Example:
        >>> import pyarrow as pa
        >>> type_matches(pa.large_string(), pa.string()), type_matches(pa.int32(), pa.int64())
        (True, False)
        >>> type_matches(pa.int32(), "number"), type_matches(pa.null(), "string"), type_matches(pa.string(), "integer")
        (True, True, False)
    """
    import pyarrow as pa

    actual = _normal(actual)
    if not isinstance(declared, str):
        return actual.equals(_normal(declared))
    if pa.types.is_null(actual):
        return True
    if declared == "string":
        return pa.types.is_string(actual)
    if declared == "integer":
        return pa.types.is_integer(actual)
    if declared == "number":
        return pa.types.is_integer(actual) or pa.types.is_floating(actual)
    if declared == "bool":
        return pa.types.is_boolean(actual)
    raise ValueError(f"unknown column kind {declared!r}; expected one of {', '.join(KINDS)}")


def _type_name(kind: ColumnType) -> str:
    return KINDS[kind] if isinstance(kind, str) else str(_normal(kind))


def _first_line(err: BaseException) -> str:
    text = (str(err).strip().splitlines() or [type(err).__name__])[0]
    return text[:160]


def check_arrow_schema(arrow_schema: Any, declared: ParquetSchema, path: "str | Path") -> None:
    """Raise :class:`InputFileError` when ``arrow_schema`` does not match ``declared``.

    The first problem in column order is named: a missing required column, then a column of the
    wrong type, then a column that is not declared (when :attr:`ParquetSchema.extra_allowed` is off).
    """
    names = list(arrow_schema.names)
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise InputFileError(path, f"column {duplicated[0]!r}", "appears twice", declared.fix)
    present = {f.name: f.type for f in arrow_schema}
    for name, kind in declared.required.items():
        if name not in present:
            near = [n for n in names if n not in declared.required and n not in declared.optional]
            hint = f" (it has {', '.join(repr(n) for n in near[:3])} instead)" if near else ""
            raise InputFileError(path, f"column {name!r}", f"is missing: {declared.what} has it{hint}",
                                 declared.fix)
    for name in names:
        kind = declared.required.get(name, declared.optional.get(name))
        if kind is None:
            if not declared.extra_allowed:
                raise InputFileError(path, f"column {name!r}", f"is not a column of {declared.what}", declared.fix)
            continue
        if not type_matches(present[name], kind):
            raise InputFileError(path, f"column {name!r}",
                                 f"holds {_normal(present[name])}, expected {_type_name(kind)}", declared.fix)


def _damaged(path: "str | Path", err: BaseException, declared: "ParquetSchema | None") -> InputFileError:
    return InputFileError(path, "", f"is not a readable Parquet file (truncated or damaged: {_first_line(err)})",
                          declared.fix if declared is not None and declared.fix else "replace it with a complete copy")


def open_parquet(path: "str | Path", declared: "ParquetSchema | None", **options: Any):
    """A ``pyarrow.parquet.ParquetFile`` whose footer parsed and whose schema matches ``declared``.

    Args:
        path: the Parquet file.
        declared: the schema to check (None: only check that it is Parquet).
        options: passed to ``ParquetFile`` (``buffer_size``, ``pre_buffer``).

    Raises:
        InputFileError: missing, a folder, truncated or not Parquet, or not of ``declared``.
    """
    import pyarrow.parquet as pq

    path = Path(path)
    if not path.exists():
        raise InputFileError(path, "", "does not exist", "pass the file's right path")
    if path.is_dir():
        raise InputFileError(path, "", "is a folder, not a Parquet file", "pass the Parquet file inside it")
    try:
        handle = pq.ParquetFile(str(path), **options)
        schema = handle.schema_arrow
    except Exception as err:  # noqa: BLE001 - ArrowInvalid, OSError, thrift errors: all a damaged footer
        raise _damaged(path, err, declared) from None
    if declared is not None:
        check_arrow_schema(schema, declared, path)
    return handle


def read_parquet(path: "str | Path", declared: "ParquetSchema | None",
                 columns: "Iterable[str] | None" = None) -> Any:
    """The checked file as a ``pyarrow.Table`` (``columns``: only those, each declared or present).

    Raises:
        InputFileError: as :func:`open_parquet`, or a data page that does not decode.
    """
    handle = open_parquet(path, declared)
    wanted = None if columns is None else [c for c in columns if c in handle.schema_arrow.names]
    try:
        return handle.read(columns=wanted)
    except Exception as err:  # noqa: BLE001 - a corrupted page: the same "damaged file"
        raise _damaged(path, err, declared) from None


def read_parquet_frame(path: "str | Path", declared: "ParquetSchema | None",
                       columns: "Iterable[str] | None" = None) -> Any:
    """The checked file as a pandas DataFrame (what ``pd.read_parquet`` gives for a valid file).

    Example:
        >>> import os, tempfile, pandas as pd
        >>> path = os.path.join(tempfile.mkdtemp(), "r.parquet")
        >>> pd.DataFrame({"clip_id": ["a"], "value": [0.5]}).to_parquet(path)
        >>> read_parquet_frame(path, ParquetSchema("rows", {"value": "number"})).to_dict("list")
        {'clip_id': ['a'], 'value': [0.5]}
    """
    table = read_parquet(path, declared, columns)
    try:
        return table.to_pandas()
    except Exception as err:  # noqa: BLE001 - pandas metadata that does not fit the data
        raise _damaged(path, err, declared) from None


def read_parquet_codes(path: "str | Path", declared: "ParquetSchema | None", text: "Iterable[str]",
                       numbers: "Iterable[str]", optional: "Iterable[str]" = ()) -> dict:
    """The checked file's columns as numpy arrays, its ``text`` columns dictionary-encoded as ``(codes, names)``: a
    file of millions of rows naming a few dozen strings is read without one Python string per row. ``optional``
    number columns are read when the file has them (absent from the result otherwise).

    Raises:
        InputFileError: as :func:`open_parquet`, a data page that does not decode, or a text column with nulls.

    Example:
        >>> import os, tempfile, pandas as pd
        >>> path = os.path.join(tempfile.mkdtemp(), "f.parquet")
        >>> pd.DataFrame({"metric": ["mad", "mse", "mad"], "value": [1.0, 2.0, 3.0]}).to_parquet(path)
        >>> out = read_parquet_codes(path, None, ["metric"], ["value"])
        >>> out["metric"][0].tolist(), out["metric"][1], out["value"].tolist()
        ([0, 1, 0], ['mad', 'mse'], [1.0, 2.0, 3.0])
    """
    import numpy as np
    import pyarrow as pa

    text, numbers = list(text), list(numbers)
    handle = open_parquet(path, declared, read_dictionary=text)
    present = set(handle.schema_arrow.names)
    numbers += [name for name in optional if name in present and name not in numbers]
    try:
        table = handle.read(columns=text + numbers).unify_dictionaries()
    except Exception as err:  # noqa: BLE001 - a corrupted page: the same "damaged file"
        raise _damaged(path, err, declared) from None
    out: dict = {}
    for name in text:
        column = table.column(name)
        if column.null_count:
            raise InputFileError(Path(path), f"column {name!r}", "has empty (null) values", "rewrite the file")
        # One dictionary for every chunk (table.unify_dictionaries above), so codes of all chunks index it.
        chunks = [c if pa.types.is_dictionary(c.type) else c.dictionary_encode() for c in column.chunks]
        if not chunks:
            out[name] = (np.zeros(0, dtype=np.int64), [])
            continue
        parts = [c.indices.to_numpy(zero_copy_only=False) for c in chunks]
        codes = parts[0] if len(parts) == 1 else np.concatenate(parts)  # the indices' own width (int32): no copy
        out[name] = (codes, [str(v) for v in chunks[0].dictionary.to_pylist()])
    for name in numbers:
        out[name] = table.column(name).to_numpy()
    return out


__all__ = ["KINDS", "ParquetSchema", "check_arrow_schema", "open_parquet", "read_parquet", "read_parquet_codes",
           "read_parquet_frame", "type_matches"]
