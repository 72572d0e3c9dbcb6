"""Files the Space serves wherever they are: Gradio serves only files inside its ``allowed_paths`` (the release, the
work folder, the store) and answers any other with an error badge. A run scored by ``hugvis evaluate`` keeps its
predictions wherever they were (the built-in baselines under ``demo_out/baselines``, a user's folder), so the viewer
would fail on them whenever the Space is started from another folder; such a file is served from a copy in the work
folder's media cache instead.

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> outside, work = Path(tempfile.mkdtemp()), Path(tempfile.mkdtemp())
    >>> _ = (outside / "a.wav").write_bytes(b"RIFF")
    >>> copy = Path(served_file(outside / "a.wav", [str(work)], work))
    >>> copy.is_relative_to(work), copy.name, copy.read_bytes()
    (True, 'a.wav', b'RIFF')
    >>> served_file(copy, [str(work)], work) == str(copy)      # inside the allowed folders: as it is
    True
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import Sequence

#: The work folder's cache of copies (a toolkit cache: its entries are the toolkit's, removed with the folder).
MEDIA_CACHE = "served-media"


def served_file(path: "str | Path | None", allowed: Sequence[str], work_dir: "str | Path") -> "str | None":
    """``path`` as a file the app may serve: itself when it lies inside one of the ``allowed`` folders (or is no
    file), else a copy in ``work_dir``'s media cache, made once per file version (path, size and mtime)."""
    from ..outputs import mark_cache, write_file

    if path is None:
        return None
    source = Path(path).resolve()
    if any(source.is_relative_to(Path(root).resolve()) for root in allowed) or not source.is_file():
        return str(path)
    stat = source.stat()
    key = hashlib.sha256(f"{source}\0{stat.st_size}\0{stat.st_mtime_ns}".encode()).hexdigest()[:24]
    target = mark_cache(Path(work_dir) / MEDIA_CACHE) / key / source.name
    if not target.is_file():
        target.parent.mkdir(exist_ok=True)
        with source.open("rb") as handle:
            write_file(target, lambda out: shutil.copyfileobj(handle, out))
    return str(target)
