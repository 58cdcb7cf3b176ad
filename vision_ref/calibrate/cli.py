"""`vision-ref calibrate`: make a calibration profile from a video, an image or a camera.

The heavy modules (OpenCV pipelines, the video reader) are imported inside the
handler so that ``vision-ref --help`` and the other stages' commands stay fast.
"""

from __future__ import annotations

import argparse

from vision_ref.errors import CalibrationError


def _parse_corners(text: str) -> list[tuple[float, float]]:
    """``x,y;x,y;x,y;x,y`` (pixels; head-left, head-right, foot-right, foot-left or any order)."""
    try:
        pts = [tuple(float(v) for v in p.split(",")) for p in text.replace(" ", "").split(";") if p]
    except ValueError:
        pts = []
    if len(pts) != 4 or any(len(p) != 2 for p in pts):
        raise argparse.ArgumentTypeError(f"--corners needs four x,y pixel pairs separated by ';', got {text!r}")
    return [(p[0], p[1]) for p in pts]


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "calibrate",
        help="find the table, the lens and the colours; write a calibration profile",
        description=(
            "Calibrate from SOURCE: a video file (its first still frames are used), an image, "
            "or a camera (pi, pi:N, /dev/videoN, camera:N). Finds the four cushion noses, "
            "the camera pose (and lens distortion unless --lens gives it), learns the cloth, "
            "ball and pin colours from the set-up position, and writes PROFILE.json."
        ),
    )
    p.add_argument("source", help="video file, image file, or camera (pi, pi:N, /dev/videoN, camera:N)")
    p.add_argument("--out", required=True, help="where to write the calibration profile (JSON)")
    p.add_argument("--lens", default=None, help="lens calibration JSON (from `vision-ref calibrate-lens`)")
    p.add_argument("--preview", default=None, help="write a PNG drawing the cushions, spots, pins and balls found")
    p.add_argument(
        "--corners", type=_parse_corners, default=None, metavar="X,Y;X,Y;X,Y;X,Y",
        help="manual fallback: the four playing-area corners (cushion-nose intersections) in pixels",
    )
    p.add_argument("--frames", type=int, default=8, help="still frames to average from a video or camera (default 8)")
    p.set_defaults(func=cmd_calibrate)

    p = subparsers.add_parser(
        "calibrate-lens",
        help="calibrate the lens from views of the printed ChArUco board",
        description=(
            "Detect the ChArUco board of calibration/charuco_board.json in the images or video "
            "frames given, calibrate intrinsics and distortion, write LENS.json for --lens."
        ),
    )
    p.add_argument("sources", nargs="+", help="images and/or videos of the board from different angles")
    p.add_argument("--out", required=True, help="where to write the lens JSON")
    p.add_argument("--board", default=None, help="board description JSON (default: calibration/charuco_board.json)")
    p.add_argument("--every", type=int, default=15, help="use every N-th video frame (default 15)")
    p.set_defaults(func=cmd_calibrate_lens)


def cmd_calibrate(args) -> int:
    from vision_ref.calibrate import run

    result = run.calibrate_source(
        args.source, out=args.out, lens_path=args.lens, preview=args.preview,
        corners=args.corners, n_frames=args.frames,
    )
    print(result)
    return 0


def cmd_calibrate_lens(args) -> int:
    from vision_ref.calibrate import lens

    if args.every < 1:
        raise CalibrationError(f"--every must be at least 1, got {args.every}")
    summary = lens.calibrate_lens_files(args.sources, out=args.out, board_path=args.board, every=args.every)
    print(summary)
    return 0
