"""Hostile Space uploads: a name that is both a file and a folder, failures half-way through,
the work-folder quota; nothing may stay on disk after a refusal or after scoring."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from test_space_uploads import _zip

from hug_vis_dataset.readers.media import downmix_note, read_audio
from hug_vis_dataset.outputs import scratch_folder
from hug_vis_dataset.space.uploads import UnsafeUploadError, UploadLimits, extracted_upload, safe_extract

CLIP = "actor_0001_happy_action_01_script_001"


@pytest.mark.parametrize("members", [
    [("X.png", b"a"), ("X.png/000000.png", b"b")],
    [("X.png/000000.png", b"b"), ("X.png", b"a")],
    [("sys/a.wav", b"a"), ("sys/a.wav/b.wav", b"b")],
    [("d/e.mp4/f/g.png", b"a"), ("d/e.mp4", b"b")],
])
def test_name_that_is_both_file_and_folder_is_refused_and_nothing_is_left(tmp_path, members):
    upload = _zip(tmp_path, members)
    dest = scratch_folder(parent=tmp_path) / "dest"  # safe_extract's contract: dest lies in scratch space
    with pytest.raises(UnsafeUploadError, match="both a file and a folder"):
        safe_extract(upload, dest)
    assert not dest.exists() or not any(dest.iterdir())


def _lying_zip(tmp_path: Path) -> Path:
    """First member fine, second decompresses to more than it declares (caught while streaming)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr(f"{CLIP}.wav", b"R" * 100)
        zf.writestr("b.wav", b"x" * 5000)
    data = bytearray(buf.getvalue())
    # Lower b.wav's declared size in the central directory only.
    cd = data.rfind(b"PK\x01\x02")
    data[cd + 24:cd + 28] = (10).to_bytes(4, "little")
    path = tmp_path / "lying.zip"
    path.write_bytes(bytes(data))
    return path


def test_failure_half_way_removes_the_partial_extraction(tmp_path):
    dest = scratch_folder(parent=tmp_path) / "dest"  # safe_extract's contract: dest lies in scratch space
    with pytest.raises(UnsafeUploadError):
        safe_extract(_lying_zip(tmp_path), dest)
    assert list(dest.iterdir()) == []


def test_pickle_member_removes_everything_extracted_before_it(tmp_path):
    upload = _zip(tmp_path, [(f"{CLIP}.wav", b"RIFF...."), ("z.json", b"\x80\x04K\x01.")])
    dest = scratch_folder(parent=tmp_path) / "dest"  # safe_extract's contract: dest lies in scratch space
    with pytest.raises(UnsafeUploadError, match="pickle"):
        safe_extract(upload, dest)
    assert list(dest.iterdir()) == []


def test_extracted_upload_is_deleted_after_scoring_and_after_a_crash(tmp_path):
    upload = _zip(tmp_path, [(f"sys/{CLIP}.wav", b"RIFF....")])
    work = tmp_path / "work"
    with extracted_upload(upload, work) as root:
        assert (root / f"{CLIP}.wav").read_bytes() == b"RIFF...."
    assert list(work.iterdir()) == []
    with pytest.raises(RuntimeError, match="scorer crashed"):
        with extracted_upload(upload, work):
            raise RuntimeError("scorer crashed")
    assert list(work.iterdir()) == []


def test_work_folder_quota(tmp_path):
    work = tmp_path / "work"
    (work / "other-upload").mkdir(parents=True)
    (work / "other-upload" / "big.wav").write_bytes(b"0" * 900)
    upload = _zip(tmp_path, [(f"{CLIP}.wav", b"1" * 200)])
    limits = UploadLimits(max_work_bytes=1000)
    with pytest.raises(UnsafeUploadError, match="900 of its 1000-byte quota"):
        with extracted_upload(upload, work, limits):
            pass
    assert sorted(p.name for p in work.iterdir()) == ["other-upload"]
    with extracted_upload(upload, work, UploadLimits(max_work_bytes=1100)) as root:
        assert (root / f"{CLIP}.wav").stat().st_size == 200


def test_refused_upload_through_extracted_upload_leaves_no_folder(tmp_path):
    upload = _zip(tmp_path, [("X.png", b"a"), ("X.png/000000.png", b"b")])
    work = tmp_path / "work"
    with pytest.raises(UnsafeUploadError):
        with extracted_upload(upload, work):
            pass
    assert not work.exists() or list(work.iterdir()) == []


# ----------------------------------------------------------------------------- stereo audio note
def test_stereo_wav_is_averaged_with_a_note(tmp_path):
    left, right = np.linspace(-0.5, 0.5, 160), np.linspace(0.5, -0.25, 160)
    path = tmp_path / "s.wav"
    sf.write(path, np.stack([left, right], axis=1), 16000, subtype="FLOAT")
    mono, rate = read_audio(path)
    np.testing.assert_allclose(mono, (left + right) / 2, atol=1e-7)
    assert downmix_note(path) == "s.wav has 2 channels; scored on their mean (mono)"
    sf.write(tmp_path / "m.wav", left, 16000)
    assert downmix_note(tmp_path / "m.wav") is None
