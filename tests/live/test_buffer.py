import threading
import time

import numpy as np

from vision_ref.live.buffer import FrameBuffer, MotionGate
from vision_ref.messages import Frame


def _frames(n, moving_from=None, size=(96, 128), seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        img = np.clip(rng.normal(100, 2, size), 0, 255).astype(np.uint8)
        if moving_from is not None and i >= moving_from:
            x = 10 + 3 * (i - moving_from)
            img[40:56, x:x + 16] = 250  # a ball moving 3 px a frame
        out.append(Frame(i, i * 16_666_667, y=img))
    return out


def test_motion_gate_ignores_noise_and_sees_a_ball():
    gate = MotionGate()
    flags = [gate.moving(f) for f in _frames(20, moving_from=10)]
    assert flags[0] is True  # no previous frame: assume motion
    assert not any(flags[1:10]) and all(flags[11:20])


def test_block_policy_loses_nothing():
    buf = FrameBuffer(3, "block")
    frames = _frames(50)
    got = []

    def consume():
        while len(got) < 50:
            item = buf.get(0.5)
            if item:
                got.append(item[1].index)
                time.sleep(0.002)

    t = threading.Thread(target=consume)
    t.start()
    for f in frames:
        assert buf.put(f)
    t.join(5)
    assert got == list(range(50)) and buf.high_water <= 3 and buf.shed == []
    assert buf.blocked_s > 0


def test_shed_still_sheds_only_still_frames_when_nothing_moves():
    buf = FrameBuffer(4, "shed_still")
    for f in _frames(12):  # still table, nobody consuming
        buf.put(f)
    assert [f.index for f, _ in buf._q] == [0, 9, 10, 11]  # frame 0 has no predecessor: kept as moving
    assert buf.take_shed() == list(range(1, 9)) and buf.shed == []


def test_never_sheds_while_the_pipeline_says_moving():
    buf = FrameBuffer(4, "shed_still")
    buf.consumer_moving = True
    frames = _frames(10)
    done = threading.Event()

    def produce():
        for f in frames:
            buf.put(f)
        done.set()

    t = threading.Thread(target=produce, daemon=True)
    t.start()
    time.sleep(0.3)
    assert not done.is_set() and len(buf) == 4 and buf.shed == []  # producer held back
    got = []
    while len(got) < 10:
        item = buf.get(1.0)
        got.append(item[1].index)
    assert got == list(range(10))


def test_moving_frames_are_never_shed_even_when_the_pipeline_lags():
    buf = FrameBuffer(4, "shed_still")
    frames = _frames(12, moving_from=2)  # the table starts moving at frame 2
    t = threading.Thread(target=lambda: [buf.put(f) for f in frames], daemon=True)
    t.start()
    time.sleep(0.3)
    assert all(i < 2 for i in buf.shed)  # only the still frames before motion may go
    got = []
    while True:
        item = buf.get(0.3)
        if item is None:
            break
        got.append(item[1].index)
    assert set(range(2, 12)) <= set(got)


def test_controls_come_after_queued_frames():
    buf = FrameBuffer(10)
    for f in _frames(3):
        buf.put(f)
    buf.put_control("end")
    kinds = [buf.get(0.1)[0] for _ in range(4)]
    assert kinds == ["frame", "frame", "frame", "end"]
    assert buf.get(0.01) is None
