"""What a ``hugvis`` process imports before and while scoring (issue 25, the process door).

Building the parser (every command does) imports no heavy library, and ``hugvis evaluate`` of frame
metrics imports none it does not use: start-up is a fixed cost paid by every run.
"""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("scipy", "pandas", "torch", "gradio", "datasets", "ray", "sklearn", "numba", "av", "tqdm", "cv2",
         "transformers", "onnxruntime", "huggingface_hub")
PROBE = ("import json, sys; from hug_vis_dataset.cli import main, build_parser; {run}; "
         "print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))")


def imported(run: str, *argv: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", PROBE.format(run=run), *argv], capture_output=True, text=True,
                         check=True).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_building_the_parser_imports_no_heavy_library():
    assert imported("build_parser()") & set(HEAVY) == set()


def test_evaluate_psnr_ssim_imports_only_what_it_uses(tmp_path):
    from hug_vis_dataset.synth import synthesize

    synthesize(tmp_path / "rel", actors=1, emotions=["Happy"], actions=1, scripts=1, seconds=0.2, size=(32, 18),
               seed=1)
    sub = next(p for p in (tmp_path / "rel" / "simulated_systems" / "vision_driven").iterdir() if p.is_dir())
    got = imported("rc = main(sys.argv[1:]); assert rc == 0, rc", "evaluate", "vision_driven", "--predictions",
                   str(sub), "--model", "m", "--dataset", str(tmp_path / "rel"), "--out", str(tmp_path / "out"),
                   "--no-progress", "--metrics", "psnr,ssim")
    # av decodes, numba runs the kernels (it imports scipy.linalg itself), pandas/pyarrow write the rows
    assert {"av", "numba", "pandas"} <= got
    assert got & {"torch", "gradio", "datasets", "ray", "sklearn", "tqdm", "cv2", "transformers", "onnxruntime",
                  "huggingface_hub"} == set()
