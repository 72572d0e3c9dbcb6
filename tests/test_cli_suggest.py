"""The command line's errors: the sub-command that got a bad option answers with its own usage and
the closest option; a mistyped command gets the closest command; required options say so in help."""

from __future__ import annotations

import pytest

from hug_vis_dataset.cli import build_parser, did_you_mean, main


@pytest.mark.parametrize("word,choices,want", [
    ("evalute", ["evaluate", "report", "validate"], " (did you mean evaluate?)"),
    ("--predicitons", ["--predictions", "--model", "--out"], " (did you mean --predictions?)"),
    ("--tabel", ["--table", "--show"], " (did you mean --table?)"),
    ("--zzzz", ["--table", "--show"], ""),
    ("x", [], ""),
])
def test_did_you_mean(word, choices, want):
    assert did_you_mean(word, choices) == want


def test_a_mistyped_option_gets_the_subcommands_usage_and_a_suggestion(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["evaluate", "matting", "--dataset", "d", "--predicitons", "x"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2
    assert err.startswith("usage: hugvis evaluate ")  # the sub-command's usage, not the top level's
    assert "error: unrecognized arguments: --predicitons x (did you mean --predictions?)" in err


def test_a_nested_subcommand_answers_for_its_own_options(capsys):
    with pytest.raises(SystemExit):
        main(["leaderboard", "show", "results", "--table", "11", "--shwo", "synthetic"])
    err = capsys.readouterr().err
    assert err.startswith("usage: hugvis leaderboard show ") and "(did you mean --show?)" in err


def test_a_mistyped_command_gets_the_closest_command(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["evalute"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "invalid choice: 'evalute'" in err and "(did you mean evaluate?)" in err


def test_required_options_are_marked_in_help(capsys):
    with pytest.raises(SystemExit):
        main(["leaderboard", "show", "--help"])
    out = capsys.readouterr().out
    assert "(required)" in out.split("--table")[-1].split("--show")[0]
    assert "(required)" not in out.split("--show")[-1]  # optional ones are not marked
    parser = build_parser()
    board = next(a for a in parser._actions if a.dest == "command").choices["leaderboard"]
    show = next(a for a in board._actions if a.dest == "action").choices["show"]
    assert show.format_help().count("(required)") == 1  # --table only, once


def test_evaluate_usage_shows_predictions_and_model_as_required(capsys, tmp_path):
    """--model is required for a submission (not for motion or --real-audio): the usage says so, without
    brackets, and a missing one is named in a one-line error."""
    with pytest.raises(SystemExit):
        main(["evaluate", "--help"])
    out = capsys.readouterr().out
    usage = out.split("\n\n")[0]
    assert usage.startswith("usage: hugvis evaluate TASK --predictions DIR --model NAME --dataset D")
    assert "[--model" not in usage and "[--predictions" not in usage
    assert "hugvis evaluate voice_cloning --real-audio" in usage and "hugvis evaluate motion --dataset D" in usage
    model_help = " ".join(out.split("  --model MODEL")[1].split("  --real-audio")[0].split())
    assert model_help.endswith("(required, except for motion and --real-audio)")
    assert main(["evaluate", "matting", "--predictions", str(tmp_path), "--dataset", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.strip() == ("error: matting needs --model NAME (usage: hugvis evaluate matting --predictions DIR "
                           "--model NAME --dataset D)")
    assert main(["evaluate", "matting", "--dataset", str(tmp_path)]) == 2
    assert "needs --predictions DIR and --model NAME" in capsys.readouterr().err
    # motion names its own model: no --model error (it fails later, on the empty dataset folder)
    main(["evaluate", "motion", "--dataset", str(tmp_path / "none")])
    assert "needs" not in capsys.readouterr().err
