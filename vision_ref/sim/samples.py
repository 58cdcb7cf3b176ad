"""Regenerate the bundled sample videos in ``sample_videos/``.

    python -m vision_ref.sim.samples                 # all clips, 1456x1088 at 60 fps
    python -m vision_ref.sim.samples --only carom_P2 # one of them
    python -m vision_ref.sim.samples --quick --out /tmp/samples   # 728x544, for a look

Each clip is NAME.mp4 (H.264) + NAME.truth.json (shot record or match file, per-frame
truth) + NAME.camera.json (camera model, table, render settings) + NAME.timestamps.txt.
Everything is seeded: the same command writes the same truth (and, with the same
ffmpeg, the same video).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

DEFAULT_OUT = Path(__file__).resolve().parents[2] / "sample_videos"
CRF = 16  # x264 smooths sensor noise away at CRF >= 18 (frozen noise); 16 keeps about half of it at ~0.6 MB/s


@dataclass(frozen=True)
class Sample:
    name: str
    what: str
    scenario: str | None = None  # a library scenario, or None for the demo match
    seed: int = 0


SAMPLES = (
    Sample("demo_match", "a short match: a legal pin shot, a foul with pins down (points to the partner), "
           "a bare carom, a legal pin shot; knocked pins respotted by hand between shots", None, 3),
    Sample("legal_pins", "a legal pin shot: cue ball off a cushion onto white1, which knocks pins (L3)",
           "legal_L3_cue_off_cushion"),
    Sample("carom", "a bare carom: 3 points, no pin, the turn passes (P2)", "carom_P2"),
    Sample("doubtful_F8", "two balls reach the pins within one frame interval: the knocker is doubtful (F8)",
           "foul_F8_doubt"),
)


def demo_sequence(seed: int = 3):
    """The demo match: four planned shots from the standard layout (seeded)."""
    from vision_ref.sim.physics import Layout
    from vision_ref.sim.sequence import ShotSequence

    layout = Layout.standard(balls={"cue": (-900.0, 260.0)})
    return ShotSequence(layout, ["legal_pins", "foul_pins", "carom", "legal_pins"], seed=seed, gap_s=1.0,
                        max_shot_s=5.0)


def simulate_sample(sample: Sample):
    if sample.scenario is None:
        return demo_sequence(sample.seed)
    from vision_ref.sim.scenarios import get_scenario

    return get_scenario(sample.scenario).simulate(sample.seed)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vision_ref.sim.samples", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(DEFAULT_OUT), help="output directory (default: the repo's sample_videos/)")
    ap.add_argument("--only", nargs="*", metavar="NAME", help="render only these clips: " + ", ".join(s.name for s in SAMPLES))
    ap.add_argument("--quick", action="store_true", help="728x544, for a quick look (not for committing)")
    args = ap.parse_args(argv)
    names = {s.name for s in SAMPLES}
    unknown = sorted(set(args.only or ()) - names)
    if unknown:
        print(f"error: unknown sample(s) {', '.join(unknown)}; known: {', '.join(sorted(names))}", file=sys.stderr)
        return 2
    from vision_ref.camera import CameraModel
    from vision_ref.sim.render import RenderSettings, render_clip

    size = (728, 544) if args.quick else (1456, 1088)
    camera = CameraModel.overhead(*size)
    for s in SAMPLES:
        if args.only and s.name not in args.only:
            continue
        t0 = time.perf_counter()
        sim = simulate_sample(s)
        # one render seed for every clip: the same table texture, so one calibration profile
        # (calibration/sample_profile.json) fits them all; s.seed seeds only the play
        settings = RenderSettings(fps=60.0, seed=0, crf=CRF)
        paths = render_clip(sim, camera, settings, args.out, s.name)
        mb = Path(paths["video"]).stat().st_size / 1e6
        print(f"{s.name}: {paths['frames']} frames, {mb:.1f} MB, {time.perf_counter() - t0:.0f} s  ({s.what})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
