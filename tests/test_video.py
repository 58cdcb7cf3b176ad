import os
import sys

import pytest

from vision_ref.video import _read_exact, _widen_pipe


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pipe sizes are a Linux fcntl")
def test_the_reader_pipe_is_widened_to_hold_a_frame():
    import fcntl

    r, w = os.pipe()
    try:
        with os.fdopen(r, "rb", buffering=0) as stream:
            frame_bytes = 728 * 544 * 3 // 2
            _widen_pipe(stream, frame_bytes)
            assert fcntl.fcntl(r, getattr(fcntl, "F_GETPIPE_SZ", 1032)) >= frame_bytes
            # a whole frame now fits in the pipe at once, and comes out exactly
            payload = bytes(range(256)) * (frame_bytes // 256)
            os.write(w, payload)
            os.close(w)
            w = -1
            assert _read_exact(stream, len(payload)) == payload
            assert _read_exact(stream, 10) == b""
    finally:
        if w >= 0:
            os.close(w)


def test_widening_a_pipe_that_cannot_be_widened_is_harmless(tmp_path):
    with open(tmp_path / "f", "wb+", buffering=0) as f:  # a file, not a pipe: the fcntl fails quietly
        _widen_pipe(f, 1 << 20)
        f.write(b"abc")
        f.seek(0)
        assert _read_exact(f, 3) == b"abc"
