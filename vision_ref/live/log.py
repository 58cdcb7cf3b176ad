"""The match log: an embedded SQLite database (WAL) that survives a crash or power loss.

Tables: ``matches`` (players, target, modes, status, score), ``shots`` (one per
decided shot, with its frames and any drops), ``records`` (every version of a
shot's record: the vision pipeline's, then each operator correction), ``decisions``
(the adjudicator's answer to each record version), ``operator_calls`` (every
keyboard action with who made it: calls, undo, corrections, pauses) and
``incidents`` (camera lost, calibration failing, frames dropped, recording trimmed).

Durability: WAL journal with ``synchronous=FULL``, so a transaction that returned
is on disk even if the power goes the next instant. The live loop commits a
decision *before* it shows it, so everything the players saw survives.
Resuming replays the active records through a fresh :class:`Match` and checks
each replayed decision against the stored one.
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from vision_ref.errors import VisionRefError

SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS matches (
    match_id INTEGER PRIMARY KEY,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    players TEXT NOT NULL,
    first TEXT NOT NULL,
    target INTEGER NOT NULL,
    modes TEXT NOT NULL,
    start_score TEXT NOT NULL,
    settings TEXT,
    table_spec TEXT,
    status TEXT NOT NULL CHECK (status IN ('playing', 'finished', 'abandoned')),
    score TEXT NOT NULL,
    winner TEXT,
    source TEXT,
    calibration TEXT,
    recording_dir TEXT
);
CREATE TABLE IF NOT EXISTS shots (
    shot_id INTEGER PRIMARY KEY,
    match_id INTEGER NOT NULL REFERENCES matches (match_id),
    number INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('decided', 'undone')),
    created_at TEXT NOT NULL,
    frames TEXT
);
CREATE INDEX IF NOT EXISTS shots_by_match ON shots (match_id, status, number);
CREATE TABLE IF NOT EXISTS records (
    record_id INTEGER PRIMARY KEY,
    shot_id INTEGER NOT NULL REFERENCES shots (shot_id),
    record TEXT NOT NULL,
    origin TEXT NOT NULL CHECK (origin IN ('vision', 'correction', 'import')),
    who TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS decisions (
    decision_id INTEGER PRIMARY KEY,
    shot_id INTEGER NOT NULL REFERENCES shots (shot_id),
    record_id INTEGER NOT NULL REFERENCES records (record_id),
    decision TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS operator_calls (
    call_id INTEGER PRIMARY KEY,
    match_id INTEGER NOT NULL REFERENCES matches (match_id),
    shot_id INTEGER REFERENCES shots (shot_id),
    action TEXT NOT NULL,
    payload TEXT,
    who TEXT NOT NULL,
    created_at TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'done' CHECK (state IN ('pending', 'applied', 'cancelled', 'done'))
);
CREATE TABLE IF NOT EXISTS incidents (
    incident_id INTEGER PRIMARY KEY,
    match_id INTEGER REFERENCES matches (match_id),
    kind TEXT NOT NULL,
    message TEXT NOT NULL,
    data TEXT,
    created_at TEXT NOT NULL
);
"""


class MatchLogError(VisionRefError):
    """The match log cannot be opened, or has no such match / is inconsistent."""

    exit_code = 6


def _now() -> str:
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1000):03d}Z"


def _j(v: Any) -> str | None:
    return None if v is None else json.dumps(v, ensure_ascii=False, separators=(",", ":"))


def _u(s: str | None) -> Any:
    return None if s is None else json.loads(s)


@dataclass
class MatchRow:
    match_id: int
    created_at: str
    updated_at: str
    players: list[str]
    first: str
    target: int
    modes: dict
    start_score: dict
    settings: dict | None
    table: dict | None
    status: str
    score: dict
    winner: str | None
    source: dict | None
    calibration: str | None
    recording_dir: str | None
    shots: int = 0

    def to_dict(self) -> dict:
        return dict(self.__dict__)


