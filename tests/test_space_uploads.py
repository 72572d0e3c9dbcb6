"""Untrusted submission zips: every unsafe archive is refused with a clear error; good ones extract exactly."""

from __future__ import annotations

import hashlib
import io
import pickle
import stat
import zipfile
from pathlib import Path

import pytest

from hug_vis_dataset.outputs import scratch_folder
from hug_vis_dataset.space.uploads import UnsafeUploadError, UploadLimits, check_zip, safe_extract, submission_root


def _zip(tmp_path: Path, members, name="up.zip", compression=zipfile.ZIP_DEFLATED) -> Path:
    path = tmp_path / name
    with zipfile.ZipFile(path, "w", compression=compression) as archive:
        for member in members:
            if isinstance(member, zipfile.ZipInfo):
                archive.writestr(member, b"target")
            else:
                archive.writestr(member[0], member[1])
    return path


def test_good_zip_extracts_byte_exact(tmp_path):
    dest = scratch_folder(parent=tmp_path) / "out"  # safe_extract's contract: a folder in scratch space
    payload = {f"sys/actor_0001_happy_action_01_script_00{i}.wav": bytes(range(256)) * (i + 1) for i in range(1, 4)}
    payload["sys/matte/000000.png"] = b"\x89PNG" + b"\x00" * 100
    path = _zip(tmp_path, payload.items())
    root = safe_extract(path, dest)
    assert root == dest / "sys"  # single wrapping folder is unwrapped
    for name, data in payload.items():
        got = (dest / name).read_bytes()
        assert hashlib.sha256(got).hexdigest() == hashlib.sha256(data).hexdigest()


def test_flat_zip_root_is_destination(tmp_path):
    dest = scratch_folder(parent=tmp_path) / "out"  # safe_extract's contract: a folder in scratch space
    path = _zip(tmp_path, [("predictions.jsonl", b'{"clip_id": "x"}\n'), ("__MACOSX/._predictions.jsonl", b"junk")])
    root = safe_extract(path, dest)
    assert root == dest
    assert sorted(p.name for p in root.iterdir()) == ["predictions.jsonl"]  # macOS litter not extracted


@pytest.mark.parametrize("name,message", [
    ("../evil.wav", r"'\.\.' component"),
    ("a/../../evil.wav", r"'\.\.' component"),
    ("/etc/evil.wav", "absolute member path"),
    ("C:/evil.wav", "absolute member path"),
    ("a\\..\\evil.wav", "backslash"),
    ("model.pkl", "file type '.pkl' is not accepted"),
    ("weights.pt", "file type '.pt' is not accepted"),
    ("run.sh", "file type '.sh' is not accepted"),
])
def test_bad_names_are_refused(tmp_path, name, message):
    dest = scratch_folder(parent=tmp_path) / "out"  # safe_extract's contract: a folder in scratch space
    path = _zip(tmp_path, [(name, b"x")])
    with pytest.raises(UnsafeUploadError, match=message):
        check_zip(path)
    with pytest.raises(UnsafeUploadError):
        safe_extract(path, dest)
    assert not (tmp_path / "evil.wav").exists()


def test_symlink_member_is_refused(tmp_path):
    dest = scratch_folder(parent=tmp_path) / "out"  # safe_extract's contract: a folder in scratch space
    link = zipfile.ZipInfo("sys/link.wav")
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    path = _zip(tmp_path, [link])
    with pytest.raises(UnsafeUploadError, match="symbolic link"):
        safe_extract(path, dest)
    assert not (dest / "sys" / "link.wav").exists()


def test_pickle_disguised_as_json_is_refused(tmp_path):
    dest = scratch_folder(parent=tmp_path) / "out"  # safe_extract's contract: a folder in scratch space
    data = pickle.dumps({"a": 1}, protocol=4)
    path = _zip(tmp_path, [("scores.json", data)])
    with pytest.raises(UnsafeUploadError, match="pickle"):
        safe_extract(path, dest)
    assert not (dest / "scores.json").exists()


