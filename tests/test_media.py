"""Chunked media I/O: round trips, chunk independence, clear errors."""

import numpy as np
import pytest

from hug_vis_dataset.readers import media


def test_alpha_png_round_trip_is_bit_exact_and_chunking_does_not_matter(tmp_path):
    rng = np.random.default_rng(0)
    frames = rng.integers(0, 256, size=(7, 9, 11), dtype=np.uint8)
    assert media.write_alpha_pngs(tmp_path / "a", iter([frames[:3], frames[3:]])) == 7
    for chunk in (1, 2, 7, 32):
        got = np.concatenate(list(media.iter_alpha_frames(tmp_path / "a", chunk_frames=chunk)))
        np.testing.assert_array_equal(got, frames)


def test_alpha_frames_are_matched_by_number_and_gaps_are_errors(tmp_path):
    frames = np.arange(3 * 4 * 4, dtype=np.uint8).reshape(3, 4, 4)
    media.write_alpha_pngs(tmp_path / "a", [frames])
    (tmp_path / "a" / "000001.png").unlink()
    with pytest.raises(media.MediaError, match=r"lacks frames \[1\]"):
        list(media.iter_alpha_frames(tmp_path / "a"))


def test_png_reader_rejects_colour_16bit_and_corrupt_files(tmp_path):
    import cv2

    cv2.imwrite(str(tmp_path / "rgb.png"), np.zeros((4, 4, 3), np.uint8))
    cv2.imwrite(str(tmp_path / "deep.png"), np.zeros((4, 4), np.uint16))
    (tmp_path / "bad.png").write_bytes(b"\x89PNG\r\n\x1a\nnot really")
    with pytest.raises(media.MediaError, match="3 channels"):
        media.read_png_gray(tmp_path / "rgb.png")
    with pytest.raises(media.MediaError, match="uint16"):
        media.read_png_gray(tmp_path / "deep.png")
    with pytest.raises(media.MediaError, match="corrupt"):
        media.read_png_gray(tmp_path / "bad.png")
    with pytest.raises(media.MediaError, match="missing"):
        media.read_png_gray(tmp_path / "absent.png")


def test_video_write_read_counts_and_chunks(tmp_path):
    # smooth content: yuv420p chroma subsampling is lossy on pixel noise by design
    yy, xx = np.mgrid[0:32, 0:48]
    frames = np.stack([np.stack([(xx * 5 + k * 7) % 256, yy * 7, np.full_like(xx, 128 + k)], -1)
                       for k in range(10)]).astype(np.uint8)
    path = tmp_path / "v.mp4"
    assert media.write_video(path, [frames[:4], frames[4:]], fps=30) == 10
    info = media.video_info(path)
    assert (info.frames, info.width, info.height) == (10, 48, 32)
    assert info.fps == pytest.approx(30.0)
    chunks = list(media.iter_video_frames(path, chunk_frames=3))
    assert [len(c) for c in chunks] == [3, 3, 3, 1]
    decoded = np.concatenate(chunks)
    assert decoded.shape == frames.shape
    # H.264 at crf 18 is lossy but close on average
    assert np.abs(decoded.astype(int) - frames).mean() < 4


def test_unreadable_video_is_a_media_error(tmp_path):
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(b"\x00" * 100)
    with pytest.raises(media.MediaError):
        media.video_info(bad)


