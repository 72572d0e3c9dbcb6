"""Media headers checked against their payload: a WAV's chunk sizes, a video's frame count.

libsndfile trusts what it can: a WAV cut short reads as the samples that are left (its frame count
quietly shrinks to fit the file), a ``data`` chunk whose size is too small reads as that many
samples and ignores the rest, and a file cut inside the ``data`` chunk header reads as silence of
length zero. A video whose ``moov`` is at the front opens, and a cut at a packet boundary decodes
as fewer frames without a word. Each of these was scored as a good clip. This module reads the
headers (O(header): chunk headers by seeking, never the samples) and says what the payload must
hold; :mod:`hug_vis_dataset.readers.media` raises when the decode does not deliver it:

* :func:`wav_layout` -- the RIFF/WAVE chunk walk: the ``data`` chunk must fit in the file, hold a
  whole number of frames, and be followed only by well-formed chunks; the RIFF size must not
  claim more than the file holds (a cut file). ``None`` for other formats (FLAC, OGG, RF64).
* :func:`frames_problem` -- a decoded frame or sample count against the header's.

Example:
    >>> import io, struct
    >>> fmt = struct.pack("<HHIIHH", 1, 1, 16000, 32000, 2, 16)
    >>> body = b"WAVE" + b"fmt " + struct.pack("<I", 16) + fmt + b"data" + struct.pack("<I", 8) + bytes(8)
    >>> wav = b"RIFF" + struct.pack("<I", len(body)) + body
    >>> wav_layout(wav, "a.wav").frames
    4
    >>> try:
    ...     wav_layout(wav[:-2], "a.wav")
    ... except InputFileError as err:
    ...     print(err)
    a.wav: byte 44: the data chunk's header says 8 bytes (4 frames) but the file holds 6 bytes (truncated); replace it with a complete copy of the file
"""

from __future__ import annotations

import io
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from .base import InputFileError
from .regular_files import open_regular

#: The fix for a media file whose header does not match its payload.
MEDIA_FIX = "replace it with a complete copy of the file"
#: Chunk sizes that mean "until the end of the file" (written by streaming encoders).
_UNKNOWN_SIZES = (0xFFFFFFFF,)
_PRINTABLE = frozenset(range(0x20, 0x7F))


@dataclass(frozen=True)
class WavLayout:
    """Where a WAV's samples are and how many its header declares.

    Attributes:
        data_offset: byte offset of the first sample.
        data_bytes: the ``data`` chunk's size (resolved to the file's end for a streamed size).
        block_align: bytes per frame (all channels), from the ``fmt `` chunk.
        frames: ``data_bytes // block_align``: the frames a decode must deliver.
    """

    data_offset: int
    data_bytes: int
    block_align: int
    frames: int


def _open(source: "str | Path | bytes | bytearray | memoryview") -> "tuple[BinaryIO, int]":
    if isinstance(source, (bytes, bytearray, memoryview)):
        return io.BytesIO(bytes(source)), len(source)
    handle = open_regular(source, "media file")  # never a FIFO, a device, nor a file larger than any clip's
    return handle, os.fstat(handle.fileno()).st_size


def _error(name: "str | Path", where: str, problem: str) -> InputFileError:
    return InputFileError(name, where, problem, MEDIA_FIX)


