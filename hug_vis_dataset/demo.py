"""``hugvis demo``: the main job on the embedded synthetic default.

Synthesizes the mini-grid, validates it, then runs every later stage that exists in this
checkout (build the Hub repo, score every simulated system, write the report).
"""

from __future__ import annotations

import time
from pathlib import Path


def run(out_dir: "str | Path", seed: int = 0, quick: bool = False) -> int:
    """Run the demo into ``out_dir``; returns the exit status."""
    from .synth import synthesize
    from .validate import validate_release

    out = Path(out_dir)
    release = out / "release"
    start = time.perf_counter()
    kwargs = dict(actors=1, scripts=1, seconds=1.0) if quick else {}
    print(f"[1] synthesizing the mini-grid into {release} ...", flush=True)
    summary = synthesize(release, seed=seed, progress=True, **kwargs)
    print(f"    {len(summary.clip_ids)} clips, simulated systems: "
          + ", ".join(f"{task}: {len(names)}" for task, names in summary.systems.items()))
    print("[2] validating the release tree ...", flush=True)
    report = validate_release(release)
    print("    " + report.to_text().splitlines()[1] + (" -> OK" if report.ok else " -> FAILED"))
    if not report.ok:
        print(report.to_text())
        return 1
    print(f"demo finished in {time.perf_counter() - start:.1f} s")
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser("demo", help="run the whole pipeline on the synthetic mini-grid")
    parser.add_argument("--out", type=Path, default=Path("demo_out"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="a smaller grid (1 actor, 1 script, 1 s clips)")
    parser.set_defaults(func=lambda args: run(args.out, args.seed, args.quick))
