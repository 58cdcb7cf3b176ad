"""The adjudicator: shot records in, decisions out (pure Python, no pixels).

Public API (stable names; other stages code against them):

- :class:`Match` — ``play(record) -> decision``, ``preview(record)`` (the same, not
  committed), ``undo()``, ``amend_calls(calls)``,
  ``replace_last(record)``, ``state``, ``to_dict()``, ``Match.from_match_file(dict)``.
- :func:`adjudicate_match` — a whole match file to ``{"decisions", "final"}``.
- :func:`validate_shot`, :func:`validate_match_file`, :func:`validate_decision` —
  the contract of SHOT_RECORD.md; they raise ``vision_ref.errors.ContractError``.
- :class:`RuleSettings` — the configurable readings; :func:`pin_points` — P1.
- :func:`explain_decision` — one plain-language paragraph per shot.
"""

from vision_ref.rules.adjudicate import RuleSettings, decide, initial_state, pin_points
from vision_ref.rules.explain import explain_decision, explain_match
from vision_ref.rules.match import Match, adjudicate_match, call_key
from vision_ref.rules.record import (
    CALL_TYPES,
    EVENT_TYPES,
    MATCH_FORMAT,
    PIN_STATES,
    SHOT_FORMAT,
    validate_decision,
    validate_match_file,
    validate_shot,
)

__all__ = [
    "CALL_TYPES",
    "EVENT_TYPES",
    "MATCH_FORMAT",
    "PIN_STATES",
    "SHOT_FORMAT",
    "Match",
    "RuleSettings",
    "adjudicate_match",
    "call_key",
    "decide",
    "explain_decision",
    "explain_match",
    "initial_state",
    "pin_points",
    "validate_decision",
    "validate_match_file",
    "validate_shot",
]
