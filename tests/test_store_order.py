"""The store's canonical order (``sort_rows``) equals its definition: a stable Python sort of the rows by
(model, task, the clip's grid key, metric, extra columns), written out per row here. The grid key itself is
checked on its own (grid order, not string order), and two spellings of one clip (fearful/afraid) are ordered
by the string, so part order never shows in a compacted table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hug_vis_dataset.scoring.store import ResultStore, _grid_key, sort_rows


def by_definition(frame: pd.DataFrame, extra: tuple[str, ...] = ()) -> pd.DataFrame:
    order = sorted(range(len(frame)), key=lambda i: (
        str(frame["model"].iat[i]), str(frame["task"].iat[i]), _grid_key(frame["clip_id"].iat[i]),
        str(frame["metric"].iat[i]), *(frame[c].iat[i] for c in extra)))
    return frame.iloc[order].reset_index(drop=True)


CLIPS = ["actor_0002_happy_action_01_script_001", "actor_0001_sad_action_01_script_010",
         "actor_0001_sad_action_01_script_002", "actor_0001_fearful_action_03_script_001",
         "actor_0001_afraid_action_03_script_001", "actor_0010_neutral_action_04_script_009", "", "zz-not-a-clip",
         "aa-not-a-clip"]


def random_rows(seed: int, n: int, with_frame: bool) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "model": rng.choice(["b", "a", "A", "m_2"], n), "task": rng.choice(["matting", "audio_driven"], n),
        "clip_id": rng.choice(CLIPS, n), "metric": rng.choice(["mad", "MSE", "dtssd", "conn"], n),
        "value": np.arange(n, dtype=float)})  # distinct values show where each row went
    if with_frame:
        frame["frame"] = rng.integers(0, 6, n).astype("int64")
    return frame


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("with_frame", [False, True])
def test_sort_rows_equals_the_per_row_definition_with_ties(seed, with_frame):
    # 300 rows over few distinct keys: many exact ties, whose input order a stable sort keeps.
    frame = random_rows(seed, 300, with_frame)
    extra = ("frame",) if with_frame else ()
    pd.testing.assert_frame_equal(sort_rows(frame, extra=extra), by_definition(frame, extra))


def test_sort_rows_on_arrow_strings_as_parquet_gives_them(tmp_path):
    frame = random_rows(3, 200, True)
    frame.to_parquet(tmp_path / "f.parquet", index=False)
    stored = pd.read_parquet(tmp_path / "f.parquet", dtype_backend="pyarrow")
    got = sort_rows(stored, extra=("frame",))
    assert got["value"].tolist() == by_definition(frame, ("frame",))["value"].tolist()


def test_sort_rows_grid_order_not_string_order():
    frame = pd.DataFrame({"model": "m", "task": "t", "metric": "mad",
                          "clip_id": ["actor_0001_sad_action_01_script_010", "actor_0001_happy_action_01_script_002",
                                      "", "junk", "actor_0001_sad_action_01_script_002"]})
    assert sort_rows(frame)["clip_id"].tolist() == [
        "", "actor_0001_happy_action_01_script_002", "actor_0001_sad_action_01_script_002",
        "actor_0001_sad_action_01_script_010", "junk"]


def test_sort_rows_empty_and_one_row():
    empty = random_rows(0, 0, True)
    assert sort_rows(empty, extra=("frame",)).empty
    one = random_rows(0, 1, False)
    pd.testing.assert_frame_equal(sort_rows(one), one)


def test_compacted_frames_are_in_canonical_order_whatever_the_part_order(tmp_path):
    frames = random_rows(4, 120, True)
    frames["model"], frames["task"] = "m", "matting"
    from hug_vis_dataset.outputs import scratch_folder

    store = ResultStore(scratch_folder(parent=tmp_path), "matting", "m")  # parts are written in a work folder
    clips = sorted(set(frames["clip_id"]) - {""})
    for clip in reversed(clips):  # parts written in reverse grid order
        part = frames[frames["clip_id"] == clip][["model", "task", "clip_id", "metric", "frame", "value"]]
        rows = [{"model": "m", "task": "matting", "clip_id": clip, "metric": "mad", "value": 1.0, "status": "ok",
                 "error": ""}]
        store.write_part(rows, part.to_dict("records"))
    store.compact()
    stored = store.read_frames()
    expected = by_definition(frames[frames["clip_id"] != ""].drop_duplicates(
        subset=["model", "clip_id", "metric", "frame"], keep="first"), ("frame",))
    assert stored[["clip_id", "metric", "frame"]].values.tolist() == \
        expected[["clip_id", "metric", "frame"]].values.tolist()
