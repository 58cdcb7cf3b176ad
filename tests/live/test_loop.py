"""The live loop end to end on the simulator's truth (no rendering): decisions, drops,
operator calls, camera loss, calibration health, log failures, backpressure."""

from __future__ import annotations

import io
import json
import time

import pytest

from vision_ref.errors import SourceError
from vision_ref.live.log import MatchLog, MatchLogError
from vision_ref.live.loop import LiveConfig, LiveReferee
from vision_ref.live.scoreboard import Scoreboard
from vision_ref.live.stages import ShotTimeline, TimelineSource, TruthStages
from vision_ref.rules.match import Match, adjudicate_match


def _expected(records):
    return adjudicate_match({"format": "vision-ref.match/1", "players": ["A", "B"], "first": "A",
                             "shots": [dict(r) for r in records]})["decisions"]


def _referee(tmp_path, source, stages, reopen=None, **cfg):
    log = MatchLog(tmp_path / "m.sqlite")
    match = Match(["A", "B"], "A")
    mid = log.create_match(match)
    out = io.StringIO()
    conf = LiveConfig(**{"reconnect_s": 0.01, **cfg})
    ref = LiveReferee(source, stages, log, mid, match, scoreboard=Scoreboard(out, redraw=False), config=conf,
                      reopen=reopen)
    return ref, log, mid, out


def test_live_gives_the_decisions_of_adjudicating_the_records(tmp_path, timeline4, records4):
    ref, log, mid, out = _referee(tmp_path, TimelineSource(timeline4), TruthStages(timeline4))
    res = ref.run()
    assert res.ended == "source ended"
    assert res.decisions == _expected(records4)
    assert [s["decision"] for s in log.active_shots(mid)] == res.decisions
    assert out.getvalue().count("DECISION ") == 4
    assert res.dropped == [] and res.shed == []


def _pin_hit_frame(timeline, k, record):
    ev = next(e for e in record["events"] if e["type"] == "pin_hit" and e["by"] in ("cue", "white1", "white2"))
    return timeline.strike_frame(k) + int(ev["t"] * timeline.fps), ev


def test_frames_dropped_during_a_knock_make_it_doubtful(tmp_path, timeline4, records4):
    f, ev = _pin_hit_frame(timeline4, 0, records4[0])
    drop = [f - 1, f, f + 1]
    ref, log, mid, out = _referee(tmp_path, TimelineSource(timeline4, drop=drop), TruthStages(timeline4))
    res = ref.run()
    assert res.dropped == drop
    d0 = res.decisions[0]
    assert d0["foul"] and "F8" in d0["rules"]
    rec = log.active_shots(mid)[0]["record"]
    assert rec["dropped_frames"] == 3
    assert any(e["type"] == "doubt" and e["pin"] == ev["pin"] for e in rec["events"])
    assert any(k == "dropped" for k, _ in res.incidents)
    assert log.active_shots(mid)[0]["frames"]["dropped"] == 3


def test_a_long_gap_withholds_the_shot(tmp_path, timeline4, records4):
    f, _ = _pin_hit_frame(timeline4, 0, records4[0])
    drop = list(range(f - 10, f + 10))
    ref, log, mid, out = _referee(tmp_path, TimelineSource(timeline4, drop=drop), TruthStages(timeline4))
    res = ref.run()
    assert any(k == "not_decided" for k, _ in res.incidents)
    assert res.decisions == _expected(records4[1:])  # shot 0 never decided: A still to play


class _Scripted(TruthStages):
    """Truth stages that type operator commands at given frames."""

    def __init__(self, timeline, script, referee_box):
        super().__init__(timeline)
        self.script = dict(script)
        self.box = referee_box

    def update(self, frame):
        super().update(frame)
        line = self.script.pop(frame.index, None)
        if line:
            self.box[0].command(line)