def test_member_count_and_total_size_limits(tmp_path):
    many = _zip(tmp_path, [(f"f{i}.txt", b"x") for i in range(11)], name="many.zip")
    with pytest.raises(UnsafeUploadError, match="11 members; the limit is 10"):
        check_zip(many, UploadLimits(max_members=10))
    check_zip(many, UploadLimits(max_members=11))  # the boundary itself is allowed
    # A zip bomb: 5 MB of zeros compresses to a few kB.
    bomb = _zip(tmp_path, [("a.wav", b"\x00" * 5_000_000)], name="bomb.zip")
    assert bomb.stat().st_size < 20_000
    with pytest.raises(UnsafeUploadError, match="expands to more than 1000000 bytes"):
        check_zip(bomb, UploadLimits(max_total_bytes=1_000_000))
    with pytest.raises(UnsafeUploadError, match="upload is"):
        check_zip(bomb, UploadLimits(max_zip_bytes=1000))


def test_lying_declared_size_is_caught_while_streaming(tmp_path):
    dest = scratch_folder(parent=tmp_path) / "out"  # safe_extract's contract: a folder in scratch space
    path = _zip(tmp_path, [("a.wav", b"\x01" * 100_000)], compression=zipfile.ZIP_STORED)
    raw = bytearray(path.read_bytes())
    # Patch the declared uncompressed size (central directory and local header) down to 10 bytes.
    with zipfile.ZipFile(io.BytesIO(bytes(raw))) as archive:
        info = archive.infolist()[0]
    central = raw.rfind(b"PK\x01\x02")
    raw[central + 24:central + 28] = (10).to_bytes(4, "little")
    raw[22:26] = (10).to_bytes(4, "little")
    path.write_bytes(bytes(raw))
    with pytest.raises(UnsafeUploadError, match="corrupt zip|more bytes than declared"):
        safe_extract(path, dest)
    assert info.file_size == 100_000


def test_duplicates_empty_and_not_a_zip(tmp_path):
    dup = tmp_path / "dup.zip"
    with zipfile.ZipFile(dup, "w") as archive:
        archive.writestr("a.wav", b"1")
        with pytest.warns(UserWarning):
            archive.writestr("a.wav", b"2")
    with pytest.raises(UnsafeUploadError, match="duplicate"):
        check_zip(dup)
    empty = _zip(tmp_path, [], name="empty.zip")
    with pytest.raises(UnsafeUploadError, match="no files"):
        check_zip(empty)
    text = tmp_path / "x.zip"
    text.write_text("hello")
    with pytest.raises(UnsafeUploadError, match="not a zip"):
        check_zip(text)


def test_destination_must_be_empty(tmp_path):
    dest = scratch_folder(parent=tmp_path) / "out"  # safe_extract's contract: a folder in scratch space
    path = _zip(tmp_path, [("a.wav", b"1")])
    (dest).mkdir()
    (dest / "keep").write_text("x")
    with pytest.raises(ValueError, match="not empty"):
        safe_extract(path, dest)


def test_submission_root_with_files_and_folder(tmp_path):
    (tmp_path / "a").mkdir()
    assert submission_root(tmp_path) == tmp_path / "a"
    (tmp_path / "b.txt").write_text("x")
    assert submission_root(tmp_path) == tmp_path


def test_a_one_clip_matting_zip_is_not_unwrapped_into_its_frames(tmp_path):
    """A matting upload of one clip is one folder named by the clip id: it is the submission's content,
    not a wrapper (unwrapping it left bare PNGs that match no layout); ``sys/<clip>/`` still unwraps once."""
    from hug_vis_dataset.space.precheck import top_level_entries

    clip = "actor_0001_fearful_action_01_script_001"
    frames = [(f"{clip}/{k:06d}.png", b"\x89PNG" + b"\x00" * 10) for k in range(3)]
    scratch = scratch_folder(parent=tmp_path)  # safe_extract's contract: its folder lies in scratch space
    root = safe_extract(_zip(tmp_path, frames), scratch / "out")
    assert root == scratch / "out" and (root / clip / "000002.png").is_file()
    assert top_level_entries(name for name, _ in frames) == {clip: True}
    wrapped = [(f"sys/{name}", data) for name, data in frames]
    assert safe_extract(_zip(tmp_path, wrapped, name="w.zip"), scratch / "out2") == scratch / "out2" / "sys"
    assert top_level_entries(name for name, _ in wrapped) == {clip: True}
