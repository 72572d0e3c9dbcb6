"""The one validated reader per file kind the toolkit reads.

Every file the toolkit opens (release CSV/JSON/JSONL, media headers, Parquet shards, results rows,
summaries, ratings, studies, requests, caches) is read through one function of this package, which
checks the file's structure against a declared schema and raises :class:`InputFileError` (a
:class:`~hug_vis_dataset.errors.HugvisError`) naming the file, the line, row or column, and the fix.
The property every reader keeps, fuzzed in ``tests/test_readers_*.py``: a damaged input (truncated at
any byte, extended, duplicated keys, extra/missing/renamed columns, wrong types, BOM/CRLF, a length
that lies) gives either that one-line error or the same result as the clean input; never a traceback,
never a silent change.

Modules:
    base: :class:`InputFileError` and the location helpers every reader uses.
    json_files: strict JSON / JSONL (duplicate keys, NaN/Infinity, trailing data are errors).
    csv_files: CSV tables against a declared header (columns, field counts, quotes, a cut last line).
    parquet_files: Parquet footers against a declared schema (built-repo shards, stored results rows).
    media_files: media headers against their payload (WAV chunk sizes, a video's frame count).
"""

from .base import InputFileError
# The readers other packages use most, on the face: a caller names the package, not its rooms.
from .json_files import iter_json_lines, read_json, require_fields
from .parquet_files import ParquetSchema, open_parquet, read_parquet, read_parquet_codes, read_parquet_frame

__all__ = ["InputFileError", "ParquetSchema", "iter_json_lines", "open_parquet", "read_json", "read_parquet",
           "read_parquet_codes", "read_parquet_frame", "require_fields"]
