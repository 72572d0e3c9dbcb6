"""Check and describe the release artifacts: metadata, `twine check`, and what the wheel contains.

Usage:
    python scripts/release_check.py                  # build sdist + wheel into a temporary folder first
    python scripts/release_check.py --dist dist      # check what `python -m build` already wrote
    python scripts/release_check.py --dist dist --tag v0.1.0   # also: the tag names the built version

Prints the wheel's size and a listing summary (files and bytes per folder, every non-Python file),
the sdist's size, the metadata (version, Python, extras, entry points), and whether the wheel holds
exactly this checkout's library files. Exits non-zero on any problem.
"""

from __future__ import annotations

import argparse
import email.parser
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections import defaultdict
from pathlib import Path, PurePosixPath

REPO = Path(__file__).resolve().parents[1]


def _kib(size: int) -> str:
    return f"{size / 1024:.1f} KiB"


def wheel_summary(wheel: Path) -> tuple[dict, list[str]]:
    """Metadata fields and printable lines describing the wheel's contents."""
    with zipfile.ZipFile(wheel) as archive:
        infos = [i for i in archive.infolist() if not i.is_dir()]
        meta_name = next(i.filename for i in infos if i.filename.endswith(".dist-info/METADATA"))
        meta = email.parser.Parser().parsestr(archive.read(meta_name).decode("utf-8"))
        entry_points = next((archive.read(i.filename).decode() for i in infos
                             if i.filename.endswith(".dist-info/entry_points.txt")), "")
    per_folder: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    data_files = []
    for info in infos:
        path = PurePosixPath(info.filename)
        folder = str(path.parent)
        per_folder[folder][0] += 1
        per_folder[folder][1] += info.file_size
        if path.suffix != ".py" and ".dist-info" not in folder:
            data_files.append(f"    {info.filename} ({_kib(info.file_size)})")
    unpacked = sum(i.file_size for i in infos)
    lines = [f"wheel {wheel.name}: {_kib(wheel.stat().st_size)} compressed, {_kib(unpacked)} unpacked, "
             f"{len(infos)} files"]
    lines += [f"  {folder}/: {count} files, {_kib(size)}" for folder, (count, size) in sorted(per_folder.items())]
    lines += ["  data files (non-Python, read at run time):"] + (data_files or ["    none"])
    fields = {
        "Name": meta["Name"], "Version": meta["Version"], "Requires-Python": meta["Requires-Python"],
        "Provides-Extra": ", ".join(meta.get_all("Provides-Extra") or []),
        "Requires-Dist": f"{len(meta.get_all('Requires-Dist') or [])} entries",
        "entry points": " ".join(line.strip() for line in entry_points.splitlines() if "=" in line),
    }
    return fields, lines


def sdist_summary(sdist: Path) -> list[str]:
    with tarfile.open(sdist) as archive:
        members = [m for m in archive.getmembers() if m.isfile()]
    tops = sorted({PurePosixPath(m.name).parts[1] for m in members if len(PurePosixPath(m.name).parts) > 1})
    return [f"sdist {sdist.name}: {_kib(sdist.stat().st_size)}, {len(members)} files; top level: {', '.join(tops)}"]


def main(argv: "list[str] | None" = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dist", type=Path, help="folder with one sdist and one wheel (default: build them)")
    parser.add_argument("--tag", help="release tag that must equal v<version>")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="hugvis-release-") as tmp:
        dist = args.dist
        if dist is None:
            dist = Path(tmp)
            subprocess.run([sys.executable, "-m", "build", "--outdir", str(dist), str(REPO)], check=True,
                           capture_output=True)
        wheels, sdists = sorted(dist.glob("*.whl")), sorted(dist.glob("*.tar.gz"))
        if len(wheels) != 1 or len(sdists) != 1:
            print(f"release check: expected one wheel and one sdist in {dist}, found "
                  f"{[p.name for p in wheels + sdists]}", file=sys.stderr)
            return 1
        problems = []
        twine = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", str(wheels[0]), str(sdists[0])],
                               capture_output=True, text=True)
        if twine.returncode:
            problems.append(f"twine check failed: {twine.stdout.strip()} {twine.stderr.strip()}")
        fields, lines = wheel_summary(wheels[0])
        print("\n".join(f"{key}: {value}" for key, value in fields.items()))
        print("\n".join(lines + sdist_summary(sdists[0])))
        print(f"twine check --strict: {'passed' if not twine.returncode else 'FAILED'}")
        if args.tag and args.tag != f"v{fields['Version']}":
            problems.append(f"tag {args.tag} does not name the built version {fields['Version']} (expected "
                            f"v{fields['Version']}; the version lives in hug_vis_dataset/__init__.py)")
        try:
            from hug_vis_dataset.publish import wheel_mismatches
        except ImportError as err:  # the library's dependencies are not installed here
            print(f"wheel vs source: not compared ({err})")
        else:
            stale = wheel_mismatches(wheels[0], REPO / "hug_vis_dataset")
            print(f"wheel vs source: {'identical' if not stale else f'{len(stale)} difference(s)'}")
            problems += stale
    for problem in problems:
        print(f"release check: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
