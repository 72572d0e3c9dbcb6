"""The wheels the device check carries to the GPU machine, which has no PyPI: prepared here, installed there.

Packages the GPU machine lacks travel as wheels in ``.whl`` (``--prepare-wheels``, run where PyPI is reachable:
the exact pins of ``constraints.txt``, cp312 manylinux; speechmos as its two DNSMOS files); at start the check
installs those whose module is missing into a temporary folder. What cannot travel (:data:`NOT_CARRIED`) is said
in the summary, with what the check does instead.

Example:
    >>> canonical("torch_fidelity")
    'torch-fidelity'
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

#: Distributions the GPU machine's image lacks (/work/.library/device/KINDS.md) that the check imports,
#: with the module that shows each is installed; versions come from constraints.txt.
CARRIED = {"av": "av", "lpips": "lpips", "torch_fidelity": "torch_fidelity", "Resemblyzer": "resemblyzer",
           "webrtcvad-wheels": "webrtcvad", "librosa": "librosa", "audioread": "audioread", "decorator": "decorator",
           "soundfile": "soundfile", "soxr": "soxr", "pooch": "pooch", "platformdirs": "platformdirs",
           "cffi": "_cffi_backend", "pycparser": "pycparser"}


#: speechmos travels as the two files the library reads (registry name -> path in its wheel): its wheel is
#: 9.4 MB, mostly other models (AECMOS, PLCMOS), and would not fit beside av and Resemblyzer.
DNSMOS_FILES = {"dnsmos_sig_bak_ovr": "speechmos/dnsmos_models/sig_bak_ovr.onnx",
                "dnsmos_p808": "speechmos/dnsmos_models/model_v8.onnx"}


#: What does not travel, measured with ``pip download`` on 2026-12-04, and what the check does instead.
NOT_CARRIED = {
    "ray": "ray 2.60.0's cp312 wheel is 79.3 MB, over the 64 MiB a device call carries: the Ray part runs "
           "where ray is installed; otherwise the local process pool (--num-proc 2) on the GPU stands in",
    "onnxruntime-gpu": "PyPI has no onnxruntime-gpu 1.32.0 wheel (1.31.1 is 255.6 MB): the ONNX models (SCRFD/ArcFace "
                       "stand-ins, DNSMOS) run on the machine's CPU onnxruntime, and each row names the provider used",
    "datasets, evaluate": "imported only by the evaluate modules' door and dataset repos; the check uses neither",
    "torchcodec": "reads dataset-repo references only; the check reads a release tree",
}


#: The wheels' budget: a device call carries 64 MiB in all, the tree itself about 4.5 MB.
WHEEL_BUDGET_MIB = 58.0


WHEEL_PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64",
                   "manylinux1_x86_64")


def canonical(name: str) -> str:
    """PEP 503 name: ``Resemblyzer`` and ``torch_fidelity`` as pip compares them.

    Example:
        >>> canonical("torch_fidelity"), canonical("Resemblyzer"), canonical("webrtcvad.wheels")
        ('torch-fidelity', 'resemblyzer', 'webrtcvad-wheels')
    """
    return re.sub(r"[-_.]+", "-", name).lower()


def read_pins(path: Path) -> dict[str, str]:
    """``name==version`` lines of a constraints file, by canonical name."""
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            name, version = line.split("==", 1)
            pins[canonical(name)] = version.strip()
    return pins


def pip_download(requirement: str, dest: Path) -> None:
    """One cp312 manylinux wheel, no dependencies (the README's recipe for the GPU machine)."""
    platforms = [arg for tag in WHEEL_PLATFORMS for arg in ("--platform", tag)]
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", "--python-version",
                    "3.12", "--implementation", "cp", *platforms, "-d", str(dest), requirement], check=True)


def prepare_wheels(folder: Path, constraints: Path) -> int:
    """Download the carried wheels at their pins in ``constraints`` (the checkout's ``constraints.txt``) into
    ``folder`` (its caller, ``scripts/device_check.py --prepare-wheels``, empties it of wheels first: one version
    each), extract the DNSMOS files, print each size and the total; 1 when over :data:`WHEEL_BUDGET_MIB`."""
    pins = read_pins(constraints)
    folder.mkdir(parents=True, exist_ok=True)
    unpinned = [d for d in [*CARRIED, "speechmos"] if canonical(d) not in pins]
    if unpinned:
        print(f"error: constraints.txt pins none of {unpinned}", file=sys.stderr)
        return 1
    for dist in CARRIED:
        pip_download(f"{dist}=={pins[canonical(dist)]}", folder)
    with tempfile.TemporaryDirectory(prefix="speechmos_") as scratch:
        pip_download(f"speechmos=={pins['speechmos']}", Path(scratch))
        wheel = next(Path(scratch).glob("*.whl"))
        (folder / "dnsmos").mkdir(exist_ok=True)
        with zipfile.ZipFile(wheel) as archive:
            for member in DNSMOS_FILES.values():
                (folder / "dnsmos" / Path(member).name).write_bytes(archive.read(member))
        speechmos_size = wheel.stat().st_size
    files = sorted(folder.glob("*.whl")) + sorted((folder / "dnsmos").glob("*.onnx"))
    total = sum(f.stat().st_size for f in files)
    for f in files:
        print(f"{f.stat().st_size / 1e6:8.2f} MB  {f.relative_to(folder)}")
    print(f"{total / 1e6:8.2f} MB  in all ({total / 2**20:.1f} MiB; budget {WHEEL_BUDGET_MIB:g} MiB); the speechmos "
          f"wheel ({speechmos_size / 1e6:.1f} MB) is carried as its two DNSMOS files")
    for name, why in NOT_CARRIED.items():
        print(f"not carried: {name}: {why}")
    return 0 if total <= WHEEL_BUDGET_MIB * 2**20 else 1


def install_carried(folder: Path) -> dict[str, Any]:
    """Install the carried wheels whose module is missing into a temporary folder on ``sys.path`` (and on
    ``PYTHONPATH`` for child processes); point the DNSMOS weights at the carried files if speechmos is absent."""
    report: dict[str, Any] = {"folder": str(folder), "installed": [], "missing": []}
    wheels = {canonical(w.name.split("-", 1)[0]): w for w in sorted(folder.glob("*.whl"))} if folder.is_dir() else {}
    needed = [dist for dist, module in CARRIED.items() if importlib.util.find_spec(module) is None]
    carried = [wheels[canonical(d)] for d in needed if canonical(d) in wheels]
    report["missing"] = [d for d in needed if canonical(d) not in wheels]
    if carried:
        site = Path(tempfile.gettempdir()) / "device_check_site"
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile",
                        "--no-cache-dir", "--upgrade", "--target", str(site), *map(str, carried)], check=True)
        sys.path.insert(0, str(site))
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
        importlib.invalidate_caches()
        report["installed"] = [w.name for w in carried]
        report["site"] = str(site)
    if importlib.util.find_spec("speechmos") is None:
        from ..weights.registry import env_var

        for name, member in DNSMOS_FILES.items():
            path = folder / "dnsmos" / Path(member).name
            if path.is_file():
                os.environ[env_var(name)] = str(path.resolve())
                report.setdefault("dnsmos_files", []).append(str(path))
    return report


__all__ = ["CARRIED", "DNSMOS_FILES", "NOT_CARRIED", "WHEEL_BUDGET_MIB", "WHEEL_PLATFORMS", "canonical",
           "install_carried", "pip_download", "prepare_wheels", "read_pins"]