def test_operator_calls_amend_and_undo_are_applied_and_logged_with_who(tmp_path, timeline4, records4):
    tl = timeline4
    box = []
    script = {tl.strike_frame(0) + 5: "touch @ivan",
              tl.first_frame(2) + 2: "amend cue_side",
              tl.first_frame(3) + 2: "undo @olga"}
    stages = _Scripted(tl, script, box)
    ref, log, mid, out = _referee(tmp_path, TimelineSource(tl), stages, operator="referee")
    box.append(ref)
    res = ref.run()
    r0 = dict(records4[0], calls=[{"type": "touch"}])
    r1 = dict(records4[1], calls=[{"type": "cue_side"}])
    exp = _expected([r0, r1, records4[3]])
    active = log.active_shots(mid)
    assert [s["decision"] for s in active] == exp
    assert active[0]["record"]["calls"] == [{"type": "touch", "by": "ivan"}]
    assert active[1]["origin"] == "correction" and active[1]["who"] == "referee"
    acts = [(c["action"], c["who"], c["state"]) for c in log.operator_calls(mid)]
    assert ("call", "ivan", "applied") in acts and ("amend", "referee", "done") in acts and ("undo", "olga", "done") in acts
    assert ref.match.score == exp[-1]["score"]
    assert "F3" in exp[0]["rules"] and "F9" in exp[1]["rules"]


def test_bad_command_is_a_warning_not_a_crash(tmp_path, timeline4, records4):
    tl = timeline4
    box = []
    stages = _Scripted(tl, {5: "dance", 6: "undo", 7: "pw"}, box)
    ref, log, mid, out = _referee(tmp_path, TimelineSource(tl), stages)
    box.append(ref)
    res = ref.run()
    text = out.getvalue()
    assert "unknown call 'dance'" in text and "no decision to undo" in text and "needs the ball" in text
    assert res.decisions == _expected(records4)


class _FailingSource(TimelineSource):
    def __init__(self, timeline, fail_at, **kw):
        super().__init__(timeline, **kw)
        self.fail_at = fail_at

    def frames(self):
        for f in super().frames():
            if f.index >= self.fail_at:
                raise SourceError("USB cable pulled")
            yield f


def test_camera_lost_mid_shot_pauses_never_decides_that_shot_and_reconnects(tmp_path, timeline4, records4):
    tl = timeline4
    fail_at = tl.strike_frame(1) + 20  # balls rolling
    made = []

    def factory():
        made.append(1)
        if len(made) == 1:
            return _FailingSource(tl, fail_at)
        return TimelineSource(tl, start_frame=tl.first_frame(2))

    ref, log, mid, out = _referee(tmp_path, factory(), TruthStages(tl), reopen=factory)
    res = ref.run()
    kinds = [k for k, _ in res.incidents]
    assert len(made) == 2
    assert "pause_camera" in kinds and "shot_lost" in kinds and "resume_camera" in kinds
    assert res.decisions == _expected([records4[0], records4[2], records4[3]])
    assert "camera lost: USB cable pulled" in out.getvalue()


def test_file_source_failure_ends_the_session_cleanly(tmp_path, timeline4, records4):
    tl = timeline4
    ref, log, mid, out = _referee(tmp_path, _FailingSource(tl, tl.first_frame(2)), TruthStages(tl))
    res = ref.run()
    assert res.ended.startswith("source failed")
    assert res.decisions == _expected(records4[:2])


def test_calibration_health_failing_pauses_and_recovers(tmp_path, timeline4, records4):
    tl = timeline4
    bad = range(tl.first_frame(1), tl.first_frame(2))

    def health(frame):
        return (frame.index not in bad), "table edges moved 14 px"

    log = MatchLog(tmp_path / "m.sqlite")
    match = Match(["A", "B"], "A")
    mid = log.create_match(match)
    out = io.StringIO()
    ref = LiveReferee(TimelineSource(tl), TruthStages(tl), log, mid, match, scoreboard=Scoreboard(out, redraw=False),
                      health=health, config=LiveConfig(health_every_s=0.0))
    res = ref.run()
    kinds = [k for k, _ in res.incidents]
    assert "pause_calibration" in kinds and "not_decided" in kinds and "resume_calibration" in kinds
    assert res.decisions == _expected([records4[0], records4[2], records4[3]])
    assert "table edges moved 14 px" in out.getvalue()


