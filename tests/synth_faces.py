"""Test helper: where the synthetic figure's head is, as a stand-in face detector for tests that
cannot load the real SCRFD weights (shared by the CSIM, Sync and ONNX pipeline tests)."""

import numpy as np


def head_box(frame: np.ndarray) -> list[tuple[float, float, float, float]]:
    """Box of the synthetic figure's head (hair + face): foreground, i.e. far from the colour of
    the frame's top and bottom rows, in the rows from the figure's top down 24% of the frame
    height; an empty list when the frame holds no figure."""
    f = frame.astype(np.int32)
    bg = np.median(np.concatenate([f[0], f[-1]]), axis=0)
    fg = np.abs(f - bg).sum(-1) > 90
    rows = np.flatnonzero(fg.any(1))
    if rows.size == 0:
        return []
    r0 = rows[0]
    r1 = min(len(fg), r0 + int(0.24 * len(fg)))
    cols = np.flatnonzero(fg[r0:r1].any(0))
    return [(float(cols[0]), float(r0), float(cols[-1] + 1), float(r1))]
