import copy
import re
from html.parser import HTMLParser

import cv2

from vision_ref.review.diagram import ShotPaths, draw_shot_diagram
from vision_ref.review.report import ShotReport, build_report, call_text
from vision_ref.rules import Match, explain_decision
from vision_ref.rules.explain import RULE_TITLES


class _Collector(HTMLParser):
    VOID = {"meta", "img", "br", "hr", "link", "input", "rect", "line", "circle", "polyline", "path"}

    def __init__(self):
        super().__init__()
        self.stack, self.errors, self.srcs, self.hrefs, self.tags = [], [], [], [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        if "src" in a:
            self.srcs.append(a["src"])
        if "href" in a:
            self.hrefs.append(a["href"])
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in self.VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unbalanced </{tag}> (open: {self.stack[-3:]})")
        else:
            self.stack.pop()


def _match_of(shots):
    """Play the records in order (each a fresh copy without the sim's shooter)."""
    m = Match(["Ann", "Bob"], first="Ann", target=30)
    reports = []
    for shot, record in shots:
        rec = copy.deepcopy(record)
        rec.pop("shooter", None)
        d = m.play(rec)
        png = cv2.imencode(".png", draw_shot_diagram(rec, ShotPaths.from_simulation(shot, 60), d))[1].tobytes()
        reports.append(ShotReport(rec, d, png, f"shot_{d['shot']:03d}.png", 1.0, 4.0, (60, 240)))
    return m, reports


def test_report_is_self_contained_and_well_formed(foul_shot, legal_shot):
    m, reports = _match_of([(legal_shot[0], legal_shot[1]), (foul_shot[0], foul_shot[1])])
    page = build_report(m.to_dict(), reports, final=m.final(), source="clip.mp4", notes=["a note <b>"])
    p = _Collector()
    p.feed(page)
    assert not p.errors and not p.stack, (p.errors, p.stack)
    # nothing fetched from elsewhere: images are data URIs, no scripts, links stay on the page or beside it
    assert p.srcs and all(s.startswith("data:image/png;base64,") for s in p.srcs)
    assert "script" not in p.tags
    assert all(h.startswith("#") or re.fullmatch(r"shot_\d{3}\.png", h) for h in p.hrefs)
    assert "a note &lt;b&gt;" in page  # text is escaped


def test_watch_link_starts_the_annotated_video_at_the_shot(foul_shot):
    _, record, decision = foul_shot
    sr = ShotReport(record, decision, clip_start_s=12.345, clip_end_s=17.5, video_file="annotated.mp4")
    page = build_report(Match(["A", "B"]).to_dict(), [sr], final={"score": decision["score"], "winner": None})
    assert '<a href="annotated.mp4#t=12.35,17.50">watch</a>' in page
    page = build_report(Match(["A", "B"]).to_dict(), [ShotReport(record, decision, clip_start_s=1.0)],
                        final={"score": decision["score"], "winner": None})
    assert "watch</a>" not in page  # no annotated video, no link


def test_report_shows_every_call_rule_and_reason(foul_shot, legal_shot):
    m, reports = _match_of([(legal_shot[0], legal_shot[1]), (foul_shot[0], foul_shot[1])])
    page = build_report(m.to_dict(), reports, final=m.final())
    for r in reports:
        d = r.decision
        assert f'id="shot-{d["shot"]}"' in page
        assert call_text(d) in page
        for rule in d["rules"]:
            assert f"<b>{rule}</b> {RULE_TITLES[rule]}" in page
        first_line = explain_decision(r.record, d).splitlines()[1].strip()
        assert first_line.replace("'", "&#x27;") in page
    assert "F5" in reports[1].decision["rules"]
    final = " : ".join(f"{p} {s}" for p, s in m.final()["score"].items())
    assert f"Final score <b>{final}</b>" in page


def test_score_chart_has_a_point_per_shot(foul_shot, legal_shot):
    m, reports = _match_of([(legal_shot[0], legal_shot[1]), (foul_shot[0], foul_shot[1]), (legal_shot[0], legal_shot[1])])
    page = build_report(m.to_dict(), reports, final=m.final())
    lines = re.findall(r'<polyline points="([^"]+)"', page)
    assert len(lines) == 2  # one per player
    for pts in lines:
        assert len(pts.split()) == len(reports) + 1  # the start and after every shot


def test_doubt_and_confidence_and_warning_are_shown(foul_shot):
    shot, record, _ = foul_shot
    rec = copy.deepcopy(record)
    rec.pop("shooter", None)
    pin_ev = next(e for e in rec["events"] if e["type"] == "pin_hit")
    pin_ev.clear()
    pin_ev.update({"t": 0.9, "type": "doubt", "pin": "head", "candidates": ["cue", "white1"]})
    rec["confidence"] = 0.62
    m = Match(["A", "B"])
    d = m.play(rec)
    page = build_report(m.to_dict(), [ShotReport(rec, d, None, warnings=["king put back 40 mm off its spot"])],
                        final=m.final())
    assert "Doubt: Pin head fell at 0.900 s" in page and "cue or white1" in page
    assert 'class="conf low"' in page and "62.0%" in page
    assert "king put back 40 mm off its spot" in page
    assert "F8" in d["rules"]


def test_empty_match_says_no_shot_found():
    m = Match(["A", "B"])
    page = build_report(m.to_dict(), [], final=m.final())
    assert "No shot was found" in page


def test_contacts_table_numbers_match_the_diagram(foul_shot):
    from vision_ref.review.diagram import contact_marks

    shot, record, decision = foul_shot
    page = build_report(Match(["A", "B"]).to_dict(), [ShotReport(record, decision)],
                        final={"score": decision["score"], "winner": None})
    rows = re.findall(r"<tr[^>]*><td>(\d+)</td><td>([\d.]+)</td><td class=\"l\">([^<]+)</td>", page)
    marks = contact_marks(record, None)
    assert [(int(n), float(t)) for n, t, _ in rows] == [(m.number, round(m.t, 3)) for m in marks]
    assert [text for _, _, text in rows] == [m.text.replace("'", "&#x27;") for m in marks]


def test_points_to_check_are_listed_for_the_referee(foul_shot):
    shot, record, _ = foul_shot
    rec = copy.deepcopy(record)
    rec.pop("shooter", None)
    rec["review"] = ["cue and white1 barely met at 0.40 s (a graze within the tracking error): check that they touched"]
    m = Match(["A", "B"])
    d = m.play(rec)
    page = build_report(m.to_dict(), [ShotReport(rec, d, None)], final=m.final())
    assert 'class="checkbox"' in page and "Check on the video before signing" in page
    assert "check that they touched" in page
    plain = copy.deepcopy(record)
    plain.pop("shooter", None)
    m2 = Match(["A", "B"])
    page2 = build_report(m2.to_dict(), [ShotReport(plain, m2.play(plain), None)], final=m2.final())
    assert 'class="checkbox"' not in page2
