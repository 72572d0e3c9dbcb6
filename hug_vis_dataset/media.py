"""Old import path, kept for one release: moved to :mod:`hug_vis_dataset.readers.media` (docs/CHANGELOG.md)."""

from .readers.media import (HugvisError, InputFileError, MEDIA_FIX, frames_problem, video_stream_problem,
    wav_layout, check_regular, DEFAULT_CHUNK_FRAMES, X264_REPRODUCIBLE, MATTE_CHANNEL_TOLERANCE, MediaError,
    MediaHeaderError, MediaFileError, video_stream, check_decoded, ChunkBuffers, VideoInfo, video_info,
    count_decoded_frames, iter_video_frames, write_video, rgb_to_yuv420p, read_png_gray, alpha_frame_files,
    iter_alpha_frames, write_alpha_pngs, decode_audio, read_audio, audio_info, downmix_note, resample,
    write_wav, paired_video_chunks)  # noqa: F401
