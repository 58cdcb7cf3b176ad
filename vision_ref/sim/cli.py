"""`vision-ref scenarios` and `vision-ref render`: list the scenario library, render clips.

The heavy modules (physics, renderer, numba kernels) are imported inside the
handlers so that ``vision-ref --help`` and the other stages' commands stay fast.
"""

from __future__ import annotations

import argparse
import json
import sys

from vision_ref.errors import VisionRefError


class ScenarioError(VisionRefError):
    """An unknown scenario name or bad render options."""

    exit_code = 2


def _parse_size(text: str) -> tuple[int, int]:
    try:
        w, h = text.lower().split("x")
        size = int(w), int(h)
    except ValueError:
        raise argparse.ArgumentTypeError(f"size must look like 1456x1088, got {text!r}") from None
    if size[0] < 16 or size[1] < 16 or size[0] % 2 or size[1] % 2:
        raise argparse.ArgumentTypeError(f"size must be even and at least 16x16 (H.264 yuv420p), got {text!r}")
    return size


def _parse_floats(n: int):
    def parse(text: str) -> tuple[float, ...]:
        try:
            vals = tuple(float(v) for v in text.split(","))
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {n} comma-separated numbers, got {text!r}") from None
        if len(vals) != n:
            raise argparse.ArgumentTypeError(f"expected {n} comma-separated numbers, got {text!r}")
        return vals

    return parse


def _parse_colour(text: str) -> tuple[int, int, int]:
    """A named colour (red, yellow, ...) or R,G,B 0..255 -> RGB tuple."""
    from vision_ref.sim.appearance import NAMED_COLOURS

    if text.lower() in NAMED_COLOURS:
        return NAMED_COLOURS[text.lower()]
    try:
        rgb = tuple(int(v) for v in text.split(","))
    except ValueError:
        rgb = ()
    if len(rgb) != 3 or not all(0 <= v <= 255 for v in rgb):
        names = ", ".join(sorted(NAMED_COLOURS))
        raise argparse.ArgumentTypeError(f"colour must be one of {names} or R,G,B in 0..255, got {text!r}")
    return rgb  # type: ignore[return-value]


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "scenarios",
        help="list the named scenarios with the rules they demonstrate",
        description="List the scenario library: name, the rule ids each scenario demonstrates, a description.",
    )
    p.add_argument("--json", action="store_true", help='print [{"name", "rules", "description"}] as JSON')
    p.set_defaults(func=cmd_scenarios)

    p = subparsers.add_parser(
        "render",
        help="render a scenario (or random shots) to NAME.mp4 + NAME.truth.json + NAME.camera.json",
        description=(
            "Simulate a named scenario (or N random shots) and render it as seen by an overhead "
            "camera. Writes NAME.mp4 (H.264), NAME.truth.json (shot record + per-frame truth) and "
            "NAME.camera.json (camera model + render settings) into --out."
        ),
    )
    p.add_argument("scenario", nargs="?", help="scenario name (see `vision-ref scenarios`)")
    p.add_argument("--random", type=int, metavar="N", help="render N random shots instead of a named scenario")
    p.add_argument("--out", required=True, help="output directory (created if missing)")
    p.add_argument("--name", help="base name of the output files (default: the scenario name / random_SEED_I)")
    p.add_argument("--seed", type=int, default=0, help="seed of the simulation, the appearance and the noise")
    p.add_argument("--fps", type=float, default=60.0, help="frame rate (default 60)")
    p.add_argument("--size", type=_parse_size, default=(1456, 1088), help="WxH (default 1456x1088)")
    p.add_argument("--exposure", type=float, default=None, metavar="MS", help="exposure time in ms (default 0.5/fps)")
    p.add_argument(
        "--rolling-shutter", type=float, default=0.0, metavar="MS",
        help="rolling-shutter readout time top to bottom row in ms (0 = global shutter, default)",
    )
    p.add_argument("--crf", type=int, default=23, help="H.264 quality, 0 best .. 51 worst (default 23)")
    p.add_argument("--noise", type=float, default=None, help="sensor noise standard deviation in grey levels")
    p.add_argument("--cloth", type=_parse_colour, default=None, help="cloth colour (name or R,G,B)")
    p.add_argument("--cue-colour", type=_parse_colour, default=None, help="cue ball colour (name or R,G,B)")
    p.add_argument(
        "--lamps", default=None, help="lamp layout: " + "|".join(("three", "two", "four", "single", "window"))
    )
    p.add_argument("--no-cue-stick", action="store_true", help="do not draw the cue stick and arm")
    g = p.add_argument_group("camera")
    g.add_argument("--camera-height", type=float, default=None, metavar="MM", help="lens above the cloth (default 2400)")
    g.add_argument("--tilt", type=float, default=0.0, metavar="DEG", help="optical axis tilt towards +x")
    g.add_argument("--roll", type=float, default=0.0, metavar="DEG", help="image rotation about the optical axis")
    g.add_argument("--offset", type=_parse_floats(2), default=(0.0, 0.0), metavar="X,Y", help="camera offset in mm")
    g.add_argument("--focal", type=float, default=None, metavar="PX", help="focal length in pixels (default: fit)")
    g.add_argument(
        "--dist", type=_parse_floats(5), default=(-0.06, 0.012, 0.0, 0.0, 0.0), metavar="K1,K2,P1,P2,K3",
        help="OpenCV lens distortion (default -0.06,0.012,0,0,0)",
    )
    g.add_argument("--camera-json", default=None, help="use this camera model (a CameraModel dict / NAME.camera.json)")
    p.set_defaults(func=cmd_render)