class MatchLog:
    """One SQLite file; safe to open from several processes (one writer at a time)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(str(self.path), timeout=10.0, isolation_level=None, check_same_thread=False)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=FULL")
            self.db.execute("PRAGMA foreign_keys=ON")
            self.db.executescript(SCHEMA)
            row = self.db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if row is None:
                self.db.execute("INSERT INTO meta (key, value) VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
            elif int(row[0]) != SCHEMA_VERSION:
                raise MatchLogError(f"{self.path}: match log schema {row[0]}, this version reads {SCHEMA_VERSION}")
        except sqlite3.DatabaseError as exc:
            raise MatchLogError(f"{self.path}: not a usable match log ({exc})") from None
        except OSError as exc:
            raise MatchLogError(f"{self.path}: cannot open the match log ({exc})") from None

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "MatchLog":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---- transactions ---------------------------------------------------------
    def _tx(self):
        return _Tx(self.db)

    @property
    def journal_mode(self) -> str:
        return self.db.execute("PRAGMA journal_mode").fetchone()[0]

    # ---- matches ------------------------------------------------------------------
    def create_match(self, match, *, source: dict | None = None, calibration: str | None = None,
                     recording_dir: str | None = None) -> int:
        """Log a new :class:`Match` (before any shot); returns its id."""
        d = match.to_dict()
        now = _now()
        with self._tx() as c:
            cur = c.execute(
                "INSERT INTO matches (created_at, updated_at, players, first, target, modes, start_score, settings,"
                " table_spec, status, score, winner, source, calibration, recording_dir)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'playing', ?, NULL, ?, ?, ?)",
                (now, now, _j(d["players"]), d["first"], d["target"], _j(d["modes"]), _j(d["score"]),
                 _j(d.get("settings")), _j(d.get("table")), _j(match.score), _j(source), calibration, recording_dir))
            return int(cur.lastrowid)

    def _match_row(self, r) -> MatchRow:
        return MatchRow(r[0], r[1], r[2], _u(r[3]), r[4], r[5], _u(r[6]), _u(r[7]), _u(r[8]), _u(r[9]), r[10],
                        _u(r[11]), r[12], _u(r[13]), r[14], r[15], int(r[16] or 0))

    _MATCH_COLS = ("m.match_id, m.created_at, m.updated_at, m.players, m.first, m.target, m.modes, m.start_score,"
                   " m.settings, m.table_spec, m.status, m.score, m.winner, m.source, m.calibration, m.recording_dir,"
                   " (SELECT COUNT(*) FROM shots s WHERE s.match_id = m.match_id AND s.status = 'decided')")

    def get_match(self, match_id: int) -> MatchRow:
        r = self.db.execute(f"SELECT {self._MATCH_COLS} FROM matches m WHERE m.match_id = ?", (match_id,)).fetchone()
        if r is None:
            raise MatchLogError(f"{self.path}: no match {match_id}")
        return self._match_row(r)

    def list_matches(self) -> list[MatchRow]:
        rows = self.db.execute(f"SELECT {self._MATCH_COLS} FROM matches m ORDER BY m.match_id").fetchall()
        return [self._match_row(r) for r in rows]

    def last_unfinished(self) -> int | None:
        r = self.db.execute("SELECT match_id FROM matches WHERE status = 'playing' ORDER BY match_id DESC LIMIT 1").fetchone()
        return None if r is None else int(r[0])

    def set_status(self, match_id: int, status: str) -> None:
        with self._tx() as c:
            c.execute("UPDATE matches SET status = ?, updated_at = ? WHERE match_id = ?", (status, _now(), match_id))

    def _update_score(self, c, match_id: int, match) -> None:
        status = "finished" if match.game_over else "playing"
        c.execute("UPDATE matches SET score = ?, winner = ?, status = ?, updated_at = ? WHERE match_id = ?",
                  (_j(match.score), match.winner, status, _now(), match_id))

    # ---- shots ----------------------------------------------------------------------
    def commit_shot(self, match_id: int, match, record: dict, decision: dict, *, frames: dict | None = None,
                    who: str = "vision", applied_calls: list[int] = ()) -> int:
        """Store a decided shot (record + decision + the match's new score) in one
        transaction; the pending operator calls it used are marked applied."""
        now = _now()
        with self._tx() as c:
            cur = c.execute("INSERT INTO shots (match_id, number, status, created_at, frames) VALUES (?, ?, 'decided', ?, ?)",
                            (match_id, int(decision["shot"]), now, _j(frames)))
            shot_id = int(cur.lastrowid)
            rid = c.execute("INSERT INTO records (shot_id, record, origin, who, created_at) VALUES (?, ?, 'vision', ?, ?)",
                            (shot_id, _j(record), who, now)).lastrowid
            c.execute("INSERT INTO decisions (shot_id, record_id, decision, created_at) VALUES (?, ?, ?, ?)",
                      (shot_id, rid, _j(decision), now))
            for cid in applied_calls:
                c.execute("UPDATE operator_calls SET state = 'applied', shot_id = ? WHERE call_id = ?", (shot_id, cid))
            self._update_score(c, match_id, match)
        return shot_id

    def _last_shot_id(self, c, match_id: int) -> int | None:
        r = c.execute("SELECT shot_id FROM shots WHERE match_id = ? AND status = 'decided' ORDER BY number DESC, shot_id DESC"
                      " LIMIT 1", (match_id,)).fetchone()
        return None if r is None else int(r[0])

    def undo_last(self, match_id: int, match, who: str) -> int:
        """Mark the last decided shot undone (the Match has already taken it back)."""
        with self._tx() as c:
            sid = self._last_shot_id(c, match_id)
            if sid is None:
                raise MatchLogError(f"match {match_id}: no shot to undo")
            c.execute("UPDATE shots SET status = 'undone' WHERE shot_id = ?", (sid,))
            c.execute("INSERT INTO operator_calls (match_id, shot_id, action, payload, who, created_at) VALUES (?, ?, 'undo', NULL, ?, ?)",
                      (match_id, sid, who, _now()))
            self._update_score(c, match_id, match)
        return sid

    def correct_last(self, match_id: int, match, record: dict, decision: dict, who: str,
                     action: str = "amend", payload: Any = None) -> int:
        """A new version of the last shot's record (an operator correction) and its decision."""
        now = _now()
        with self._tx() as c:
            sid = self._last_shot_id(c, match_id)
            if sid is None:
                raise MatchLogError(f"match {match_id}: no shot to correct")
            rid = c.execute("INSERT INTO records (shot_id, record, origin, who, created_at) VALUES (?, ?, 'correction', ?, ?)",
                            (sid, _j(record), who, now)).lastrowid
            c.execute("INSERT INTO decisions (shot_id, record_id, decision, created_at) VALUES (?, ?, ?, ?)",
                      (sid, rid, _j(decision), now))
            c.execute("INSERT INTO operator_calls (match_id, shot_id, action, payload, who, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                      (match_id, sid, action, _j(payload), who, now))
            self._update_score(c, match_id, match)
        return sid

    def active_shots(self, match_id: int) -> list[dict]:
        """Decided shots in order, each with its latest record and decision."""
        rows = self.db.execute(
            "SELECT s.shot_id, s.number, s.frames, s.created_at,"
            " (SELECT r.record FROM records r WHERE r.shot_id = s.shot_id ORDER BY r.record_id DESC LIMIT 1),"
            " (SELECT r.who FROM records r WHERE r.shot_id = s.shot_id ORDER BY r.record_id DESC LIMIT 1),"
            " (SELECT r.origin FROM records r WHERE r.shot_id = s.shot_id ORDER BY r.record_id DESC LIMIT 1),"
            " (SELECT d.decision FROM decisions d WHERE d.shot_id = s.shot_id ORDER BY d.decision_id DESC LIMIT 1)"
            " FROM shots s WHERE s.match_id = ? AND s.status = 'decided' ORDER BY s.number, s.shot_id", (match_id,)).fetchall()
        return [{"shot_id": r[0], "number": r[1], "frames": _u(r[2]), "created_at": r[3], "record": _u(r[4]),
                 "who": r[5], "origin": r[6], "decision": _u(r[7])} for r in rows]

    # ---- operator calls, incidents ------------------------------------------------------
    def add_call(self, match_id: int, call: dict, who: str) -> int:
        with self._tx() as c:
            return int(c.execute("INSERT INTO operator_calls (match_id, action, payload, who, created_at, state)"
                                 " VALUES (?, 'call', ?, ?, ?, 'pending')", (match_id, _j(call), who, _now())).lastrowid)

    def cancel_call(self, call_id: int, who: str) -> None:
        with self._tx() as c:
            c.execute("UPDATE operator_calls SET state = 'cancelled' WHERE call_id = ? AND state = 'pending'", (call_id,))
            mid = c.execute("SELECT match_id, payload FROM operator_calls WHERE call_id = ?", (call_id,)).fetchone()
            if mid:
                c.execute("INSERT INTO operator_calls (match_id, action, payload, who, created_at) VALUES (?, 'cancel', ?, ?, ?)",
                          (mid[0], mid[1], who, _now()))

    def pending_calls(self, match_id: int) -> list[tuple[int, dict, str]]:
        rows = self.db.execute("SELECT call_id, payload, who FROM operator_calls WHERE match_id = ? AND state = 'pending'"
                               " ORDER BY call_id", (match_id,)).fetchall()
        return [(int(r[0]), _u(r[1]), r[2]) for r in rows]

    def log_action(self, match_id: int, action: str, who: str, payload: Any = None) -> None:
        """An operator action with no effect on the record (pause, resume, note, identity)."""
        with self._tx() as c:
            c.execute("INSERT INTO operator_calls (match_id, action, payload, who, created_at) VALUES (?, ?, ?, ?, ?)",
                      (match_id, action, _j(payload), who, _now()))

    def operator_calls(self, match_id: int) -> list[dict]:
        rows = self.db.execute("SELECT call_id, shot_id, action, payload, who, created_at, state FROM operator_calls"
                               " WHERE match_id = ? ORDER BY call_id", (match_id,)).fetchall()
        return [{"call_id": r[0], "shot_id": r[1], "action": r[2], "payload": _u(r[3]), "who": r[4],
                 "at": r[5], "state": r[6]} for r in rows]

    def incident(self, match_id: int | None, kind: str, message: str, data: Any = None) -> None:
        with self._tx() as c:
            c.execute("INSERT INTO incidents (match_id, kind, message, data, created_at) VALUES (?, ?, ?, ?, ?)",
                      (match_id, kind, message, _j(data), _now()))

    def incidents(self, match_id: int) -> list[dict]:
        rows = self.db.execute("SELECT kind, message, data, created_at FROM incidents WHERE match_id = ? ORDER BY incident_id",
                               (match_id,)).fetchall()
        return [{"kind": r[0], "message": r[1], "data": _u(r[2]), "at": r[3]} for r in rows]

    # ---- resume, export ------------------------------------------------------------------
    def match_file(self, match_id: int) -> dict:
        """The ``vision-ref.match/1`` file of the active shots (what ``adjudicate`` replays)."""
        m = self.get_match(match_id)
        out = {"format": "vision-ref.match/1", "players": m.players, "first": m.first, "target": m.target,
               "modes": m.modes, "score": m.start_score, "shots": [s["record"] for s in self.active_shots(match_id)]}
        if m.settings:
            out["settings"] = m.settings
        if m.table:
            out["table"] = m.table
        return out

    def load_match(self, match_id: int):
        """The match rebuilt by replaying its active records; every replayed decision is
        checked against the stored one (a mismatch means the log or the rules changed)."""
        from vision_ref.rules.match import Match

        shots = self.active_shots(match_id)
        data = self.match_file(match_id)
        match = Match.from_match_file(dict(data, shots=[]))
        for s in shots:
            got = match.play(s["record"])
            if _comparable(got) != _comparable(s["decision"]):
                raise MatchLogError(f"match {match_id} shot {s['number']}: the replayed decision differs from the logged "
                                    f"one (logged {s['decision'].get('score')}, replayed {got.get('score')})")
        return match

    def export(self, match_id: int) -> dict:
        m = self.get_match(match_id)
        return {"match": m.to_dict(), "match_file": self.match_file(match_id),
                "shots": self.active_shots(match_id), "operator_calls": self.operator_calls(match_id),
                "incidents": self.incidents(match_id)}

    def export_csv(self, match_id: int) -> str:
        """One row per decided shot: number, shooter, points, credited_to, fouls, rules, score, who."""
        m = self.get_match(match_id)
        buf = io.StringIO()
        w = csv.writer(buf)
        a, b = m.players
        w.writerow(["match", "shot", "shooter", "foul", "fouls", "carom", "pins_down", "points", "credited_to",
                    "next", "rules", f"score_{a}", f"score_{b}", "origin", "who", "decided_at", "dropped_frames"])
        for s in self.active_shots(match_id):
            d = s["decision"]
            frames = s["frames"] or {}
            w.writerow([match_id, d["shot"], d["shooter"], int(bool(d["foul"])),
                        ";".join(f"{f['rule']}:{f.get('detail', '')}" for f in d.get("fouls", [])),
                        int(bool(d.get("carom"))), ";".join(d.get("pins_down", [])), d["points"],
                        d.get("credited_to") or "", d.get("next") or "", ";".join(d.get("rules", [])),
                        d["score"][a], d["score"][b], s["origin"], s["who"], s["created_at"],
                        frames.get("dropped", 0)])
        return buf.getvalue()


def _comparable(decision: dict) -> dict:
    return json.loads(json.dumps(decision, sort_keys=True))


class _Tx:
    """BEGIN IMMEDIATE ... COMMIT; ROLLBACK on any exception (nothing half-written)."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def __enter__(self) -> sqlite3.Connection:
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise MatchLogError(f"match log busy or read-only: {exc}") from None
        return self.db

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc_type is None:
            try:
                self.db.execute("COMMIT")
            except sqlite3.DatabaseError as exc2:
                self.db.execute("ROLLBACK")
                raise MatchLogError(f"match log: commit failed ({exc2})") from None
        else:
            self.db.execute("ROLLBACK")
            if isinstance(exc, sqlite3.DatabaseError):
                raise MatchLogError(f"match log: write failed ({exc})") from None
        return False


def iter_csv_rows(text: str) -> Iterator[list[str]]:
    return csv.reader(io.StringIO(text))
