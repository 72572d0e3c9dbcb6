"""The binary-file readers: Parquet shards and results rows checked against their schema, media
headers checked against their payload (issue 35), and the property every reader keeps, fuzzed.

The property (hypothesis, derandomized): a damaged file -- truncated at any byte, a column extra,
missing, renamed or of another type, a WAV whose data-chunk or RIFF size lies, a video cut at any
offset -- gives either a one-line :class:`~hug_vis_dataset.errors.HugvisError` naming the file, or
exactly the clean file's result; never another exception, never fewer samples or frames as ok.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hug_vis_dataset.errors import HugvisError
from hug_vis_dataset.hub import build_repo, features, load_config
from hug_vis_dataset.hub.loading import SHARD_FIX, shard_schema
from hug_vis_dataset.readers import InputFileError
from hug_vis_dataset.readers.parquet_files import ParquetSchema, open_parquet, read_parquet_frame

from test_builder import CLIPS, make_release

FUZZ = settings(max_examples=40, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def one_line(err: BaseException, path: "str | Path") -> str:
    """The error's text, checked to be one line naming the file."""
    text = str(err)
    assert "\n" not in text, text
    assert Path(path).name in text, text
    return text


# ----------------------------------------------------------------------------- built-repo shards
@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("binary")
    release = make_release(root / "release")
    build_repo(release, root / "repo", configs=("matting", "clips"), measure_storage=False)
    return root / "repo"


@pytest.fixture()
def repo(built, tmp_path) -> Path:
    """A private copy of the built repo, free to damage."""
    import shutil

    copy = tmp_path / "repo"
    shutil.copytree(built, copy)
    return copy


@pytest.fixture()
def offline(monkeypatch, tmp_path):
    import datasets

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    return str(tmp_path / "hf-cache")


def matting_shard(repo: Path) -> Path:
    return repo / "data" / "matting" / "test-00000.parquet"


def test_shard_schema_is_the_features_arrow_schema():
    for config in ("clips", "emotion", "audio_driven", "vision_driven", "voice_cloning", "matting"):
        arrow = features(config).arrow_schema
        declared = shard_schema(config)
        assert list(declared.required) == arrow.names
        assert all(declared.required[f.name].equals(f.type) for f in arrow)


def test_loading_a_shard_without_alpha_matte_names_shard_column_and_fix(repo, offline):
    # On main this loaded, every row's alpha_matte None (the card's features still list it).
    shard = matting_shard(repo)
    pq.write_table(pq.read_table(shard).drop_columns(["alpha_matte"]), shard)
    with pytest.raises(InputFileError) as caught:
        load_config(repo, "matting", cache_dir=offline)
    text = one_line(caught.value, shard)
    assert caught.value.where == "column 'alpha_matte'" and "is missing" in text
    assert "rebuild the repo with hugvis build" in text and "another version" in text


def test_loading_a_shard_with_an_extra_column_names_shard_column_and_fix(repo, offline):
    # On main: datasets' DatasetGenerationError "An error occurred while generating the dataset".
    shard = matting_shard(repo)
    table = pq.read_table(shard)
    pq.write_table(table.append_column("note", pa.array(["x"] * len(table))), shard)
    with pytest.raises(InputFileError) as caught:
        load_config(repo, "matting", cache_dir=offline)
    text = one_line(caught.value, shard)
    assert caught.value.where == "column 'note'" and "is not a column of a shard of the 'matting' config" in text
    assert SHARD_FIX in text


def test_a_clean_repo_still_loads(repo, offline):
    ds = load_config(repo, "matting", cache_dir=offline)
    assert ds["clip_id"] == [str(c) for c in CLIPS]
    assert all(row["alpha_matte"] is not None for row in ds)


def test_scoring_against_a_shard_without_alpha_matte_is_refused_when_the_source_opens(repo):
    # On main the source opened and every clip's reference read failed on its own ("has no column").
    from hug_vis_dataset.references import open_reference_source

    shard = matting_shard(repo)
    pq.write_table(pq.read_table(shard).drop_columns(["alpha_matte"]), shard)
    (repo / "manifest.json").unlink()  # with it, the shard's size and sha256 differ first
    with pytest.raises(InputFileError) as caught:
        open_reference_source(repo, "matting")
    assert caught.value.where == "column 'alpha_matte'" and SHARD_FIX in one_line(caught.value, shard)


@pytest.mark.parametrize("reader", ["iter_rows", "cell_digests"])
def test_hub_readers_of_shards_check_the_schema(repo, reader):
    from hug_vis_dataset.hub.builder import iter_rows
    from hug_vis_dataset.hub.dedup import cell_digests

    shard = matting_shard(repo)
    table = pq.read_table(shard)
    pq.write_table(table.set_column(table.schema.get_field_index("num_frames"), "num_frames",
                                    pa.array([str(v) for v in table["num_frames"].to_pylist()])), shard)
    with pytest.raises(InputFileError) as caught:
        list(iter_rows(repo, "matting")) if reader == "iter_rows" else cell_digests(repo)
    assert caught.value.problem == "holds string, expected int32"
    one_line(caught.value, shard)


# ----------------------------------------------------------------------------- results rows
def result_frame(values=(0.5, 0.25)):
    from hug_vis_dataset.results import result_rows
    from hug_vis_dataset.scoring.store import _rows_frame

    rows = []
    for clip, value in zip(CLIPS, values):
        rows += result_rows("m", "matting", str(clip), {"mad": value})
    return _rows_frame(rows)


def test_a_stored_run_whose_values_are_text_is_damaged_naming_the_column(tmp_path):
    # On main the strings reached the value checks (a TypeError, or compared as text).
    from hug_vis_dataset.scoring.runs import DamagedRun, read_run

    from run_files import write_run

    folder = write_run(tmp_path, "matting", "m", result_frame())
    assert not isinstance(read_run(folder), DamagedRun)
    result_frame().astype({"value": str}).to_parquet(folder / "rows.parquet", index=False)
    damaged = read_run(folder)
    assert isinstance(damaged, DamagedRun)
    assert damaged.problem == "rows.parquet: column 'value' holds string, expected a number"


def test_a_part_file_without_its_metric_column_names_file_and_column(tmp_path):
    # On main: a KeyError traceback ('metric') from drop_duplicates.
    from hug_vis_dataset.scoring.store import ResultStore, StoredResultsError

    store = ResultStore(tmp_path, "matting", "m")
    store.write_part(result_frame().to_dict("records"))
    [part] = list(store.rows_dir.iterdir())
    pq.write_table(pq.read_table(part).drop_columns(["metric"]), part)
    with pytest.raises(StoredResultsError) as caught:
        store.read_rows()
    assert caught.value.where == "column 'metric'" and "delete it to recompute" in one_line(caught.value, part)
