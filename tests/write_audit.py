"""Run ``hugvis`` (or a ``-c`` snippet) with a Python audit hook that records every write outside the allowed roots.

Used by ``tests/test_no_stray_writes.py`` in a real subprocess::

    python tests/write_audit.py LOG ALLOWED[:ALLOWED...] -- hugvis-args...
    python tests/write_audit.py LOG ALLOWED[:ALLOWED...] -c CODE

The first allowed root is the output the user named (``--out``): writes there are logged too, as
``{"event", "path", "named": true}``, and at the end the outputs the process claimed through the output guard
(:func:`hug_vis_dataset.outputs.claimed`) as ``{"claimed": [...]}``, so a test can check that every write into
the named place went through a claim.

Every ``open`` for writing (``w``, ``a``, ``x``, ``+`` modes; ``O_WRONLY``/``O_RDWR``/``O_CREAT`` flags) and
every ``os.rename/replace/remove/rmdir/mkdir/link/symlink/truncate/utime/chmod`` and ``shutil`` copy/move whose
path lies outside the allowed roots is appended to LOG as one JSON line ``{"event", "path"}``. The hook sees
what Python does; writes by C libraries and child processes are caught by the snapshot and the read-only mount of
the test instead.
"""

from __future__ import annotations

import json
import os
import sys

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
# event -> (index of each path argument, index of its dir_fd argument or None)
_PATH_EVENTS = {"os.remove": ((0, 1),), "os.rmdir": ((0, 1),), "os.mkdir": ((0, 2),), "os.truncate": ((0, None),),
                "os.utime": ((0, None),), "os.chmod": ((0, 2),), "os.chown": ((0, 3),),
                "os.rename": ((0, 2), (1, 3)), "os.replace": ((0, 2), (1, 3)), "os.link": ((1, 3),),
                "os.symlink": ((1, 2),), "shutil.copyfile": ((1, None),), "shutil.copytree": ((1, None),),
                "shutil.move": ((0, None), (1, None)), "shutil.rmtree": ((0, 1),)}
_SAFE = ("/dev/", "/proc/")


def _install(log: str, allowed: "list[str]"):
    roots = [os.path.realpath(a) for a in allowed if a]
    named = roots[0] if allowed and allowed[0] else None
    handle = open(log, "a", encoding="utf-8", buffering=1)  # opened before the hook: not recorded

    def outside(path, dir_fd=None) -> "str | None":
        if isinstance(path, int) or path is None:
            return None  # a file descriptor: its open was checked
        try:
            name = os.fsdecode(path)
            if isinstance(dir_fd, int) and dir_fd >= 0 and not os.path.isabs(name):  # shutil.rmtree's fd walk
                name = os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), name)
            full = os.path.realpath(name)
        except (TypeError, ValueError, OSError):
            return None
        if full.startswith(_SAFE) or any(full == r or full.startswith(r + os.sep) for r in roots):
            return None
        if "__pycache__" in full.split(os.sep):
            return None  # the interpreter's (and numba's) compiled code next to the library, not data
        return full

    def hook(event: str, args: tuple) -> None:
        paths = ()
        if event == "open":
            path, mode, flags = (tuple(args) + (None, None, None))[:3]
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                mode is None and isinstance(flags, int) and flags & _WRITE_FLAGS)
            paths = ((path, None),) if writing else ()
        elif event in _PATH_EVENTS:
            paths = tuple((args[i], args[fd] if fd is not None and fd < len(args) else None)
                          for i, fd in _PATH_EVENTS[event] if i < len(args))
        for path, dir_fd in paths:
            full = outside(path, dir_fd)
            if full is not None:
                handle.write(json.dumps({"event": event, "path": full}) + "\n")
            elif named is not None and not isinstance(path, int) and path is not None:
                try:
                    where = os.path.realpath(os.fsdecode(path))
                except (TypeError, ValueError):
                    continue
                if where == named or where.startswith(named + os.sep):
                    handle.write(json.dumps({"event": event, "path": where, "named": True}) + "\n")

    sys.addaudithook(hook)
    return handle


def _claims(handle) -> None:
    try:
        from hug_vis_dataset.outputs import claimed
    except ImportError:
        return
    handle.write(json.dumps({"claimed": [str(p) for p in claimed()]}) + "\n")


def main(argv: "list[str]") -> int:
    log, allowed, rest = argv[0], argv[1].split(os.pathsep), argv[2:]
    handle = _install(log, allowed)
    try:
        if rest[:1] == ["-c"]:
            sys.argv = ["-c"]
            exec(compile(rest[1], "<audited>", "exec"), {"__name__": "__main__"})
            return 0
        if rest[:1] == ["--"]:
            rest = rest[1:]
        from hug_vis_dataset.cli import main as hugvis

        return int(hugvis(rest) or 0)
    finally:
        _claims(handle)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