def test_a_decision_that_cannot_be_logged_is_never_shown(tmp_path, timeline4, records4):
    ref, log, mid, out = _referee(tmp_path, TimelineSource(timeline4), TruthStages(timeline4))
    real = log.commit_shot
    calls = []

    def flaky(*a, **k):
        calls.append(1)
        if len(calls) == 2:
            raise MatchLogError("disk full")
        return real(*a, **k)

    log.commit_shot = flaky
    res = ref.run()
    assert out.getvalue().count("DECISION ") == 1
    assert len(ref.match.decisions) == 1 and len(log.active_shots(mid)) == 1
    assert "log" in ref.paused and "disk full" in ref.paused["log"]


class _SlowWhileMoving(TruthStages):
    def update(self, frame):
        super().update(frame)
        if self.table_moving:
            time.sleep(0.0015)


def test_backpressure_no_frame_is_shed_while_anything_moves(tmp_path):
    from vision_ref.live.stages import demo_shots

    tl = ShotTimeline(demo_shots(2, seed=5), 60.0)
    src = TimelineSource(tl, size=(128, 96), motion_marks=True)
    src.realtime = True  # a camera: the buffer may shed still frames, never moving ones
    stages = _SlowWhileMoving(tl)
    ref, log, mid, out = _referee(tmp_path, src, stages, buffer_s=0.1)
    res = ref.run()
    assert res.shed, "the consumer never lagged: the test proves nothing"
    assert not [i for i in res.shed if tl.moving(i)]
    assert res.dropped == []
    recs = [tl.record(k) for k in range(2)]
    for r in recs:
        r.pop("shooter")
    assert res.decisions == _expected(recs)
    assert res.high_water <= ref.buffer.capacity


def test_the_pi_camera_through_the_loop_opens_once_releases_everything_and_reopens(tmp_path, monkeypatch):
    """The adapter against the fake picamera2, driven by the live loop: one camera open at
    a time, every request released, a vanished camera reopened with a new Picamera2."""
    import sys

    from tests.sources import fake_picamera2 as fake
    from vision_ref.sources.picamera import ExposureLock, PiCameraSource

    fake.reset("imx296", timestamps=[10**9 + int(i * 1e9 / 60) for i in range(40)])
    monkeypatch.setitem(sys.modules, "picamera2", fake)
    monkeypatch.setitem(sys.modules, "libcamera", fake.libcamera)
    lock = ExposureLock(1500, 1.0, (1.8, 1.5))

    reopened = []

    def reopen():
        reopened.append(1)
        if len(reopened) == 1:  # plugged back once; after that it stays unplugged
            fake.Picamera2.timestamps = [5 * 10**9 + int(i * 1e9 / 60) for i in range(30)]
        else:
            fake.Picamera2.open_error = RuntimeError("Camera __init__ sequence did not complete")
        return PiCameraSource(exposure=lock)

    class Count(TruthStages):
        def __init__(self):
            self.n = 0
            self.resets = 0

        def update(self, frame):
            self.n += 1

        def mark_dropped(self, i):
            pass

        table_moving = False

        def next_shot(self, shooter):
            return None

        def reset(self):
            self.resets += 1

    stages = Count()
    ref, log, mid, out = _referee(tmp_path, PiCameraSource(exposure=lock), stages, reopen=reopen,
                                  reconnect_attempts=2)
    res = ref.run()
    cams = fake.Picamera2.instances
    assert len(cams) >= 2 and all(c.closed for c in cams)
    assert all(c.released == c.requests_made for c in cams)
    assert stages.n == 70 and stages.resets >= 1
    assert res.ended.startswith("camera lost")
    assert "no more frames (camera unplugged)" in out.getvalue()
