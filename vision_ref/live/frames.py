"""Frame pixel conversions the live loop needs (health checks want BGR)."""

from __future__ import annotations

import numpy as np

from vision_ref.messages import Frame


def frame_to_bgr(frame: Frame) -> np.ndarray:
    """The frame as BGR uint8: its own ``bgr``, or converted from Y + interleaved UV (NV12)."""
    import cv2

    if frame.bgr is not None:
        return frame.bgr
    h, w = frame.shape
    if frame.uv is None:
        return cv2.cvtColor(frame.y, cv2.COLOR_GRAY2BGR)
    nv12 = np.vstack([frame.y, frame.uv.reshape(h // 2, w)])
    return cv2.cvtColor(nv12, cv2.COLOR_YUV2BGR_NV12)
