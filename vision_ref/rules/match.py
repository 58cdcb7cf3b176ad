"""A game of carom with five pins, shot by shot: the one object live play and review share.

>>> m = Match(["A", "B"], first="A")
>>> decision = m.play(record)      # validate, decide, commit — or raise ContractError, state unchanged
>>> m.undo()                       # take the last decision back
>>> m.amend_calls([{"type": "cue_side"}])   # correct the operator's call on the last shot
>>> Match.from_match_file(m.to_dict())      # resume: replaying the records reproduces the state

:func:`adjudicate_match` decides a whole match file (``vision-ref adjudicate``).
"""

from __future__ import annotations

import copy
from typing import Any

from vision_ref.errors import ContractError
from vision_ref.rules.adjudicate import RuleSettings, decide, initial_state
from vision_ref.rules.record import (
    MATCH_FORMAT,
    validate_match_file,
    validate_modes,
    validate_score,
    validate_shot,
)
from vision_ref.rules.table import DEFAULT_TABLE, TableSpec


class Match:
    """One game between two players under RULES.md.

    ``players``: the two player ids; ``first``: who starts (S1, by lots); ``target``
    (G1); ``modes``: ``{"A": "series", "B": "shtoss"}`` (M1–M3, default series);
    ``score``: the starting score; ``table``: sizes for the respot geometry;
    ``settings``: the configurable readings (:class:`RuleSettings` or a dict).
    """

    def __init__(
        self,
        players: list[str] | tuple[str, str],
        first: str | None = None,
        target: int = 100,
        modes: dict[str, str] | None = None,
        score: dict[str, int] | None = None,
        table: TableSpec = DEFAULT_TABLE,
        settings: RuleSettings | dict | None = None,
    ):
        header = validate_match_file(
            {
                "format": MATCH_FORMAT,
                "players": list(players),
                "first": first if first is not None else (list(players)[0] if players else None),
                "target": target,
                "modes": modes,
                "score": score,
            }
        )
        self.players: list[str] = header["players"]
        self.first: str = header["first"]
        self.target: int = header["target"]
        self.modes: dict[str, str] = validate_modes(header["modes"], self.players)
        self.start_score: dict[str, int] = validate_score(header["score"], self.players)
        self.table = table
        self.settings = settings if isinstance(settings, RuleSettings) else RuleSettings.from_dict(settings)
        self._state = initial_state(self.players, self.first, self.target, self.modes, self.start_score)
        self._records: list[dict] = []  # the validated records, in order
        self._inputs: list[dict] = []  # the records as given (to write a resumable match file)
        self._decisions: list[dict] = []
        self._snapshots: list[dict] = []  # state before each shot, for undo

    # ---- construction from files ----------------------------------------------
    @classmethod
    def from_match_file(cls, data: dict | str, *, table: TableSpec | None = None, play: bool = True) -> "Match":
        """A match from a ``vision-ref.match/1`` dict (or JSON text); its shots are played
        unless ``play`` is False. Optional ``settings`` and ``table`` objects in the file
        override the defaults (additions the contract allows)."""
        header = validate_match_file(data)
        if table is None:
            table = DEFAULT_TABLE
            if header.get("table"):
                try:
                    table = TableSpec.from_dict(header["table"])
                except (TypeError, ValueError) as exc:
                    raise ContractError("table", str(exc)) from None
        match = cls(
            header["players"],
            header["first"],
            header["target"],
            header["modes"],
            header["score"],
            table=table,
            settings=RuleSettings.from_dict(header.get("settings")),
        )
        if play:
            for i, shot in enumerate(header.get("shots", [])):
                match.play(shot, field_prefix=f"shots[{i}].")
        return match

    # ---- playing ------------------------------------------------------------------
    def validate(self, record: Any, field_prefix: str = "") -> dict:
        """Check a record against the contract and the turn, without playing it."""
        return validate_shot(
            record, table=self.table, players=self.players, on_turn=self._state["turn"], field_prefix=field_prefix
        )

    def preview(self, record: Any) -> dict:
        """The decision ``play`` would give, without committing anything."""
        if self._state["game_over"]:
            raise ContractError("shot", "the game is over; no more shots")
        decision, _ = decide(self.validate(record), self._state, self.table, self.settings)
        return decision

    def play(self, record: Any, *, field_prefix: str = "") -> dict:
        """Decide one shot record and commit it. On ContractError nothing changes."""
        if self._state["game_over"]:
            raise ContractError(f"{field_prefix}shot" if field_prefix else "shot", "the game is over; no more shots")
        rec = self.validate(record, field_prefix)
        try:
            decision, new_state = decide(rec, self._state, self.table, self.settings)
        except ContractError as exc:
            if field_prefix and not exc.field.startswith(field_prefix):
                raise ContractError(f"{field_prefix}{exc.field}", exc.problem) from None
            raise
        self._snapshots.append(self._state)
        self._state = new_state
        self._records.append(rec)
        self._inputs.append(copy.deepcopy(record if isinstance(record, dict) else rec))
        self._decisions.append(decision)
        return copy.deepcopy(decision)

    def undo(self) -> dict:
        """Take back the last shot; returns its decision. The state is as before it."""
        if not self._decisions:
            raise ContractError("undo", "no shot to take back")
        self._state = self._snapshots.pop()
        self._records.pop()
        self._inputs.pop()
        return self._decisions.pop()

    def replace_last(self, record: Any) -> dict:
        """Undo the last shot and play ``record`` instead (e.g. a corrected record).
        If the new record is rejected, the old shot is restored."""
        old_input = self._inputs[-1] if self._inputs else None
        self.undo()
        try:
            return self.play(record)
        except ContractError:
            if old_input is not None:
                self.play(old_input)
            raise

    def amend_calls(self, calls: list[dict]) -> dict:
        """Correct the operator's calls on the last shot and decide it again."""
        if not self._records:
            raise ContractError("calls", "no shot to correct")
        record = copy.deepcopy(self._inputs[-1])
        record["calls"] = calls
        return self.replace_last(record)

    # ---- reading ------------------------------------------------------------------
    @property
    def state(self) -> dict:
        """A JSON-able copy of the match state (score, turn, ball in hand, pending pins…)."""
        return copy.deepcopy(self._state)

    @property
    def turn(self) -> str | None:
        return self._state["turn"]

    @property
    def score(self) -> dict[str, int]:
        return dict(self._state["score"])

    @property
    def game_over(self) -> bool:
        return self._state["game_over"]

    @property
    def winner(self) -> str | None:
        return self._state["winner"]

    @property
    def decisions(self) -> list[dict]:
        return copy.deepcopy(self._decisions)

    @property
    def records(self) -> list[dict]:
        """The validated (normalised) records played so far."""
        return copy.deepcopy(self._records)

    def final(self) -> dict:
        return {"score": dict(self._state["score"]), "winner": self._state["winner"]}

    def to_dict(self) -> dict:
        """A ``vision-ref.match/1`` file holding everything played: replaying it with
        :meth:`from_match_file` reproduces this match's state exactly."""
        out = {
            "format": MATCH_FORMAT,
            "players": list(self.players),
            "first": self.first,
            "target": self.target,
            "modes": dict(self.modes),
            "score": dict(self.start_score),
            "shots": copy.deepcopy(self._inputs),
        }
        if self.settings != RuleSettings():
            out["settings"] = self.settings.to_dict()
        if self.table != DEFAULT_TABLE:
            out["table"] = self.table.to_dict()
        return out

    def next_game(self) -> "Match":
        """S1: the next game of the same players, started by the other player."""
        other = self.players[1] if self.first == self.players[0] else self.players[0]
        return Match(self.players, other, self.target, self.modes, None, self.table, self.settings)


def call_key(decision: dict) -> tuple:
    """What the referee announces, as a comparable key: foul or not and under which
    rules (a rule once, as F8 is one foul however many pins were in doubt), points, to
    whom, the pins that count, who plays next, ball in hand."""
    import json

    return (decision["foul"], tuple(sorted({f["rule"] for f in decision["fouls"]})), decision["points"],
            decision["credited_to"], tuple(sorted(decision["pins_down"])), decision["next"],
            json.dumps(decision["ball_in_hand"], sort_keys=True))


def adjudicate_match(match: dict | str, *, table: TableSpec | None = None) -> dict:
    """Decide every shot of a match file: ``{"decisions": [...], "final": {...}}``.

    Raises ContractError (naming the field, e.g. ``shots[4].events[2].t``) for a file
    that breaks the contract.
    """
    m = Match.from_match_file(match, table=table)
    return {"decisions": m.decisions, "final": m.final()}
