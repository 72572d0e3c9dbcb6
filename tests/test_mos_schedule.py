"""The study schedule's balance properties on a grid of (systems, clips, k, session size), including
degenerate ones (more raters than items, one system, one clip), plus the study file's checks."""

from __future__ import annotations

import itertools
import json
from collections import Counter

import pytest

from hug_vis_dataset.studies.schedule import assign_items, plan_session, session_rng
from hug_vis_dataset.studies.sessions import SessionLog, coverage
from hug_vis_dataset.studies.spec import StudyFileError, load_study, study_from_mapping

EMOTIONS = ("happy", "sad", "angry")


def _clips(n: int) -> list[str]:
    # Actors 1..3 x emotions: a grid whose actor and emotion coverage can be checked.
    out = [f"actor_{a:04d}_{e}_action_01_script_{s:03d}" for s in range(1, 5) for a in (1, 2, 3) for e in EMOTIONS]
    return out[:n]


def _spec(n_systems: int, n_clips: int, k: int, size: int, gold: float = 0.0, protocol: str = "mos"):
    return study_from_mapping({"name": "s", "protocol": protocol, "clips": _clips(n_clips), "ratings_per_item": k,
                               "items_per_session": size, "gold_rate": gold,
                               "tasks": {"voice_cloning": {"systems": [f"sys{i}" for i in range(n_systems)]}}})


def _run(spec, n_raters: int):
    counts: Counter = Counter()
    sessions = []
    for r in range(n_raters):
        chosen = assign_items(spec.items(), counts, set(), spec.items_per_session, spec.ratings_per_item,
                              session_rng(spec.seed, f"r{r}", 1))
        sessions.append(chosen)
        counts.update(i.key for i in chosen)
        levels = [counts[i.key] for i in spec.items()]
        # Balance after every session: every item reaches c before any gets c + 1, none beyond k.
        assert max(levels) - min(levels) <= 1 and max(levels) <= spec.ratings_per_item
    return sessions, counts


GRID = list(itertools.product((1, 2, 3), (1, 5, 12), (1, 2, 3), (1, 4, 7)))


@pytest.mark.parametrize("n_systems,n_clips,k,size", GRID)
def test_balance_never_twice_and_even_coverage(n_systems, n_clips, k, size):
    spec = _spec(n_systems, n_clips, k, size)
    n_items = n_systems * n_clips
    n_raters = (n_items * k) // max(1, min(size, n_items)) + 3  # more raters than the study needs
    sessions, counts = _run(spec, n_raters)
    # Fully scheduled: every item has exactly k assignments, and later raters get nothing.
    assert all(counts[i.key] == k for i in spec.items())
    assert sum(len(s) for s in sessions) == n_items * k and not sessions[-1]
    for chosen in sessions:
        assert len({i.key for i in chosen}) == len(chosen) <= size  # never the same item twice in a session
    first = sessions[0]
    # A session over a fresh study (every system still has items at the lowest level) sees the
    # systems evenly; later sessions get what the lowest level still holds.
    per = Counter(i.systems[0] for i in first)
    assert max(per.values()) - min(per.get(f"sys{j}", 0) for j in range(n_systems)) <= (1 if len(first) >= n_systems
                                                                                          else max(per.values()))
    if len(first) >= 3 and n_clips >= 9:  # a session over a fresh study spreads actors and emotions too
        for field in ("actor_id", "emotion"):
            values = Counter(getattr(i.clip, field) for i in first)
            assert max(values.values()) - min(values.values()) <= 1 and len(values) == min(3, len(first))


def test_a_rater_never_gets_an_item_twice_across_sessions():
    spec = _spec(2, 3, 3, 4)
    counts, seen = Counter(), set()
    got = []
    for session in (1, 2, 3):
        chosen = assign_items(spec.items(), counts, seen, 4, 3, session_rng(0, "solo", session))
        got += [i.key for i in chosen]
        counts.update(i.key for i in chosen)
        seen |= {i.key for i in chosen}
    # One rater alone can rate each of the 6 items once; then nothing is left for them.
    assert sorted(got) == sorted(i.key for i in spec.items())


def test_gold_items_are_not_repeated_to_a_rater_while_unseen_ones_remain():
    """Gold items too: a rater gets a gold item again only once every one of its kind was shown."""
    spec = _spec(2, 6, 3, 4, gold=0.5)  # 6 clips: 6 reference and 6 degraded gold items
    gold = spec.gold_items()
    counts, seen, shown = Counter(), set(), []
    for session in range(1, 7):
        planned = plan_session(spec.items(), gold, counts, seen, 4, 2, 3, session_rng(0, "solo", session))
        shown += [i.key for i in planned if i.kind == "gold"]
        counts.update(i.key for i in planned if i.kind == "system")
        seen |= {i.key for i in planned}
    assert len(gold) == 12 and len(shown) >= 6
    assert len(shown) == len(set(shown)), "a gold item was shown twice while unseen gold remained"


