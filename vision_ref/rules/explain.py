"""Plain-language accounts of decisions (`adjudicate --explain`, the review report)."""

from __future__ import annotations

RULE_TITLES = {
    "S1": "lots decide the first player",
    "S2": "opening from hand in either half",
    "S3": "stance when playing from hand",
    "L1": "white off a cushion",
    "L2": "after a carom",
    "L3": "struck by the cue ball off a cushion",
    "L4": "white off a ball",
    "L5": "pin knocked by a pin",
    "P1": "pin combination",
    "P2": "bare carom",
    "P3": "foul points to the partner",
    "F1": "miss",
    "F2": "cue ball off the table",
    "F3": "touching a ball",
    "F4": "white knocked pins directly",
    "F5": "cue ball knocked a pin",
    "F6": "wrong ball struck",
    "F7": "pin not set",
    "F8": "doubtful knock",
    "F9": "side or butt of the cue",
    "F10": "player stopped the cue ball",
    "B1": "partner plays from hand",
    "B2": "white off the table respotted",
    "B3": "cue ball back off a bystander",
    "B4": "partner stopped the cue ball",
    "B5": "partner stopped a white",
    "B6": "position restored",
    "G1": "target reached",
    "G2": "game won",
    "G3": "bare carom does not end the game",
    "G4": "repetition: draw",
    "M1": "series",
    "M2": "shtoss",
    "M3": "mixed modes",
    "T1": "moved pin stays",
    "T2": "pin standing on the rail",
    "T3": "pin lying on the rail is down",
    "T4": "leaning pin is not down",
    "T5": "leaning pin fell later",
    "T6": "pin resting on the cue ball",
    "T7": "misplaced pin stays",
    "R0": "king last in its row",
}


def _describe_events(record: dict) -> str:
    parts: list[str] = []
    for ev in record.get("events", []):
        kind = ev["type"]
        if kind == "strike":
            parts.append(f"struck {ev['ball']}")
        elif kind == "ball_ball":
            parts.append(f"{ev['a']} hit {ev['b']}")
        elif kind == "cushion":
            parts.append(f"{ev['ball']} off the {ev['cushion']} cushion")
        elif kind == "pin_hit":
            parts.append(f"{ev['by']} hit pin {ev['pin']}")
        elif kind == "off_table":
            parts.append(f"{ev['ball']} left the table")
        elif kind == "doubt":
            parts.append(f"pin {ev['pin']} fell (doubtful: {' or '.join(ev.get('candidates', [])) or 'unknown'})")
    return ", ".join(parts) if parts else "no contacts recorded"


def _calls(record: dict) -> str:
    calls = [c["type"] + (f" ({c['ball']})" if c.get("ball") else "") for c in record.get("calls", [])]
    return ", ".join(calls)


def explain_decision(record: dict, decision: dict) -> str:
    """A short plain-language account of one shot: who shot, what happened, the
    call, the rules and the score. ``record`` may be None (only the decision is used)."""
    record = record or {}
    who = decision["shooter"]
    lines = [f"Shot {decision['shot']}: {who} to play."]
    if record:
        lines.append(f"  What happened: {_describe_events(record)}.")
        if record.get("calls"):
            lines.append(f"  Operator's calls: {_calls(record)}.")
    if decision["pins_down"]:
        lines.append(f"  Pins down: {', '.join(decision['pins_down'])}" + (" (with a carom)." if decision["carom"] else "."))
    elif decision["carom"]:
        lines.append("  A carom, no pin down.")
    if decision["foul"]:
        for f in decision["fouls"]:
            title = RULE_TITLES.get(f["rule"], "")
            lines.append(f"  Foul {f['rule']}{' (' + title + ')' if title else ''}: {f['detail']}.")
    for reason in decision.get("reasons", []):
        lines.append(f"  {reason[0].upper() + reason[1:]}.")
    if decision["points"]:
        lines.append(f"  Call: {decision['points']} points to {decision['credited_to']}.")
    else:
        lines.append("  Call: no points.")
    for extra in decision.get("credits", [])[1:] if decision["points"] else decision.get("credits", []):
        lines.append(f"  Also {extra['points']} points to {extra['player']} ({', '.join(extra['rules'])}).")
    if decision["restore"]:
        lines.append("  The balls go back where they were (B6).")
    for r in decision["respot"]:
        lines.append(f"  Put {r['piece']} at ({r['at'][0]:.1f}, {r['at'][1]:.1f}) mm ({r['rule']}).")
    if decision["ball_in_hand"]:
        b = decision["ball_in_hand"]
        lines.append(f"  {b['player']} plays the cue ball from hand ({b['zone'].replace('_', ' ')}).")
    score = " : ".join(f"{p} {s}" for p, s in decision["score"].items())
    lines.append(f"  Rules: {', '.join(decision['rules']) or '-'}. Score {score}.")
    if decision["game_over"]:
        lines.append("  Game over: " + ("a draw." if decision["winner"] == "draw" else f"{decision['winner']} wins."))
    else:
        lines.append(f"  Next: {decision['next']}.")
    return "\n".join(lines)


def explain_match(match: dict, result: dict) -> str:
    """The readable account of a whole adjudicated match file."""
    shots = match.get("shots", []) if isinstance(match, dict) else []
    out = []
    for i, decision in enumerate(result["decisions"]):
        out.append(explain_decision(shots[i] if i < len(shots) else None, decision))
    final = result["final"]
    score = " : ".join(f"{p} {s}" for p, s in final["score"].items())
    end = "draw" if final["winner"] == "draw" else (f"{final['winner']} wins" if final["winner"] else "game not finished")
    out.append(f"Final score {score} — {end}.")
    return "\n\n".join(out) + "\n"
