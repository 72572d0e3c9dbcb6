"""Reference media by reference string: a file path (release tree) or a row locator (built repo).

Workers turn a clip job's references into media with these functions, which accept either form:

* :func:`iter_reference_alpha` -- uint8 (n, H, W) chunks (repo: the FFV1 blob decoded chunk by
  chunk with :func:`hug_vis_dataset.hub.alpha.alpha_from_decoder`, never the whole clip);
* :func:`reference_alpha_info` -- (frames, width, height) without decoding pixels;
* :func:`reference_file` / :func:`reference_files` / :func:`iter_reference_files` -- a path
  PyAV can open (repo: the released bytes written to a temporary file, deleted afterwards);
* :func:`read_reference_audio` -- float32 mono samples and rate (repo: soundfile on the bytes);
* :func:`read_reference_portrait` -- the source portrait, uint8 RGB (H, W, 3).

A repo cell is one row read with ``batch_size=1`` from one row group
(:func:`hug_vis_dataset.references.locators.read_cell_bytes`), so memory does not grow with the
number of clips (nor, for alpha, with the clip's length).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, Iterable, Iterator

import numpy as np

from .locators import DatasetSourceError, RowLocator, is_row_locator, read_cell_bytes

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".webp")


def iter_reference_alpha(ref: "str | Path", chunk_frames: int = 32) -> Iterator[np.ndarray]:
    """uint8 (n, H, W) chunks of a reference alpha: a PNG folder / video path, or a repo cell.

    A repo cell holds the matte as one lossless video blob; it is decoded ``chunk_frames`` at a
    time through :func:`hug_vis_dataset.hub.alpha.alpha_from_decoder` (the ``datasets.Video``
    path), so only the compressed blob and one chunk are in memory.
    """
    if chunk_frames < 1:
        raise ValueError(f"chunk_frames must be >= 1, got {chunk_frames}")
    if not is_row_locator(ref):
        from ..readers.media import iter_alpha_frames

        yield from iter_alpha_frames(ref, chunk_frames)
        return
    from torchcodec.decoders import VideoDecoder

    from ..hub.alpha import alpha_from_decoder

    decoder = VideoDecoder(read_cell_bytes(RowLocator.parse(ref)), dimension_order="NHWC")
    yield from alpha_from_decoder(decoder, chunk_frames)


def reference_alpha_info(ref: "str | Path") -> tuple[int, int, int]:
    """(frames, width, height) of a reference alpha without decoding its pixels (repo cells).

    Example:
        >>> import tempfile, numpy as np
        >>> from hug_vis_dataset.readers.media import write_alpha_pngs
        >>> folder = tempfile.mkdtemp()
        >>> write_alpha_pngs(folder, [np.zeros((3, 4, 5), np.uint8)])
        3
        >>> reference_alpha_info(folder)
        (3, 5, 4)
    """
    if is_row_locator(ref):
        from torchcodec.decoders import VideoDecoder

        # The default "exact" seek mode scans every packet, so the count is the real one.
        decoder = VideoDecoder(read_cell_bytes(RowLocator.parse(ref)))
        return len(decoder), int(decoder.metadata.width), int(decoder.metadata.height)
    from ..readers import media

    path = Path(ref)
    if path.is_dir():
        files = media.alpha_frame_files(path)
        if not files:
            raise media.MediaError(f"no alpha PNG frames in {path.name}/")
        missing = sorted(set(range(max(files) + 1)) - set(files))
        if missing:
            raise media.MediaError(f"{path.name}/ lacks frames {missing[:10]}")
        first = media.read_png_gray(files[min(files)])
        return len(files), int(first.shape[1]), int(first.shape[0])
    info = media.video_info(path)
    return info.frames, info.width, info.height


@contextlib.contextmanager
def reference_file(ref: "str | Path", suffix: str = "") -> Iterator[str]:
    """A path to the reference media: the file itself, or a repo cell's bytes in a temp file.

    The temporary file (deleted on exit) holds the released bytes unchanged, so decoding it
    gives exactly what decoding the release file gives.

    Example:
        >>> with reference_file("/data/clip.mp4") as path:
        ...     path
        '/data/clip.mp4'
    """
    if not is_row_locator(ref):
        yield str(ref)
        return
    from ..outputs import scratch

    locator = RowLocator.parse(ref)
    data = read_cell_bytes(locator)
    # A scratch folder of its own: removed when the block ends, and by the exit path on a stop.
    with scratch(prefix=f"hugvis-{locator.clip_id}-") as folder:
        path = folder / f"cell{suffix or '.bin'}"
        path.write_bytes(data)
        del data
        yield str(path)


@contextlib.contextmanager
def reference_files(reference: "dict[str, str] | Any", kinds: "tuple[str, ...]") -> Iterator[dict[str, str]]:
    """``reference`` with its repo cells of ``kinds`` turned into temporary files for the block's life."""
    wanted = [k for k in kinds if is_row_locator(reference.get(k, ""))]
    if not wanted:
        yield dict(reference)
        return
    with contextlib.ExitStack() as stack:
        files = {k: stack.enter_context(reference_file(reference[k], ".mp4")) for k in wanted}
        yield {**reference, **files}


def iter_reference_files(refs: Iterable["str | Path"], suffix: str = "") -> Iterator[str]:
    """Paths of several references, one temporary file alive at a time (for set metrics, FID)."""
    for ref in refs:
        with reference_file(ref, suffix) as path:
            yield path


def read_reference_audio(ref: "str | Path") -> tuple[np.ndarray, int]:
    """float32 mono samples (channel mean) and rate, decoded exactly as ``media.read_audio`` does.

    Example:
        >>> import tempfile, os, numpy as np
        >>> from hug_vis_dataset.readers.media import write_wav
        >>> path = os.path.join(tempfile.mkdtemp(), "a.wav")
        >>> write_wav(path, np.array([0.0, 0.5, -0.5]), 16000)
        >>> audio, rate = read_reference_audio(path)
        >>> audio.dtype, rate, audio.round(3).tolist()
        (dtype('float32'), 16000, [0.0, 0.5, -0.5])
    """
    if not is_row_locator(ref):
        from ..readers.media import read_audio

        return read_audio(ref, mono=True)
    from ..readers.media import decode_audio

    locator = RowLocator.parse(ref)
    # The same checks as a file (chunk sizes against the bytes, samples against the header).
    return decode_audio(read_cell_bytes(locator), f"the {locator.column} of {locator.clip_id}", mono=True)


def read_reference_portrait(ref: "str | Path") -> np.ndarray:
    """The source portrait as uint8 RGB (H, W, 3).

    A repo cell holds it as a lossless PNG (the ``source_frame`` column); a path is an image file
    or a video whose first frame is the portrait (the builder stores exactly that frame).
    """
    if is_row_locator(ref):
        import cv2

        locator = RowLocator.parse(ref)
        image = cv2.imdecode(np.frombuffer(read_cell_bytes(locator), np.uint8), cv2.IMREAD_COLOR)
        if image is None:
            raise DatasetSourceError(f"the {locator.column} of {locator.clip_id} is not a readable image")
        return np.ascontiguousarray(image[..., ::-1])
    from ..readers.media import MediaError, iter_video_frames

    if Path(ref).suffix.lower() in IMAGE_SUFFIXES:
        import cv2

        image = cv2.imread(str(ref), cv2.IMREAD_COLOR)
        if image is None:
            raise MediaError(f"cannot read the source portrait {ref}: not a readable image")
        return np.ascontiguousarray(image[..., ::-1])
    return next(iter_video_frames(ref, chunk_frames=1))[0]
