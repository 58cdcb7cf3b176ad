"""`vision-ref review` and `vision-ref demo`: referee a recorded match, write a report.

The pipeline (video decoding, calibration, tracking, event inference, OpenCV drawing)
is imported inside the handlers so that ``vision-ref --help`` and the other stages'
commands stay fast.
"""

from __future__ import annotations

import argparse
import math

from vision_ref.errors import VisionRefError


class ReviewOptionError(VisionRefError):
    """Bad `review` / `demo` options (players, modes, target)."""

    exit_code = 2


def _parse_mode_item(text: str) -> list[tuple[str | None, str]]:
    """``series`` | ``A=series`` | ``A=series,B=shtoss`` -> [(player or None, mode)]."""
    out = []
    for part in text.replace(" ", "").split(","):
        if not part:
            continue
        player, sep, mode = part.rpartition("=")
        if mode not in ("series", "shtoss") or (sep and not player):
            raise argparse.ArgumentTypeError(
                f"--modes takes series|shtoss per player in order (--modes series shtoss) or A=series,B=shtoss; got {text!r}")
        out.append((player or None, mode))
    return out


def resolve_modes(items, players) -> dict[str, str] | None:
    """The parsed ``--modes`` items as ``{player: mode}``: bare modes go to the players in order."""
    if not items:
        return None
    flat = [it for group in items for it in group]
    named = {p: m for p, m in flat if p is not None}
    bare = [m for p, m in flat if p is None]
    if named and bare:
        raise ReviewOptionError("--modes: give either a mode per player in order or PLAYER=MODE pairs, not both")
    if bare:
        if len(bare) > len(players):
            raise ReviewOptionError(f"--modes: {len(bare)} modes for {len(players)} players")
        return dict(zip(players, bare))
    unknown = sorted(set(named) - set(players))
    if unknown:
        raise ReviewOptionError(f"--modes names {', '.join(unknown)}, not one of the players {' '.join(players)}")
    return named


def _add_match_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--players", nargs=2, default=("A", "B"), metavar=("FIRST", "SECOND"),
                   help="player names, the first to break first (default A B)")
    p.add_argument("--target", type=int, default=100, help="points to win (default 100)")
    p.add_argument("--modes", type=_parse_mode_item, nargs="+", default=None, metavar="MODE",
                   help="each player's mode, series or shtoss, in player order (--modes series shtoss) "
                        "or as A=series,B=shtoss (RULES M1-M3; default series)")
    p.add_argument("--confidence", type=float, default=None, metavar="P",
                   help="least probability at which a pin's knocker counts as established; below it the pin is a "
                        "doubt (F8). Higher: fewer wrong attributions, more doubts (default: the events stage's, "
                        "see docs/events.md)")
    p.add_argument("--exposure", type=float, default=None, metavar="MS",
                   help="the camera's exposure time in ms (default: the timestamps sidecar's, if it says). A moving "
                        "ball is seen where it was mid-exposure, so contact times need it")
    p.add_argument("--no-annotated", action="store_true",
                   help="skip DIR/annotated.mp4 (the slowest output; the speed benchmark is measured without it)")
    p.add_argument("--quiet", action="store_true", help="no progress bar on stderr")


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "review",
        help="referee a recorded match: match.json, decisions.json, report.html, annotated.mp4",
        description=(
            "Run the whole pipeline on VIDEO: calibrate (from the first still frames unless "
            "--calibration is given), track the balls and pins, split the footage into shots, "
            "infer each shot record, adjudicate them in order and write into --out: match.json, "
            "decisions.json, report.html (score progression, every call with its rule and reason, "
            "a diagram per shot, doubts), shot_NNN.png diagrams and annotated.mp4. A NAME.timestamps.txt "
            "sidecar next to the video is used instead of a constant frame rate."
        ),
    )
    p.add_argument("video", help="the recorded video (e.g. from `vision-ref live` or a phone)")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory (created if missing)")
    p.add_argument("--calibration", default=None, metavar="PROFILE",
                   help="calibration profile JSON from `vision-ref calibrate` (default: calibrate from the video)")
    _add_match_options(p)
    p.set_defaults(func=cmd_review)

    p = subparsers.add_parser(
        "demo",
        help="review the bundled sample video and print where the report is",
        description=(
            "Run `vision-ref review` on the sample video shipped in sample_videos/ with its "
            "calibration profile, write the outputs into --out (default ./vision-ref-demo) and "
            "print the path of report.html. Opens nothing."
        ),
    )
    p.add_argument("--out", default="vision-ref-demo", metavar="DIR", help="output directory (default ./vision-ref-demo)")
    p.add_argument("--video", default=None, help="another video instead of the bundled sample")
    _add_match_options(p)
    p.set_defaults(func=cmd_demo)


def _check_match_options(args) -> None:
    if args.players[0] == args.players[1]:
        raise ReviewOptionError(f"--players needs two different names, got {args.players[0]!r} twice")
    if args.target < 1:
        raise ReviewOptionError(f"--target must be at least 1, got {args.target}")
    args.modes = resolve_modes(args.modes, list(args.players))
    args.settings = None
    args.exposure_s = None
    if args.exposure is not None:
        if not (args.exposure > 0 and math.isfinite(args.exposure)):
            raise ReviewOptionError(f"--exposure must be a positive time in ms, got {args.exposure:g}")
        args.exposure_s = args.exposure * 1e-3
    if args.confidence is not None:
        from vision_ref.events.infer import InferenceSettings

        try:
            args.settings = InferenceSettings(confidence=args.confidence)
        except VisionRefError as exc:
            raise ReviewOptionError(f"--confidence {args.confidence:g}: {getattr(exc, 'problem', exc)}") from None


def cmd_review(args) -> int:
    from vision_ref.review.pipeline import review_video

    _check_match_options(args)
    result = review_video(
        args.video, args.out, calibration=args.calibration, players=tuple(args.players),
        target=args.target, modes=args.modes, annotated=not args.no_annotated, progress=not args.quiet,
        settings=args.settings, exposure_s=args.exposure_s,
    )
    print(result.summary())
    return 0


def cmd_demo(args) -> int:
    from vision_ref.review.demo import run_demo

    _check_match_options(args)
    result = run_demo(
        args.out, video=args.video, players=tuple(args.players), target=args.target, modes=args.modes,
        annotated=not args.no_annotated, progress=not args.quiet, settings=args.settings,
        exposure_s=args.exposure_s,
    )
    print(result.summary())
    print(f"report: {result.report.resolve()}")
    return 0
