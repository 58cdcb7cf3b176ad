"""The review report: one self-contained HTML page (no network, no scripts, no files beside it).

The page holds the score progression (an inline SVG chart and a table), then per
shot: the call with every rule id and its title, the plain-language account of
:func:`vision_ref.rules.explain_decision`, the top-down diagram (embedded as a PNG
data URI), the doubt if any, the inference confidence and any warning (a respot that
differs from the decision, a gap in the footage). Everything a referee or a player
needs to check a call without the software.
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass, field

from vision_ref.rules.explain import RULE_TITLES, explain_decision

PLAYER_COLOURS = ("#c0392b", "#2c6fbb")


@dataclass
class ShotReport:
    """What the report shows about one shot."""

    record: dict
    decision: dict
    diagram_png: bytes | None = None  # encoded PNG
    diagram_file: str | None = None  # its file name next to report.html (a link)
    clip_start_s: float | None = None  # where the shot is in the video
    clip_end_s: float | None = None
    frames: tuple[int, int] | None = None
    warnings: list[str] = field(default_factory=list)
    placements: list[str] = field(default_factory=list)  # pieces moved by hand before the shot
    video_file: str | None = None  # the annotated video beside the report (linked at the shot's time)


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _clock(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    m, s = divmod(max(0.0, float(seconds)), 60.0)
    return f"{int(m):02d}:{s:04.1f}"


def _esc(text) -> str:
    return html.escape(str(text), quote=True)


def call_text(decision: dict) -> str:
    pts = decision.get("points", 0)
    if not pts:
        return "no points"
    return f"{pts} point{'s' if pts != 1 else ''} to {decision['credited_to']}"


def _score_chart(players: list[str], start: dict, decisions: list[dict], target: int) -> str:
    """Inline SVG: each player's score after every shot, the target as a dashed line."""
    w, h, pad_l, pad_b, pad_t, pad_r = 720, 220, 44, 28, 12, 16
    n = len(decisions)
    best = max([max(d["score"].values()) for d in decisions] + [max(start.values(), default=0)])
    # far from the target, the chart zooms in on the scores (the target is then named above it)
    show_target = best >= 0.3 * target
    top = max(target, best) if show_target else max(10, int(best * 1.3) + 1)

    def xy(i: int, v: float) -> tuple[float, float]:
        x = pad_l + (w - pad_l - pad_r) * (i / max(n, 1))
        y = pad_t + (h - pad_t - pad_b) * (1.0 - v / top)
        return x, y

    parts = [f'<svg class="chart" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" '
             f'aria-label="score after each shot">']
    parts.append(f'<rect x="{pad_l}" y="{pad_t}" width="{w - pad_l - pad_r}" height="{h - pad_t - pad_b}" '
                 'fill="#fafafa" stroke="#ccc"/>')
    step = next(st for st in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000) if top / st <= 5)
    for v in range(0, int(top) + 1, step):
        _, y = xy(0, v)
        parts.append(f'<line x1="{pad_l}" y1="{y:.1f}" x2="{w - pad_r}" y2="{y:.1f}" stroke="#e4e4e4"/>')
        parts.append(f'<text x="{pad_l - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11">{v}</text>')
    if show_target:
        _, ty = xy(0, target)
        parts.append(f'<line x1="{pad_l}" y1="{ty:.1f}" x2="{w - pad_r}" y2="{ty:.1f}" stroke="#555" '
                     'stroke-dasharray="5,4"/>')
        parts.append(f'<text x="{w - pad_r - 4}" y="{ty - 4:.1f}" text-anchor="end" font-size="11">target {target}</text>')
    else:
        parts.append(f'<text x="{w - pad_r - 4}" y="{pad_t + 14}" text-anchor="end" font-size="11">'
                     f'target {target} (above the chart)</text>')
    step = max(1, n // 12)
    for i in range(0, n + 1, step):
        x, _ = xy(i, 0)
        parts.append(f'<text x="{x:.1f}" y="{h - 10}" text-anchor="middle" font-size="11">{i}</text>')
    for k, p in enumerate(players):
        pts = [xy(0, start.get(p, 0))] + [xy(i + 1, d["score"][p]) for i, d in enumerate(decisions)]
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
        colour = PLAYER_COLOURS[k % 2]
        parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2.5"/>')
        for x, y in pts[1:]:
            parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" fill="{colour}"/>')
        lx = pad_l + 10 + 90 * k
        parts.append(f'<rect x="{lx}" y="{pad_t + 8}" width="12" height="4" fill="{colour}"/>'
                     f'<text x="{lx + 16}" y="{pad_t + 14}" font-size="12">{_esc(p)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _doubts(record: dict) -> list[str]:
    out = []
    for ev in record.get("events", []):
        if ev.get("type") == "doubt":
            cands = " or ".join(ev.get("candidates", [])) or "an unknown ball"
            why = f" ({ev['reason']})" if ev.get("reason") else ""
            out.append(f"Pin {ev['pin']} fell at {float(ev.get('t', 0)):.3f} s but the footage does not show "
                       f"whether {cands} knocked it{why} (F8).")
    return out


def _contacts_html(record: dict) -> str:
    """The contacts as a table: number (as in the diagram), time, what, confidence."""
    from vision_ref.review.diagram import event_text

    rows = []
    n = 0
    for ev in record.get("events", []):
        if ev.get("type") == "strike":
            continue
        n += 1
        conf = ev.get("confidence")
        c = f"{100 * float(conf):.0f}%" if isinstance(conf, (int, float)) else ""
        cls = ' class="dbt"' if ev.get("type") == "doubt" else ""
        rows.append(f"<tr{cls}><td>{n}</td><td>{float(ev.get('t', 0)):.3f}</td><td class=\"l\">{_esc(event_text(ev))}</td>"
                    f"<td>{c}</td></tr>")
    if not rows:
        return ""
    return ('<table class="contacts"><tr><th>#</th><th>t (s)</th><th class="l">contact</th><th>confidence</th></tr>'
            + "".join(rows) + "</table>")


def _counted(items: list[str]) -> list[tuple[str, int]]:
    """Repeated warnings once each, with how often, in first-seen order."""
    counts: dict[str, int] = {}
    for it in items:
        counts[it] = counts.get(it, 0) + 1
    return list(counts.items())


def _rules_html(decision: dict) -> str:
    chips = []
    foul_rules = {f["rule"] for f in decision.get("fouls", [])}
    for r in decision.get("rules", []):
        cls = "rule foul" if r in foul_rules else "rule"
        title = RULE_TITLES.get(r, "")
        chips.append(f'<span class="{cls}" title="{_esc(title)}"><b>{_esc(r)}</b> {_esc(title)}</span>')
    return " ".join(chips) or '<span class="rule">-</span>'


def _list_box(css_class: str, heading: str, items: list[str]) -> str:
    lis = "".join(f"<li>{_esc(t)}</li>" for t in items)
    return f'<div class="{css_class}">{_esc(heading)}<ul>{lis}</ul></div>'


def _shot_html(sr: ShotReport, players: list[str]) -> str:
    d, rec = sr.decision, sr.record
    n = d["shot"]
    cls = "shot foul" if d.get("foul") else "shot"
    if any(ev.get("type") == "doubt" for ev in rec.get("events", [])):
        cls += " doubt"
    where = ""
    if sr.clip_start_s is not None:
        where = f'<span class="where">video {_clock(sr.clip_start_s)}&ndash;{_clock(sr.clip_end_s)}'
        if sr.frames:
            where += f" (frames {sr.frames[0]}&ndash;{sr.frames[1]})"
        if sr.video_file:
            # a media fragment: browsers start the video at the shot
            end = f",{sr.clip_end_s:.2f}" if sr.clip_end_s is not None else ""
            where += f' &middot; <a href="{_esc(sr.video_file)}#t={sr.clip_start_s:.2f}{end}">watch</a>'
        where += "</span>"
    badge = '<span class="badge foul">foul</span>' if d.get("foul") else ""
    if d.get("carom"):
        badge += '<span class="badge">carom</span>'
    for p in d.get("pins_down", []):
        badge += f'<span class="badge pin">{_esc(p)}</span>'
    score = " : ".join(f"{_esc(p)} {d['score'][p]}" for p in players)
    out = [f'<section class="{cls}" id="shot-{n}">',
           f'<h2>Shot {n} &middot; {_esc(d["shooter"])} &middot; <span class="call">{_esc(call_text(d))}</span> '
           f'{badge}</h2>',
           f'<div class="meta">score after: <b>{score}</b> &middot; next: {_esc(d.get("next") or "-")} {where}</div>',
           f'<div class="rules">{_rules_html(d)}</div>']
    doubts = _doubts(rec)
    if len(doubts) == 1:
        out.append(f'<div class="doubtbox">Doubt: {_esc(doubts[0])}</div>')
    elif doubts:
        out.append(_list_box("doubtbox", f"Doubts ({len(doubts)}):", doubts))
    checks = [str(x) for x in rec.get("review") or []]
    if checks:
        out.append(_list_box("checkbox", "Check on the video before signing:", checks))
    conf = rec.get("confidence")
    if isinstance(conf, (int, float)):
        low = " low" if conf < 0.9 else ""
        out.append(f'<div class="conf{low}">inference confidence {100 * float(conf):.1f}%</div>')
    if sr.placements:
        out.append(f'<div class="meta">placed by hand before this shot: {_esc("; ".join(sr.placements))}</div>')
    for wtext, count in _counted(sr.warnings):
        times = f" (&times;{count})" if count > 1 else ""
        out.append(f'<div class="warn">Warning: {_esc(wtext)}{times}</div>')
    body = ['<div class="body">']
    if sr.diagram_png:
        uri = "data:image/png;base64," + base64.b64encode(sr.diagram_png).decode("ascii")
        alt = f"diagram of shot {n}: ball paths with numbered contacts"
        img = f'<img class="diagram" src="{uri}" alt="{_esc(alt)}">'
        if sr.diagram_file:
            img = f'<a href="{_esc(sr.diagram_file)}">{img}</a>'
        body.append(img)
    body.append(f'<div class="side"><pre class="explain">{_esc(explain_decision(rec, d))}</pre>{_contacts_html(rec)}</div>')
    body.append("</div>")
    out += body
    out.append("</section>")
    return "\n".join(out)


CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1100px;
padding:16px 20px;color:#222;background:#fff}
h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:0 0 6px}
.sub{color:#555;font-size:13px;margin-bottom:14px}
.final{font-size:18px;margin:10px 0}
table.scores{border-collapse:collapse;font-size:13px;margin:8px 0 20px}
table.scores td,table.scores th{border:1px solid #ddd;padding:3px 8px;text-align:right}
table.scores td.l,table.scores th.l{text-align:left}
table.scores tr.foul td{background:#fdf0ef}
section.shot{border:1px solid #ddd;border-left:6px solid #4a8;border-radius:4px;padding:10px 12px;margin:14px 0}
section.shot.foul{border-left-color:#c0392b} section.shot.doubt{border-left-color:#e67e22}
.call{color:#0b5} section.foul .call{color:#c0392b}
.badge{display:inline-block;font-size:11px;background:#eee;border-radius:8px;padding:1px 7px;margin-left:4px;
vertical-align:middle}
.badge.foul{background:#c0392b;color:#fff} .badge.pin{background:#f3e9c6}
.meta{font-size:13px;color:#444;margin-bottom:6px} .where{color:#777;margin-left:8px}
.rules{margin:4px 0 8px} .rule{display:inline-block;font-size:12px;border:1px solid #ccd;border-radius:3px;
padding:1px 6px;margin:2px 3px 2px 0;background:#f6f7fb} .rule.foul{border-color:#c0392b;background:#fdf0ef}
.doubtbox{background:#fff4e5;border:1px solid #e67e22;padding:5px 8px;margin:6px 0;font-size:13px}
.checkbox{background:#eef5ff;border:1px solid #3b7dd8;padding:5px 8px;margin:6px 0;font-size:13px}
.doubtbox ul,.checkbox ul{margin:2px 0 0 0;padding-left:20px}
.warn{background:#fffbe0;border:1px solid #d4b000;padding:5px 8px;margin:6px 0;font-size:13px}
.conf{font-size:12px;color:#555} .conf.low{color:#b35c00;font-weight:600}
.body{display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start}
img.diagram{max-width:100%;width:640px;border:1px solid #ccc}
.side{flex:1;min-width:280px}
pre.explain{white-space:pre-wrap;font-family:inherit;font-size:13px;margin:0 0 8px}
table.contacts{border-collapse:collapse;font-size:12px}
table.contacts td,table.contacts th{border:1px solid #e2e2e2;padding:1px 6px;text-align:right}
table.contacts td.l,table.contacts th.l{text-align:left} table.contacts tr.dbt td{background:#fff4e5}
.notes{background:#f4f4f4;padding:6px 10px;font-size:13px;margin:8px 0}
"""


def build_report(
    match: dict,
    shots: list[ShotReport],
    *,
    final: dict,
    title: str = "vision-ref review",
    source: str = "",
    notes: list[str] | None = None,
) -> str:
    """The whole HTML page. ``match`` is the match file (players, first, target, modes,
    starting score), ``shots`` in order, ``final`` = ``{"score", "winner"}``; ``notes``
    are page-level remarks (where a truncated video stopped, calibration health...)."""
    players = list(match["players"])
    start = dict(match.get("score") or {p: 0 for p in players})
    target = int(match.get("target", 100))
    decisions = [s.decision for s in shots]
    score = " : ".join(f"{_esc(p)} {final['score'][p]}" for p in players)
    if final.get("winner") == "draw":
        result = "a draw"
    elif final.get("winner"):
        result = f"{_esc(final['winner'])} wins"
    else:
        result = "game not finished"
    modes = ", ".join(f"{_esc(p)} {_esc((match.get('modes') or {}).get(p, 'series'))}" for p in players)
    fouls = sum(1 for d in decisions if d.get("foul"))
    doubts = sum(1 for s in shots if any(e.get("type") == "doubt" for e in s.record.get("events", [])))
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f"<title>{_esc(title)}</title><style>{CSS}</style></head><body>",
           f"<h1>{_esc(title)}</h1>",
           f'<div class="sub">{_esc(source)} &middot; {_n(len(shots), "shot")} &middot; {_n(fouls, "foul")} &middot; '
           f"{doubts} with a doubt &middot; first to play {_esc(match.get('first', players[0]))} &middot; "
           f"target {target} &middot; modes: {modes}</div>",
           f'<div class="final">Final score <b>{score}</b> &mdash; {result}</div>']
    for note in notes or []:
        out.append(f'<div class="notes">{_esc(note)}</div>')
    out.append("<h2>Score progression</h2>")
    out.append(_score_chart(players, start, decisions, target))
    rows = ['<table class="scores"><tr><th>shot</th><th class="l">player</th><th class="l">call</th>'
            '<th class="l">rules</th>' + "".join(f"<th>{_esc(p)}</th>" for p in players) + "<th>video</th></tr>"]
    for s in shots:
        d = s.decision
        cls = ' class="foul"' if d.get("foul") else ""
        rows.append(
            f'<tr{cls}><td><a href="#shot-{d["shot"]}">{d["shot"]}</a></td><td class="l">{_esc(d["shooter"])}</td>'
            f'<td class="l">{_esc(call_text(d))}</td><td class="l">{_esc(", ".join(d.get("rules", [])))}</td>'
            + "".join(f"<td>{d['score'][p]}</td>" for p in players)
            + f"<td>{_clock(s.clip_start_s) if s.clip_start_s is not None else ''}</td></tr>"
        )
    rows.append("</table>")
    out.append("\n".join(rows))
    if not shots:
        out.append("<p>No shot was found in the footage.</p>")
    for s in shots:
        out.append(_shot_html(s, players))
    out.append('<p class="sub">Made by vision-ref. Rule ids refer to RULES.md.</p></body></html>')
    return "\n".join(out) + "\n"