def test_audio_round_trip_mono_and_resample(tmp_path):
    t = np.arange(16000) / 16000
    tone = (0.5 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
    media.write_wav(tmp_path / "a.wav", tone, 16000)
    audio, rate = media.read_audio(tmp_path / "a.wav")
    assert rate == 16000
    np.testing.assert_allclose(audio, np.round(tone * 32767) / 32768, atol=1 / 32768)
    assert media.audio_info(tmp_path / "a.wav") == (16000, 16000, 1)
    up = media.resample(audio, 16000, 48000)
    assert len(up) == 48000
    # a 440 Hz tone stays a 440 Hz tone
    spectrum = np.abs(np.fft.rfft(up))
    assert np.argmax(spectrum) == pytest.approx(440, abs=1)


def test_h264_bytes_are_reproducible_under_cpu_load(tmp_path):
    """The synth relies on identical bytes for a seed. With PyAV's default (auto-threaded) RGB ->
    YUV conversion the same frames encoded to different bytes here while the CPU was busy; encode
    them repeatedly while both cores are loaded."""
    import hashlib
    import multiprocessing as mp

    yy, xx = np.mgrid[0:36, 0:64]
    rng = np.random.default_rng(2)
    frames = np.clip(np.stack([np.stack([xx * 3 + k, yy * 5, 200 - xx - k], -1) + rng.normal(0, 8, (36, 64, 3))
                               for k in range(6)]), 0, 255).astype(np.uint8)
    ctx = mp.get_context("spawn")
    stop = ctx.Event()
    burners = [ctx.Process(target=_burn, args=(stop,)) for _ in range(2)]
    for proc in burners:
        proc.start()
    try:
        digests = set()
        for i in range(30):
            path = tmp_path / f"{i}.mp4"
            media.write_video(path, [frames], fps=30, crf=23, preset="veryfast" if i % 2 else "medium")
            digests.add((i % 2, hashlib.sha256(path.read_bytes()).hexdigest()))
    finally:
        stop.set()
        for proc in burners:
            proc.join()
    assert len(digests) == 2  # one digest per preset


def _burn(stop):
    while not stop.is_set():
        sum(range(10000))


def test_rgb_to_yuv420p_agrees_with_ffmpeg_conversion_within_rounding():
    import av

    for h, w in ((36, 64), (180, 320)):
        yy, xx = np.mgrid[0:h, 0:w]
        rgb = np.stack([xx * 255 // (w - 1), yy * 255 // (h - 1), 255 - xx * 255 // (w - 1)], -1).astype(np.uint8)
        ours = media.rgb_to_yuv420p(rgb)
        ffmpeg = av.VideoFrame.from_ndarray(rgb, format="rgb24").reformat(format="yuv420p").to_ndarray()
        assert ours.shape == ffmpeg.shape == (h * 3 // 2, w)
        assert np.abs(ours.astype(int) - ffmpeg).max() <= 1
    # BT.601 limited range by hand: black, white, pure red
    assert media.rgb_to_yuv420p(np.zeros((2, 2, 3), np.uint8)).ravel().tolist() == [16] * 4 + [128, 128]
    red = np.zeros((2, 2, 3), np.uint8)
    red[..., 0] = 255
    y, u, v = media.rgb_to_yuv420p(red).ravel()[[0, 4, 5]]
    assert (y, u, v) == (((66 * 255 + 128) >> 8) + 16, ((-38 * 255 + 128) >> 8) + 128, ((112 * 255 + 128) >> 8) + 128)
    with pytest.raises(ValueError, match="even"):
        media.rgb_to_yuv420p(np.zeros((3, 4, 3), np.uint8))


def test_kept_chunks_are_independent_and_equal_one_chunk_decode(tmp_path):
    """Chunks are built in preallocated arrays: a consumer may keep every chunk it got (none is
    reused for the next), and any chunk size gives the frames of a one-chunk decode exactly."""
    yy, xx = np.mgrid[0:16, 0:24]
    frames = np.stack([np.stack([(xx * 9 + k * 31) % 256, (yy * 11 + k) % 256, np.full_like(xx, 40 + 20 * k)], -1)
                       for k in range(9)]).astype(np.uint8)
    media.write_video(tmp_path / "v.mp4", [frames])
    whole = next(media.iter_video_frames(tmp_path / "v.mp4", chunk_frames=9))
    for chunk in (1, 2, 4, 8):
        kept = list(media.iter_video_frames(tmp_path / "v.mp4", chunk_frames=chunk))
        assert len({id(c.base if c.base is not None else c) for c in kept}) == len(kept)
        np.testing.assert_array_equal(np.concatenate(kept), whole)
    media.write_alpha_pngs(tmp_path / "a", [frames[..., 0]])
    kept = list(media.iter_alpha_frames(tmp_path / "a", chunk_frames=4))
    np.testing.assert_array_equal(np.concatenate(kept), frames[..., 0])


def test_an_alpha_frame_of_another_size_is_one_error_naming_it(tmp_path):
    import cv2

    media.write_alpha_pngs(tmp_path / "a", [np.zeros((3, 8, 12), np.uint8)])
    cv2.imwrite(str(tmp_path / "a" / "000002.png"), np.zeros((6, 12), np.uint8))
    with pytest.raises(media.MediaError, match=r"000002\.png is 12x6, the clip's earlier frames 12x8"):
        list(media.iter_alpha_frames(tmp_path / "a"))


def _frames(n: int) -> np.ndarray:
    yy, xx = np.mgrid[0:16, 0:24]
    return np.stack([np.stack([(xx * 9 + k * 31) % 256, (yy * 11 + k) % 256, np.full_like(xx, 40 + 20 * k)], -1)
                     for k in range(n)]).astype(np.uint8)


@pytest.mark.parametrize("kind", ["video", "alpha"])
def test_dropped_chunks_are_refilled_and_held_ones_or_their_views_never(tmp_path, kind):
    """Chunk arrays alternate between two buffers when the consumer drops them (a fresh 1080p chunk is
    page-faulted in by the kernel); a chunk still held, whole or through a view, is never refilled."""
    frames = _frames(12)
    if kind == "video":
        media.write_video(tmp_path / "v.mp4", [frames])
        decode = lambda: media.iter_video_frames(tmp_path / "v.mp4", chunk_frames=2)  # noqa: E731
        whole = next(media.iter_video_frames(tmp_path / "v.mp4", chunk_frames=12))
    else:
        media.write_alpha_pngs(tmp_path / "a", [frames[..., 0]])
        decode = lambda: media.iter_alpha_frames(tmp_path / "a", chunk_frames=2)  # noqa: E731
        whole = frames[..., 0]
    # A plain loop: two arrays in turn, the values of a one-chunk decode.
    arrays, values = [], []
    for chunk in decode():
        arrays.append(chunk.__array_interface__["data"][0])
        values.append(chunk.copy())
    assert len(set(arrays)) == 2 and arrays[0::2] == [arrays[0]] * 3 and arrays[1::2] == [arrays[1]] * 3
    np.testing.assert_array_equal(np.concatenate(values), whole)
    # Held: every third chunk kept whole, every other third through a one-frame view.
    held, views, copies = [], [], []
    for k, chunk in enumerate(decode()):
        copies.append(chunk.copy())
        if k % 3 == 0:
            held.append((k, chunk))
        elif k % 3 == 1:
            views.append((k, chunk[1:]))
    for k, chunk in held:
        np.testing.assert_array_equal(chunk, copies[k])
    for k, view in views:
        np.testing.assert_array_equal(view, copies[k][1:])


def test_a_decoded_frame_is_not_held_while_the_next_chunk_is_decoded(tmp_path):
    """The frame array PyAV returns is dropped once copied into its chunk. Held across the next
    frame's decode, it made glibc shrink and regrow the heap by a frame per frame: at 1080p, 180 k page
    faults per 6 s video against 6 k (docs/PERFORMANCE.md). Seen here as the decoder's locals while it
    waits at a chunk."""
    media.write_video(tmp_path / "v.mp4", [_frames(6)])
    decoder = media.iter_video_frames(tmp_path / "v.mp4", chunk_frames=2)
    first = next(decoder)
    arrays = {name for name, value in decoder.gi_frame.f_locals.items()
              if isinstance(value, np.ndarray) and value is not first}
    assert arrays == set(), arrays  # only the chunk handed out is referred to; no frame beside it
    np.testing.assert_array_equal(np.concatenate([first, *decoder]),
                                  next(media.iter_video_frames(tmp_path / "v.mp4", chunk_frames=6)))