def wav_layout(source: "str | Path | bytes | bytearray | memoryview", name: "str | Path | None" = None
               ) -> "WavLayout | None":
    """The layout of a RIFF/WAVE file, its chunk sizes checked against the file's size.

    Args:
        source: a path, or the file's bytes (a repo cell).
        name: the name errors give (default: ``source`` when it is a path).

    Returns:
        The :class:`WavLayout`, or None when ``source`` is not a little-endian RIFF/WAVE file
        (its own decoder checks it).

    Raises:
        InputFileError: a cut file (inside the header, a chunk or the ``data`` chunk), a ``data``
            chunk that is not a whole number of frames, bytes after it that are not a chunk (its
            size lies), or no ``fmt ``/``data`` chunk.
    """
    name = name if name is not None else (source if isinstance(source, (str, Path)) else "<bytes>")
    handle, size = _open(source)
    with handle:
        head = handle.read(12)
        if len(head) < 12:
            riff = b"RIFF\0\0\0\0WAVE"
            if head[:4] == riff[:min(4, len(head))] and len(head) and (len(head) <= 4 or head[8:] == riff[8:len(head)]):
                raise _error(name, "", f"is a WAV cut short: {size} bytes, not even its RIFF header (truncated)")
            return None
        if head[:4] != b"RIFF" or head[8:12] != b"WAVE":
            return None
        riff_size = struct.unpack("<I", head[4:8])[0]
        offset, block_align = 12, 0
        while True:
            if offset + 8 > size:
                where = "the data chunk" if block_align else "the fmt chunk"
                if offset == size:
                    raise _error(name, f"byte {offset}", f"the file ends before {where} (truncated)")
                raise _error(name, f"byte {offset}", "the file ends inside a chunk header (truncated)")
            handle.seek(offset)
            chunk, length = struct.unpack("<4sI", handle.read(8))
            start = offset + 8
            if chunk == b"data":
                if not block_align:
                    raise _error(name, f"byte {offset}", "the data chunk comes before the fmt chunk")
                if length in _UNKNOWN_SIZES:  # streamed: samples run to the end of the file
                    if riff_size not in _UNKNOWN_SIZES + (0,):  # a written RIFF size: this one lies
                        raise _error(name, f"byte {offset + 4}", f"the data chunk's size is unknown (0x{length:X}) "
                                     f"but the RIFF header gives the file's ({riff_size} bytes): the size lies")
                    length = size - start - (size - start) % block_align
                if start + length > size:
                    raise _error(name, f"byte {start}", f"the data chunk's header says {length} bytes ({length // block_align} "
                                 f"frames) but the file holds {size - start} bytes (truncated)")
                if length % block_align:
                    raise _error(name, f"byte {offset + 4}", f"the data chunk's size {length} is not a whole number "
                                 f"of {block_align}-byte frames (the size lies)")
                _check_trailing(handle, name, start + length + (length & 1), size, length)
                _check_not_swallowed(handle, name, start, length, size)
                if riff_size not in _UNKNOWN_SIZES and riff_size and 8 + riff_size > size:  # a whole chunk cut off
                    raise _error(name, "byte 4", f"the RIFF header says {8 + riff_size} bytes but the file holds "
                                                 f"{size} (truncated)")
                return WavLayout(start, length, block_align, length // block_align)
            if not set(chunk) <= _PRINTABLE:
                raise _error(name, f"byte {offset}", f"holds {chunk!r} where a chunk starts (an earlier chunk's size "
                                                     f"lies, or the file is damaged)")
            if start + length > size:
                raise _error(name, f"byte {offset}", f"the {chunk.decode('ascii')!r} chunk says {length} bytes but "
                                                     f"the file holds {size - start} bytes (truncated)")
            if chunk == b"fmt ":
                if length < 16:
                    raise _error(name, f"byte {offset}", f"the fmt chunk is {length} bytes, less than 16")
                handle.seek(start)
                channels, = struct.unpack("<H", handle.read(16)[2:4])
                handle.seek(start + 12)
                block_align, = struct.unpack("<H", handle.read(2))
                if not block_align or not channels:
                    raise _error(name, f"byte {start}", "the fmt chunk declares no channels or 0-byte frames")
            offset = start + length + (length & 1)


def _check_trailing(handle: BinaryIO, name: "str | Path", offset: int, size: int, data_bytes: int) -> None:
    """What follows the data chunk must be whole chunks (``LIST``, ``id3 ``...), nothing else."""
    if offset == size + 1:  # the pad byte of an odd data chunk left out: harmless
        return
    while offset < size:
        if offset + 8 > size:
            raise _error(name, f"byte {offset}", f"{size - offset} bytes after the data chunk of {data_bytes} bytes "
                                                 f"are not a chunk (the data chunk's size lies)")
        handle.seek(offset)
        chunk, length = struct.unpack("<4sI", handle.read(8))
        if not set(chunk) <= _PRINTABLE or offset + 8 + length > size:
            raise _error(name, f"byte {offset}", f"{size - offset} bytes after the data chunk of {data_bytes} bytes "
                                                 f"are not a chunk (the data chunk's size lies, or the file is cut)")
        offset += 8 + length + (length & 1)


#: Chunk ids that follow a WAV's data chunk (metadata editors write): one inside the claimed data
#: whose extent reaches the data's end means the data size swallowed it.
_TRAILING_IDS = (b"LIST", b"id3 ", b"ID3 ", b"bext", b"cue ", b"smpl", b"inst", b"fact", b"JUNK", b"PAD ", b"iXML",
                 b"axml", b"_PMX", b"acid", b"cart", b"umid", b"DISP", b"fmt ", b"data")
#: How much of the data chunk's end is searched for a swallowed chunk (metadata chunks are small).
SWALLOW_WINDOW = 1 << 16


def _check_not_swallowed(handle: BinaryIO, name: "str | Path", start: int, length: int, size: int) -> None:
    """A data size that lies by running over a trailing chunk (``LIST``...) reads its bytes as samples:
    refused when a known chunk id sits, on an even offset, inside the data's last :data:`SWALLOW_WINDOW`
    bytes with a size that ends at or past the data's end and within the file. (Random samples match
    that with odds of about 2**-32 per position.)"""
    end = start + length
    first = max(start, end - SWALLOW_WINDOW)
    handle.seek(first)
    tail = handle.read(end - first + 8)
    for chunk in _TRAILING_IDS:
        at = tail.find(chunk)
        while at >= 0:
            offset = first + at
            if (offset - start) % 2 == 0 and offset < end and at + 8 <= len(tail):
                extent = offset + 8 + struct.unpack("<I", tail[at + 4:at + 8])[0]
                if end <= extent <= size:
                    raise _error(name, f"byte {start - 4}", f"the data chunk's size {length} runs over a "
                                 f"{chunk.decode('ascii')!r} chunk at byte {offset} (the size lies)")
            at = tail.find(chunk, at + 1)


def frames_problem(decoded: int, declared: int, unit: str = "frames", slack: int = 0) -> "str | None":
    """Why a file that delivered ``decoded`` of the ``declared`` frames is damaged (None: it is not).

    Fewer than declared (by more than ``slack``, for a count estimated from a duration) is a file
    cut short; more is not an error (headers may undercount).

    Example:
        >>> frames_problem(3, 20)
        'its header says 20 frames but the file holds 3 (truncated)'
        >>> frames_problem(20, 20) is None, frames_problem(5, 0) is None, frames_problem(19, 20, slack=1) is None
        (True, True, True)
    """
    if declared > 0 and decoded + slack < declared:
        return f"its header says {declared} {unit} but the file holds {decoded} (truncated)"
    return None


def video_stream_problem(container) -> "tuple[str, str] | None":
    """(problem, fix) when an opened PyAV container holds no video the benchmark scores as decoded, else None.

    A video must have a video stream (an audio-only MP4 given as a video prediction failed with an index
    error), at 8 bits per sample: a 10-bit H.264/HEVC decoded to 8-bit RGB is rounded before scoring (PSNR
    moved by a dB against its full-precision frames), so it is refused in words, never rounded silently.
    """
    if not container.streams.video:
        kinds = ", ".join(sorted({s.type for s in container.streams})) or "no stream"
        return (f"has no video stream ({kinds})",
                "a video prediction must hold the video (this looks like an audio-only file)")
    fmt = container.streams.video[0].codec_context.format
    bits = max((c.bits for c in fmt.components), default=8) if fmt is not None else 8
    if bits > 8:
        return (f"is {bits}-bit video ({fmt.name}); the benchmark's references and metrics are 8-bit and decoding "
                "it to 8 bits would change its values", "encode it as 8-bit video (e.g. ffmpeg -i IN -pix_fmt "
                "yuv420p OUT)")
    return None


__all__ = ["MEDIA_FIX", "WavLayout", "frames_problem", "video_stream_problem", "wav_layout"]
