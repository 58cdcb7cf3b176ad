"""`vision-ref live` and `vision-ref matches`: the live referee and the match log.

Heavy modules (OpenCV, numpy, tracker, renderer) are imported inside the handlers so
that ``vision-ref --help`` and other commands stay fast.
"""

from __future__ import annotations

from vision_ref.errors import VisionRefError


class LiveError(VisionRefError):
    """Bad live/matches options (unknown match, unusable database, bad source spec)."""

    exit_code = 2


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "live",
        help="referee a match live from a camera, a device, a file or a synthetic scenario",
        description="Capture -> track -> events -> adjudicate, one decision per shot on a terminal scoreboard.",
    )
    p.add_argument("--source", default="pi", help="pi | /dev/videoN | FILE | synthetic:NAME")
    p.add_argument("--calibration", help="calibration profile (JSON)")
    p.add_argument("--players", nargs=2, metavar=("A", "B"), default=("A", "B"))
    p.add_argument("--target", type=int, default=100)
    p.add_argument("--db", default="matches.sqlite", help="match log (SQLite, WAL)")
    p.add_argument("--resume", action="store_true", help="continue the last unfinished match")
    p.set_defaults(func=cmd_live)

    p = subparsers.add_parser("matches", help="list and export matches from the match log")
    p.add_argument("--db", default="matches.sqlite")
    p.set_defaults(func=cmd_matches)


def cmd_live(args) -> int:
    raise LiveError("live: not wired yet")


def cmd_matches(args) -> int:
    raise LiveError("matches: not wired yet")
