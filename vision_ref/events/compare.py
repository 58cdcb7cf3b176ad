"""Comparing an inferred shot record with the truth record (benchmarks and tests).

Events are compared by *key*: ``ball_ball`` by its pair of balls, ``cushion`` by
ball and cushion, ``off_table`` by ball, and a pin's knock (``pin_hit`` or ``doubt``)
by the pin. The contact order is right when the sequence of keys is the same; times
are compared between the k-th occurrences of each key.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from vision_ref.rules.table import BALL_IDS


def event_key(ev: dict) -> tuple | None:
    kind = ev["type"]
    if kind == "ball_ball":
        return ("ball_ball",) + tuple(sorted((ev["a"], ev["b"]), key=BALL_IDS.index))
    if kind == "cushion":
        return ("cushion", ev["ball"], ev["cushion"])
    if kind == "off_table":
        return ("off_table", ev["ball"])
    if kind in ("pin_hit", "doubt"):
        return ("pin", ev["pin"])
    return None


def keyed(events: list[dict]) -> list[tuple[tuple, dict]]:
    return [(k, e) for e in events if (k := event_key(e)) is not None]


@dataclass
class Comparison:
    order_ok: bool
    time_errors: list[float] = field(default_factory=list)  # seconds, matched contacts
    time_errors_by_kind: dict[str, list[float]] = field(default_factory=dict)
    time_bias_by_kind: dict[str, list[float]] = field(default_factory=dict)  # inferred - truth, seconds
    pins_total: int = 0  # truth pin knocks (first knock of each pin) matched by the inference
    pins_confident: int = 0  # inferred as pin_hit (not doubt)
    pins_right: int = 0  # confident and the knocker equals the truth's
    pins_wrong: list[str] = field(default_factory=list)
    pins_root_right: int = 0  # confident and the ball at the root of the chain is the truth's
    roots_wrong: list[str] = field(default_factory=list)
    doubt_tp: int = 0
    doubt_fp: int = 0
    doubt_fn: int = 0
    missing: list[tuple] = field(default_factory=list)
    extra: list[tuple] = field(default_factory=list)


_WHITE_SWAP = {"white1": "white2", "white2": "white1"}


def _swap_whites(x):
    if isinstance(x, str):
        return _WHITE_SWAP.get(x, x)
    if isinstance(x, list):
        return [_swap_whites(v) for v in x]
    if isinstance(x, dict):
        return {_swap_whites(k): _swap_whites(v) for k, v in x.items()}
    return x


def align_whites(inferred: dict, truth: dict) -> dict:
    """The inferred record with its two whites' names matched to the truth's.

    The whites are alike: a tracker names them by where it first sees them (white1
    nearer spot 1), a simulator by how it laid them out. Within a shot the names only
    have to be consistent, so the pairing whose "before" positions fit is used.
    """
    def dist(rec_a: dict, rec_b: dict) -> float:
        total = 0.0
        for w in ("white1", "white2"):
            a, b = rec_a["before"]["balls"].get(w), rec_b["before"]["balls"].get(w)
            if a is None or b is None:
                total += 1e4 if (a is None) != (b is None) else 0.0
            else:
                total += ((a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2) ** 0.5
        return total

    if not all(isinstance(r.get("before", {}).get("balls"), dict) for r in (inferred, truth)):
        return inferred  # nothing to pair them by
    swapped = _swap_whites(inferred)
    return swapped if dist(swapped, truth) < dist(inferred, truth) else inferred


def compare(inferred: dict, truth: dict) -> Comparison:
    """Compare events of two shot records (see the module docstring); the whites'
    names are matched first (``align_whites``)."""
    inferred = align_whites(inferred, truth)
    inf = keyed(inferred["events"])
    truth_events = list(truth["events"])
    # a hit the camera could not see as a new start of motion (onset_truth's hidden
    # hits) still counts when the inference did see a start of motion there
    fps = float(inferred.get("fps") or truth.get("fps") or 60.0)
    for h in truth.get("hidden_hits", []):
        n_inf = sum(1 for k, _ in inf if k == ("pin", h["pin"]))
        n_tru = sum(1 for e in truth_events if event_key(e) == ("pin", h["pin"]))
        if n_inf > n_tru and any(k == ("pin", h["pin"]) and abs(float(e["t"]) - float(h["t"])) < 2.0 / fps
                                 for k, e in inf):
            truth_events.append(h)
    truth_events.sort(key=lambda e: float(e["t"]))
    tru = keyed(truth_events)
    truth_roots = _roots(truth_events)
    ki = [k for k, _ in inf]
    kt = [k for k, _ in tru]
    cmp = Comparison(order_ok=ki == kt)
    by_i: dict[tuple, list[dict]] = defaultdict(list)
    by_t: dict[tuple, list[dict]] = defaultdict(list)
    for k, e in inf:
        by_i[k].append(e)
    for k, e in tru:
        by_t[k].append(e)
    for k in set(by_i) | set(by_t):
        a, b = by_i.get(k, []), by_t.get(k, [])
        for _ in range(len(b) - len(a)):
            cmp.missing.append(k)
        for _ in range(len(a) - len(b)):
            cmp.extra.append(k)
        for j, (ei, et) in enumerate(zip(a, b)):
            signed = float(ei["t"]) - float(et["t"])
            err = abs(signed)
            kind = k[0]
            if kind == "pin":
                by = et.get("exact_by", et.get("by"))
                kind = "pin_by_ball" if by in BALL_IDS else "pin_by_pin"
            cmp.time_errors.append(err)
            cmp.time_errors_by_kind.setdefault(kind, []).append(err)
            cmp.time_bias_by_kind.setdefault(kind, []).append(signed)
            if k[0] != "pin":
                continue
            truth_by = et.get("exact_by", et.get("by"))
            truth_doubt = et["type"] == "doubt"
            inf_doubt = ei["type"] == "doubt"
            cmp.pins_total += 1
            if inf_doubt and truth_doubt:
                cmp.doubt_tp += 1
            elif inf_doubt:
                cmp.doubt_fp += 1
            elif truth_doubt:
                cmp.doubt_fn += 1
            if not inf_doubt:
                cmp.pins_confident += 1
                true_root = truth_roots.get(id(et), truth_by)
                if ei.get("root", ei["by"]) == true_root:
                    cmp.pins_root_right += 1
                else:
                    cmp.roots_wrong.append(f"{k[1]}: root {ei.get('root', ei['by'])} via {ei['by']} "
                                           f"(truth {true_root} via {truth_by}) t={float(ei['t']):.3f}")
                if ei["by"] == truth_by:
                    cmp.pins_right += 1
                else:
                    cmp.pins_wrong.append(f"{k[1]}: {ei['by']} (truth {truth_by})")
    return cmp


def _roots(events: list[dict]) -> dict[int, str | None]:
    """id(event) -> the ball at the root of each truth pin knock (RULES L5)."""
    from vision_ref.rules.events import knock_of

    conv = []
    for e in events:
        if e["type"] == "doubt" and "exact_by" in e:
            conv.append({**e, "type": "pin_hit", "by": e["exact_by"]})
        else:
            conv.append(e)
    out = {}
    for j, (orig, e) in enumerate(zip(events, conv)):
        if e["type"] == "pin_hit":
            out[id(orig)] = knock_of(conv, e["pin"], at_index=j + 1).root
    return out


def with_confidence(record: dict, confidence: float) -> dict:
    """The record as inference would have written it at another confidence setting
    (re-deciding each pin from the candidate probabilities it recorded)."""
    out = dict(record)
    events = []
    for e in record["events"]:
        if e["type"] not in ("pin_hit", "doubt") or "p" not in e or e.get("forced_doubt"):
            events.append(e)
            continue
        p = e.get("p_root") or {}
        best = max(p, key=p.get) if p else None
        lone = len(p) == 1 and best is not None and p[best] >= 0.5
        if best is not None and (p[best] >= confidence or lone):
            ne = {k: v for k, v in e.items() if k not in ("candidates", "reason")}
            ne.update({"type": "pin_hit", "by": e["by_for_root"][best], "root": best, "confidence": p[best]})
        else:
            ne = {k: v for k, v in e.items() if k != "by"}
            ne["type"] = "doubt"
            cands = e.get("candidates") or e.get("root_candidates") or [c for c in p if c in BALL_IDS]
            ne["candidates"] = list(cands)
        events.append(ne)
    out["events"] = events
    return out


# a pin hit shows when the pin's base or top moves this far in the 18 frames after it:
# about half a pixel at the review corpus's 728x544, a pixel at full size
VISIBLE_SHIFT_MM = 2.0


def onset_truth(truth: dict, shot, fps: float | None = None) -> dict:
    """The truth record without the pin hits a camera cannot see as such: a pin touched
    again while it is still moving (rocking, toppling, sliding), or within a frame
    interval of coming to rest, shows no new start of motion; and a pin whose base and
    top both move less than VISIBLE_SHIFT_MM in the 18 frames after the hit (a lying pin
    nudged, a standing one rocked by a degree or two) shows none at all. Those hits are
    kept in the extra list ``hidden_hits``."""
    import numpy as np

    from vision_ref.messages import PinState
    from vision_ref.rules.table import PIN_IDS

    fps = float(fps or truth.get("fps") or 60.0)
    events, hidden = [], []
    for e in truth["events"]:
        if e["type"] in ("pin_hit", "doubt"):
            k = PIN_IDS.index(e["pin"])
            t = float(e["t"])
            # moving at the hit, or at any moment of the frame interval before it: no frame
            # can show it at rest before this hit, so none shows a new start of motion
            before = t - 1e-6 - np.linspace(0.0, 1.0, 9) / fps
            if np.any(shot.pins.sample(before)["state"][:, k] == int(PinState.MOVING)):
                hidden.append(e)
                continue
            # frames after the hit: does the pin show any motion, its base or its top
            # (a standing pin rocked by a degree or two, T1, moves neither by a pixel)?
            ts = t + (np.arange(1, 19) / fps)
            smp = shot.pins.sample(np.concatenate([[t - 1e-6], ts]))
            reach = shot.table.pin_height_of(e["pin"]) * np.sin(smp["tilt"][:, k])
            top = smp["xy"][:, k] + reach[:, None] * np.stack([np.cos(smp["dir"][:, k]), np.sin(smp["dir"][:, k])], axis=1)
            moved = max(np.max(np.hypot(*(smp["xy"][1:, k] - smp["xy"][0, k]).T)),
                        np.max(np.hypot(*(top[1:] - top[0]).T))) >= VISIBLE_SHIFT_MM
            if not moved:
                hidden.append(e)
                continue
        events.append(e)
    out = dict(truth)
    out["events"] = events
    out["hidden_hits"] = hidden
    return out


def call_of(decision: dict) -> tuple:
    """What the referee announces, as a comparable key (``rules.match.call_key``)."""
    from vision_ref.rules.match import call_key

    return call_key(decision)


def decide(record: dict) -> dict:
    """The adjudicator's decision on one shot record played as the first shot of a match."""
    from vision_ref.rules import Match

    rec = dict(record)
    rec["shooter"] = "A"
    return Match(["A", "B"]).play(rec)


def truth_calls(truth_record: dict) -> list[tuple]:
    """The calls (``call_of``) of a truth: a whole match file, or one shot record."""
    from vision_ref.rules import Match

    if truth_record.get("format") == "vision-ref.match/1":
        return [call_of(d) for d in Match.from_match_file(truth_record).decisions]
    return [call_of(decide(truth_record))]
