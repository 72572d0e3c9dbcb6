"""What ``hugvis evaluate``'s fixed start-up costs, piece by piece, as child processes in one run (issue 37).

Each step is a fresh ``python -c`` child whose CPU (user + system, ``RUSAGE_CHILDREN``) is measured; the
steps are interleaved ``--repeat`` times and the median is printed with every run. Each step adds one
thing to the one before, so the differences are the pieces: the interpreter, NumPy, PyAV, pyarrow's
Parquet, pandas, numba, our frame kernels' module, numba's first call of a cached kernel (its target
registries: ``numba.np.arraymath`` checks BLAS through ``scipy.linalg``, the typing context builds a
``cffi.FFI``), and last ``hugvis evaluate vision_driven --metrics psnr,ssim`` on a synthetic mini-grid at
64x64 (where scoring costs almost nothing).

Usage: ``python scripts/bench_startup.py [--repeat 5]``
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

STEPS = {
    "python": "pass",
    "+ numpy": "import numpy",
    "+ av": "import numpy, av",
    "+ pyarrow.parquet": "import numpy, av, pyarrow.parquet",
    "+ pandas": "import numpy, av, pyarrow.parquet, pandas",
    "+ numba": "import numpy, av, pyarrow.parquet, pandas, numba",
    "+ our frame kernels (import)": "import numpy, av, pyarrow.parquet, pandas, numba; "
                                    "import hug_vis_dataset.metrics._frame_kernels",
    "+ first call of a cached kernel": "import numpy as np, av, pyarrow.parquet, pandas, numba; "
                                       "from hug_vis_dataset.metrics._frame_kernels import psnr_batch; "
                                       "a = np.zeros((1, 8, 8, 3), np.uint8); psnr_batch(a, a, 100.0)",
}


def child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(argv: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    before = child_cpu()
    proc = subprocess.run([sys.executable, *argv], capture_output=True, text=True, env=env)
    if proc.returncode:
        raise RuntimeError(proc.stderr[-2000:])
    return child_cpu() - before


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    print(f"cores: {os.cpu_count()}, load before: {os.getloadavg()}", flush=True)
    work = Path(tempfile.mkdtemp(prefix="bench_startup_"))
    try:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        subprocess.run([sys.executable, "-c", "import sys; from hug_vis_dataset.cli import main; sys.exit(main(sys.argv[1:]))",
                        "synth", str(work / "rel"), "--actors", "1", "--scripts", "1", "--seconds", "1", "--size", "64x64"],
                       check=True, capture_output=True, env=env)
        preds = work / "rel" / "simulated_systems" / "vision_driven" / "vis_fair"
        clips = len(list(preds.glob("*.mp4")))
        evaluate = ["-c", "import sys; from hug_vis_dataset.cli import main; sys.exit(main(sys.argv[1:]))",
                    "evaluate", "vision_driven", "--predictions", str(preds), "--model", "st", "--dataset",
                    str(work / "rel"), "--out", str(work / "out"), "--no-progress", "--metrics", "psnr,ssim"]
        steps = {name: ["-c", code] for name, code in STEPS.items()}
        steps[f"hugvis evaluate vision_driven psnr,ssim ({clips} clips of 64x64, 1 s)"] = evaluate
        run(steps["+ first call of a cached kernel"][:])  # numba's cache of our kernels exists before timing
        times: dict[str, list[float]] = {name: [] for name in steps}
        for _ in range(args.repeat):
            for name, argv_ in steps.items():
                shutil.rmtree(work / "out", ignore_errors=True)
                times[name].append(run(argv_))
        print(f"\nmedian of {args.repeat} interleaved runs, CPU s of the child (user + system)\n")
        print("| step | CPU s | added by the step | runs |\n| --- | ---: | ---: | --- |")
        previous = 0.0
        for name, values in times.items():
            median = float(np.median(values))
            added = median - previous if not name.startswith("hugvis") else median - float(
                np.median(times["+ first call of a cached kernel"]))
            print(f"| {name} | {median:.3f} | {added:+.3f} | " + ", ".join(f"{v:.2f}" for v in values) + " |")
            previous = median
        print(f"\nload after: {os.getloadavg()}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
