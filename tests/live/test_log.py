import json
import sqlite3

import pytest

from vision_ref.live.log import MatchLog, MatchLogError
from vision_ref.rules.match import Match, adjudicate_match


def _play_all(log, records, calls_on=None):
    m = Match(["A", "B"], "A")
    mid = log.create_match(m, source={"spec": "test"})
    for i, r in enumerate(records):
        d = m.play(dict(r))
        log.commit_shot(mid, m, dict(r, shooter=d["shooter"]), d, frames={"strike_frame": i})
    return mid, m


def test_wal_and_schema(tmp_path):
    log = MatchLog(tmp_path / "m.sqlite")
    assert log.journal_mode == "wal"
    assert log.db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    tables = {r[0] for r in log.db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"matches", "shots", "records", "decisions", "operator_calls", "incidents"} <= tables


def test_commit_and_reload_reproduces_the_match(tmp_path, records4):
    path = tmp_path / "m.sqlite"
    log = MatchLog(path)
    mid, m = _play_all(log, records4)
    log.close()
    log2 = MatchLog(path)  # a fresh connection: what a resumed process sees
    again = log2.load_match(mid)
    assert again.score == m.score and again.turn == m.turn and again.decisions == m.decisions
    row = log2.get_match(mid)
    assert row.score == m.score and row.shots == 4 and row.status == "playing"
    expected = adjudicate_match(log2.match_file(mid))
    assert expected["decisions"] == m.decisions


def test_undo_and_correction_are_versions_with_who(tmp_path, records4):
    log = MatchLog(tmp_path / "m.sqlite")
    mid, m = _play_all(log, records4[:3])
    m.undo()
    log.undo_last(mid, m, "ref1")
    assert len(log.active_shots(mid)) == 2
    d = m.amend_calls([{"type": "cue_side"}])
    log.correct_last(mid, m, m.to_dict()["shots"][-1], d, "ref2", "amend", [{"type": "cue_side"}])
    shots = log.active_shots(mid)
    assert shots[-1]["origin"] == "correction" and shots[-1]["who"] == "ref2"
    assert "F9" in shots[-1]["decision"]["rules"]
    acts = [(c["action"], c["who"]) for c in log.operator_calls(mid)]
    assert acts == [("undo", "ref1"), ("amend", "ref2")]
    again = log.load_match(mid)
    assert again.score == m.score
    n_records = log.db.execute("SELECT COUNT(*) FROM records").fetchone()[0]
    assert n_records == 4  # 3 vision + 1 correction: nothing is overwritten


def test_pending_calls_are_applied_by_the_shot(tmp_path, records4):
    log = MatchLog(tmp_path / "m.sqlite")
    m = Match(["A", "B"], "A")
    mid = log.create_match(m)
    cid = log.add_call(mid, {"type": "touch"}, "ref")
    cid2 = log.add_call(mid, {"type": "cue_side"}, "ref")
    log.cancel_call(cid2, "ref")
    assert [c[1] for c in log.pending_calls(mid)] == [{"type": "touch"}]
    d = m.play(dict(records4[0], calls=[{"type": "touch"}]))
    log.commit_shot(mid, m, dict(records4[0], calls=[{"type": "touch"}]), d, applied_calls=[cid])
    assert log.pending_calls(mid) == []
    states = {c["call_id"]: c["state"] for c in log.operator_calls(mid)}
    assert states[cid] == "applied" and states[cid2] == "cancelled"


def test_failed_transaction_leaves_nothing(tmp_path, records4):
    log = MatchLog(tmp_path / "m.sqlite")
    m = Match(["A", "B"], "A")
    mid = log.create_match(m)
    d = m.play(dict(records4[0]))
    with pytest.raises(TypeError):
        log.commit_shot(mid, m, records4[0], d, frames={"bad": object()})  # not JSON
    assert log.active_shots(mid) == []
    assert log.db.execute("SELECT COUNT(*) FROM records").fetchone()[0] == 0


def test_tampered_log_is_detected_on_resume(tmp_path, records4):
    log = MatchLog(tmp_path / "m.sqlite")
    mid, m = _play_all(log, records4[:2])
    row = log.db.execute("SELECT decision_id, decision FROM decisions ORDER BY decision_id DESC LIMIT 1").fetchone()
    d = json.loads(row[1])
    d["score"] = {"A": 99, "B": 0}
    log.db.execute("UPDATE decisions SET decision = ? WHERE decision_id = ?", (json.dumps(d), row[0]))
    with pytest.raises(MatchLogError, match="replayed decision differs"):
        log.load_match(mid)


def test_not_a_database(tmp_path):
    p = tmp_path / "junk.sqlite"
    p.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(MatchLogError, match="not a usable match log"):
        MatchLog(p)


def test_export_json_and_csv(tmp_path, records4):
    log = MatchLog(tmp_path / "m.sqlite")
    mid, m = _play_all(log, records4)
    exp = log.export(mid)
    assert [s["decision"] for s in exp["shots"]] == m.decisions
    assert exp["match_file"]["format"] == "vision-ref.match/1"
    rows = list(__import__("csv").reader(log.export_csv(mid).splitlines()))
    assert rows[0][:3] == ["match", "shot", "shooter"]
    assert len(rows) == 5
    assert [int(r[rows[0].index("score_B")]) for r in rows[1:]][-1] == m.score["B"]
    with pytest.raises(MatchLogError, match="no match 42"):
        log.export(42)


def test_finished_status(tmp_path, records4):
    log = MatchLog(tmp_path / "m.sqlite")
    m = Match(["A", "B"], "A", target=2)
    mid = log.create_match(m)
    for r in records4:
        if m.game_over:
            break
        d = m.play(dict(r))
        log.commit_shot(mid, m, r, d)
    assert m.game_over
    assert log.get_match(mid).status == "finished" and log.get_match(mid).winner == m.winner
    assert log.last_unfinished() is None
