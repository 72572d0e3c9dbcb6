"""Helpers of the hostile-input tests: run ``hugvis`` in-process and check its one-line error."""

from __future__ import annotations

import hashlib
from pathlib import Path


def run_cli(capsys, *args) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of ``hugvis ARGS``; argparse's own exits are caught too."""
    from hug_vis_dataset.cli import main

    try:
        code = main([str(a) for a in args])
    except SystemExit as done:  # argparse rejects an option
        code = done.code
    out, err = capsys.readouterr()
    return int(code), out, err


def assert_one_line_error(result: tuple[int, str, str], code: int, *needles: str) -> str:
    """The run exited ``code`` with exactly one ``error:`` line holding every needle, no traceback."""
    status, out, err = result
    assert "Traceback" not in out + err, out + err
    assert status == code, (status, out, err)
    lines = [line for line in err.splitlines() if "error:" in line]
    assert len(lines) == 1, err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def snapshot(folder: "str | Path") -> dict[str, str]:
    """Every file under ``folder`` (links not followed) -> sha256 of its bytes."""
    folder = Path(folder)
    if not folder.exists():
        return {}
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and not p.is_symlink()}
