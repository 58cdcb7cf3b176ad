"""`vision-ref` command line: one subcommand per job, each registered by its stage.

Every stage module listed in ``COMMAND_MODULES`` exposes ``register(subparsers)``,
which adds its subcommands with ``set_defaults(func=...)``; ``func(args)`` returns
the exit status. Bad input surfaces as a :class:`VisionRefError` and becomes one
``error: ...`` line on stderr with the error's exit status — never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from vision_ref import __version__
from vision_ref.errors import VisionRefError

COMMAND_MODULES = (
    "vision_ref.rules.cli",  # adjudicate
    "vision_ref.sim.cli",  # scenarios, render
    "vision_ref.calibrate.cli",  # calibrate
    "vision_ref.review.cli",  # review, demo
    "vision_ref.live.cli",  # live, matches
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="vision-ref", description="Automatic referee for carom with five pins.")
    parser.add_argument("--version", action="version", version=f"vision-ref {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except VisionRefError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