def cmd_scenarios(args) -> int:
    from vision_ref.sim import scenarios

    rows = [{"name": s.name, "rules": list(s.rules), "description": s.description} for s in scenarios.list_scenarios()]
    if args.json:
        json.dump(rows, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    width = max((len(r["name"]) for r in rows), default=4)
    for r in rows:
        print(f"{r['name']:<{width}}  {','.join(r['rules']):<18}  {r['description']}")
    return 0


def _camera_from_args(args):
    from vision_ref.camera import CameraModel

    if args.camera_json:
        from pathlib import Path

        try:
            data = json.loads(Path(args.camera_json).read_text())
            cam = CameraModel.from_dict(data.get("camera", data))
        except (OSError, ValueError) as exc:
            raise ScenarioError(f"cannot read camera model {args.camera_json}: {exc}") from None
        if (cam.width, cam.height) != tuple(args.size) and args.size != (1456, 1088):
            raise ScenarioError(f"--size {args.size[0]}x{args.size[1]} disagrees with the camera file's {cam.width}x{cam.height}")
        return cam
    w, h = args.size
    return CameraModel.overhead(
        w, h, camera_height_mm=args.camera_height, tilt_deg=args.tilt, roll_deg=args.roll,
        offset_mm=tuple(args.offset), dist=tuple(args.dist), focal_px=args.focal,
    )


def _settings_from_args(args):
    from vision_ref.sim.render import RenderSettings

    if args.fps <= 0:
        raise ScenarioError(f"--fps must be positive, got {args.fps}")
    kw = dict(fps=args.fps, seed=args.seed, crf=args.crf, rolling_shutter_s=args.rolling_shutter * 1e-3)
    if args.exposure is not None:
        if args.exposure <= 0 or args.exposure * 1e-3 > 1.0 / args.fps:
            raise ScenarioError(f"--exposure must be in (0, {1000.0 / args.fps:.2f}] ms at {args.fps} fps, got {args.exposure}")
        kw["exposure_s"] = args.exposure * 1e-3
    if args.noise is not None:
        kw["noise_sigma"] = args.noise
    if args.cloth is not None:
        kw["cloth_rgb"] = args.cloth
    if args.cue_colour is not None:
        kw["cue_ball_rgb"] = args.cue_colour
    if args.lamps is not None:
        kw["lamps"] = args.lamps
    if args.no_cue_stick:
        kw["draw_cue"] = False
    try:
        return RenderSettings(**kw)
    except ValueError as exc:
        raise ScenarioError(str(exc)) from None


def cmd_render(args) -> int:
    from vision_ref.sim import scenarios
    from vision_ref.sim.render import render_clip

    if (args.scenario is None) == (args.random is None):
        raise ScenarioError("give either a SCENARIO name or --random N (not both)")
    camera = _camera_from_args(args)
    settings = _settings_from_args(args)
    jobs = []
    if args.random is not None:
        import numpy as np

        from vision_ref.sim import random_shots

        if args.random < 1:
            raise ScenarioError(f"--random must be at least 1, got {args.random}")
        rng = np.random.default_rng(args.seed)
        base = args.name or f"random_{args.seed}"
        for i in range(args.random):
            jobs.append((f"{base}_{i:03d}", random_shots.random_shot(rng)))
    else:
        known = {s.name for s in scenarios.list_scenarios()}
        if args.scenario not in known:
            raise ScenarioError(f"unknown scenario {args.scenario!r}; `vision-ref scenarios` lists {len(known)} names")
        jobs.append((args.name or args.scenario, scenarios.get_scenario(args.scenario).simulate(args.seed)))
    for name, sim in jobs:
        paths = render_clip(sim, camera, settings, args.out, name)
        print(f"{name}: {paths['video']} ({paths['frames']} frames, {paths['seconds']:.1f} s to render)")
    return 0
