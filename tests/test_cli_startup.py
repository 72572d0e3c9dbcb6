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


def _subcommand_parsers(parser) -> dict:
    import argparse

    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_each_command_module_registers_the_commands_the_table_names():
    import argparse
    import importlib

    from hug_vis_dataset import cli

    for module, commands in cli.COMMAND_OWNERS:
        parser = cli.HugvisParser(prog="hugvis")
        sub = parser.add_subparsers(dest="command")
        importlib.import_module(module).register(sub)
        assert tuple(sub.choices) == commands, module
    every = [c for _, commands in cli.COMMAND_OWNERS for c in commands]
    assert sorted(every) == sorted(_subcommand_parsers(cli.build_parser())) and len(set(every)) == len(every)
    assert isinstance(cli.build_parser("evaluate"), argparse.ArgumentParser)


def test_a_command_parser_is_the_full_parsers_part_for_that_command():
    """The one-module parser a command builds gives the same help, usage and parse as the full one."""
    from hug_vis_dataset import cli

    full = _subcommand_parsers(cli.build_parser())
    for _, commands in cli.COMMAND_OWNERS:
        for command in commands:
            alone = _subcommand_parsers(cli.build_parser(command))
            assert list(alone) == [c for _, cs in cli.COMMAND_OWNERS if command in cs for c in cs]
            assert alone[command].format_help() == full[command].format_help(), command
    argv = ["--debug", "evaluate", "matting", "--predictions", "p", "--model", "m", "--dataset", "d", "--metrics", "mad"]
    assert vars(cli.parse_args(cli.build_parser(cli.command_of(argv)), argv)) == vars(
        cli.parse_args(cli.build_parser(), argv))
    # no command or a misspelt one: the full parser, which lists and suggests every command
    assert cli.command_of(["--debug"]) is None
    assert len(_subcommand_parsers(cli.build_parser(cli.command_of(["evalute"])))) == len(full)


def test_evaluate_imports_no_other_commands_module():
    out = subprocess.run([sys.executable, "-c", "import sys, json; from hug_vis_dataset.cli import main; "
                          "main(['evaluate', '--help'])"], capture_output=True, text=True)
    assert out.returncode == 0 and "hugvis evaluate TASK" in out.stdout
    probe = ("import sys, json\nfrom hug_vis_dataset import cli\ncli.build_parser(cli.command_of(sys.argv[1:]))\n"
             "print(json.dumps(sorted(m for m in sys.modules if m.endswith('.commands'))))")
    got = json.loads(subprocess.run([sys.executable, "-c", probe, "evaluate", "matting"], capture_output=True,
                                    text=True, check=True).stdout)
    assert got == ["hug_vis_dataset.scoring.commands"]
