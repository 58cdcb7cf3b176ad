"""The bundled sample videos: each has its sidecars, its truth adjudicates, frames match."""

import json
from pathlib import Path

import pytest

from vision_ref.rules import Match, adjudicate_match
from vision_ref.sim.samples import SAMPLES

DIR = Path(__file__).resolve().parents[2] / "sample_videos"


@pytest.mark.parametrize("name", [s.name for s in SAMPLES])
def test_sample_is_complete_and_its_truth_adjudicates(name):
    video = DIR / f"{name}.mp4"
    if not video.exists():
        pytest.skip(f"{video} not rendered (python -m vision_ref.sim.samples)")
    from vision_ref.video import probe, read_timestamps

    truth = json.loads((DIR / f"{name}.truth.json").read_text())
    camera = json.loads((DIR / f"{name}.camera.json").read_text())
    info = probe(video)
    assert (info.width, info.height, info.fps) == (1456, 1088, 60.0)
    assert (camera["camera"]["width"], camera["camera"]["height"]) == (1456, 1088)
    assert info.frame_count == truth["render_frames"]["n_frames"] == len(truth["frames"]["t"])
    assert len(read_timestamps(video)) == info.frame_count
    rec = truth["record"]
    if rec.get("format") == "vision-ref.match/1":
        out = adjudicate_match({k: rec[k] for k in ("format", "players", "first", "target", "shots")})
        assert [d["points"] for d in out["decisions"]] == [d["points"] for d in rec["decisions"]]
        assert len(truth["shot_windows"]) == len(rec["shots"]) >= 3
        assert any(d["foul"] for d in out["decisions"]) and any(d["pins_down"] for d in out["decisions"])
    else:
        sample = next(s for s in SAMPLES if s.name == name)
        from vision_ref.sim.scenarios import get_scenario

        d = Match(["A", "B"], first="A").play(rec)
        assert set(get_scenario(sample.scenario).rules) <= set(d["rules"])


def test_samples_stay_small():
    total = sum(p.stat().st_size for p in DIR.glob("*") if p.is_file())
    assert total < 45e6