def test_the_lowest_level_seen_by_a_rater_ends_their_session_short():
    spec = _spec(1, 2, 2, 2)
    a, b = (i.key for i in spec.items())
    chosen = assign_items(spec.items(), {a: 0, b: 1}, {a}, 2, 2, session_rng(0, "r", 2))
    assert chosen == []  # taking b would put it two ahead of a


def test_one_item_one_system_many_raters():
    spec = _spec(1, 1, 2, 5)
    sessions, counts = _run(spec, 4)
    assert [len(s) for s in sessions] == [1, 1, 0, 0]


def test_order_is_seeded_per_rater_and_recorded():
    spec = _spec(3, 12, 1, 6, gold=0.2)
    one = plan_session(spec.items(), spec.gold_items(), {}, set(), 6, spec.n_gold(), 1, session_rng(0, "r1", 1))
    again = plan_session(spec.items(), spec.gold_items(), {}, set(), 6, spec.n_gold(), 1, session_rng(0, "r1", 1))
    other = plan_session(spec.items(), spec.gold_items(), {}, set(), 6, spec.n_gold(), 1, session_rng(0, "r2", 1))
    assert [i.key for i in one] == [i.key for i in again] != [i.key for i in other]
    assert sum(i.kind == "gold" for i in one) == spec.n_gold() == 1 and len(one) == 6


def test_pairwise_items_are_every_pair_of_every_clip():
    spec = _spec(3, 2, 1, 3, protocol="pairwise")
    assert [i.systems for i in spec.items()][:3] == [("sys0", "sys1"), ("sys0", "sys2"), ("sys1", "sys2")]
    assert len(spec.items()) == 6 and spec.gold_items() == []


def test_sessions_resume_and_coverage(tmp_path):
    spec = _spec(2, 3, 2, 4)
    log = SessionLog(tmp_path / "sessions.jsonl", spec)
    s1 = log.open_session("r1", set())
    assert log.open_session("r1", set(s1.codes()[:2])).codes() == s1.codes()  # resume where they left off
    s2 = log.open_session("r2", set())
    assert not set(s1.codes()) & set(s2.codes())  # codes are per session
    assert SessionLog(tmp_path / "sessions.jsonl", spec).lookup()[s2.codes()[0]][0] == "r2"  # after a restart
    # By hand: r1's 4 items at 1; r2 takes the 2 fresh ones, then 2 of r1's (they reach 2).
    cov = coverage(spec, log.sessions(), {"r1": set(s1.codes()), "r2": set(s2.codes())})
    assert cov["by_ratings"] == {1: 4, 2: 2} and cov["raters"] == 2 and cov["answers"] == 8
    assert cov["completion"] == 8 / 12 and cov["per_rater"] == {"r1": (4, 4), "r2": (4, 4)}
    half = coverage(spec, log.sessions(), {"r1": set(s1.codes()[:1])})
    assert half["by_ratings"] == {0: 5, 1: 1} and half["per_rater"] == {"r1": (1, 4), "r2": (0, 4)}
    # No system name in what is written for a rater to see (codes), and none derivable.
    assert all(c.startswith("i") and "sys" not in c for c in s1.codes() + s2.codes())


@pytest.mark.parametrize("change,message", [
    ({"protocol": "ab"}, "protocol 'ab'"), ({"tasks": {}}, '"tasks"'),
    ({"tasks": {"matting": {"systems": ["a"]}}}, "task 'matting' has no mos study"),
    ({"tasks": {"voice_cloning": {"systems": ["a"], "criteria": ["lip_sync"]}}}, r"criteria \['lip_sync'\]"),
    ({"tasks": {"voice_cloning": {"systems": ["gold_reference"]}}}, "reserved for gold"),
    ({"ratings_per_item": 0}, "ratings_per_item must be an integer >= 1"), ({"gold_rate": 1.0}, "gold_rate"),
    ({"clips": ["x"]}, "clips:"), ({"color": 1}, r"unknown key\(s\) \['color'\]"),
    ({"qc": {"max_fast_share": 2}}, "qc: qc max_fast_share"),
    ({"protocol": "pairwise"}, "at least 2 systems"),
])
def test_bad_study_files_are_named(tmp_path, change, message):
    data = {"name": "s", "clips": _clips(2), "tasks": {"voice_cloning": {"systems": ["a"]}}} | change
    path = tmp_path / "study.json"
    path.write_text(json.dumps(data))
    with pytest.raises(StudyFileError, match=message):
        load_study(path)
