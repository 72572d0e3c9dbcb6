"""References to things that do not exist (issue 52): every name a command accepts is checked against what
exists, in one place (``names.py``; model names by ``results.model_name_problem``).

Classes generated:

* an audit transform name that is no transform of the task's medium (a typo, another medium's, a
  different case): one line naming the option, the name, the closest one and what exists, exit 2, nothing
  written (it ended in a KeyError traceback; another medium's transform was dropped without a word);
* a model name that is a spelling of a reserved row (``audit@...`` in any case, ``real-audio``,
  ``Reference`` ...): refused by ``hugvis evaluate``, the Space's and the leaderboard's name check, before
  anything is stored (it was stored, and every reader then left it out of the rankings);
* a MOS study naming a system with no outputs, or items whose output is missing: refused when the study is
  opened, naming the study file, the system and what exists (raters were served items every answer to
  which was refused).
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hostile_cli import assert_one_line_error, run_cli

FUZZ = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
NAME = st.from_regex(re.compile(r"[A-Za-z0-9][A-Za-z0-9._+@=-]{0,20}", re.ASCII), fullmatch=True)


# ----------------------------------------------------------------------------- audit transforms
@FUZZ
@given(name=st.one_of(NAME, st.sampled_from(["mp3_128k", "aac_128k", "H264_CRF23", "h246_crf23", "opus_64k"])),
       task=st.sampled_from(["matting", "vision_driven", "voice_cloning"]))
def test_an_unknown_transform_is_one_line_exit_2_and_nothing_written(tmp_path, capsys, name, task):
    from hug_vis_dataset.audit import transforms as tr
    from hug_vis_dataset.audit.robustness import TASK_MEDIUM

    medium = "video" if TASK_MEDIUM[task] == "alpha" else TASK_MEDIUM[task]
    if name in tr.names(medium) or name == tr.IDENTITY:
        return  # a real one of this medium
    out = tmp_path / "audit"
    result = run_cli(capsys, "audit", "robustness", task, "--dataset", tmp_path / "nowhere", "--out", out,
                     "--transforms", f"{tr.names(medium)[0]},{name}")
    line = assert_one_line_error(result, 2, "--transforms", repr(name), tr.names(medium)[-1])
    assert "Traceback" not in line and not out.exists()


# ----------------------------------------------------------------------------- reserved model names
@st.composite
def reserved_spellings(draw):
    from hug_vis_dataset.datamodel.results import AUDIT_PREFIX, REFERENCE_MODELS

    base = draw(st.one_of(st.sampled_from(REFERENCE_MODELS), NAME.map(lambda n: AUDIT_PREFIX + n[:40])))
    return "".join(c.upper() if draw(st.booleans()) else c for c in base)


@FUZZ
@given(name=reserved_spellings())
def test_a_reserved_spelling_is_refused_by_every_door_that_takes_a_model_name(name):
    from hug_vis_dataset.leaderboard.store import ModelNameError, check_model_name
    from hug_vis_dataset.datamodel.results import model_name_problem

    problem = model_name_problem(name)
    assert problem and "reserved" in problem and "\n" not in problem
    with pytest.raises(ModelNameError, match="reserved"):
        check_model_name(name)  # the Space's Score tab and the leaderboard's submit/push


@FUZZ
@given(name=NAME)
def test_a_name_of_ones_own_is_accepted(name):
    from hug_vis_dataset.datamodel.results import AUDIT_PREFIX, REFERENCE_MODELS, model_name_problem

    if name.lower() in REFERENCE_MODELS or name.lower().startswith(AUDIT_PREFIX):
        return
    assert model_name_problem(name) is None


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("names") / "release"
    synthesize(root, actors=1, emotions=["Happy", "Sad"], actions=1, scripts=1, seconds=0.2, size=(32, 18),
               progress=False)
    return root


@pytest.mark.parametrize("model", ["audit@h264_crf23", "AUDIT@pred-identity", "Real-Audio", "reference",
                                   "Baseline"])
def test_hugvis_evaluate_refuses_a_reserved_spelling_and_stores_nothing(release, tmp_path, capsys, model):
    system = sorted((release / "simulated_systems" / "emotion").iterdir())[0]
    out = tmp_path / "results"
    result = run_cli(capsys, "evaluate", "emotion", "--predictions", system, "--model", model, "--dataset", release,
                     "--out", out, "--no-progress")
    assert_one_line_error(result, 2, "--model", repr(model), "reserved")
    assert not out.exists()


def test_hugvis_evaluate_still_stores_the_baseline_under_its_reserved_name(release, tmp_path, capsys):
    system = sorted((release / "simulated_systems" / "emotion").iterdir())[0]
    status, _, err = run_cli(capsys, "evaluate", "emotion", "--predictions", system, "--model", "baseline",
                             "--dataset", release, "--out", tmp_path / "results", "--no-progress")
    assert status == 0, err
    assert (tmp_path / "results" / "emotion" / "baseline" / "rows.parquet").is_file()


# ----------------------------------------------------------------------------- a study's systems and items
def _study(path, systems, clips="all", task="voice_cloning"):
    path.write_text(json.dumps({"name": "s", "tasks": {task: {"systems": systems}}, "clips": clips,
                                "ratings_per_item": 1, "items_per_session": 2}), encoding="utf-8")
    return path


@FUZZ
@given(name=NAME)
def test_a_study_naming_a_system_without_outputs_is_refused_naming_it(release, tmp_path, name):
    from hug_vis_dataset.datamodel.release import Release
    from hug_vis_dataset.studies.spec import StudyFileError
    from hug_vis_dataset.studies.study_desk import MosStudy

    present = sorted(p.name for p in (release / "simulated_systems" / "voice_cloning").iterdir())
    if name in present or name in ("reference", "degraded") or name.startswith("gold"):
        return
    study_file = _study(tmp_path / "study.json", [present[0], name])
    study = MosStudy(Release(release), release, tmp_path / "ratings.jsonl", study_path=study_file)
    with pytest.raises(StudyFileError) as caught:
        study.spec  # noqa: B018 - opening the study is what checks it
    message = str(caught.value)
    assert "\n" not in message and str(study_file) in message and repr(name) in message and present[-1] in message


def test_a_study_item_without_its_output_is_refused_and_a_complete_one_opens(release, tmp_path):
    import shutil

    from hug_vis_dataset.datamodel.release import Release
    from hug_vis_dataset.studies.spec import StudyFileError
    from hug_vis_dataset.studies.study_desk import MosStudy

    copy = tmp_path / "release"
    shutil.copytree(release, copy)
    systems = sorted(p.name for p in (copy / "simulated_systems" / "voice_cloning").iterdir())
    study_file = _study(tmp_path / "study.json", systems)
    opened = MosStudy(Release(copy), copy, tmp_path / "ratings.jsonl", study_path=study_file)
    assert opened.spec.systems("voice_cloning") == tuple(systems)
    victim = sorted((copy / "simulated_systems" / "voice_cloning" / systems[1]).glob("*.wav"))[0]
    victim.unlink()
    study = MosStudy(Release(copy), copy, tmp_path / "ratings.jsonl", study_path=study_file)
    with pytest.raises(StudyFileError, match=f"1 of {len(systems) * len(opened.spec.clips)} items have no "
                                             f"output.*{re.escape(victim.name)}"):
        study.spec  # noqa: B018
