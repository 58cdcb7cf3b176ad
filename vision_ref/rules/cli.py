"""`vision-ref adjudicate MATCH.json [--explain]`: decide every shot of a match file.

Prints ``{"decisions": [...], "final": {"score": ..., "winner": ...}}`` as in
SHOT_RECORD.md, or with ``--explain`` a readable account per shot. A file that breaks
the contract raises :class:`ContractError`, which the dispatcher prints as one
``error: <field>: <problem>`` line with exit status 2.
"""

from __future__ import annotations

import argparse
import json
import sys

from vision_ref.errors import ContractError


def load_match_file(path: str) -> dict:
    """Read a match file as JSON; unreadable or non-JSON files are contract errors."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        raise ContractError(path, "no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ContractError(path, f"cannot read: {exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ContractError(path, f"not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None


def _run_adjudicate(args: argparse.Namespace) -> int:
    # Imported here so `vision-ref --help` stays fast and independent of rule code.
    from vision_ref.rules.match import adjudicate_match

    data = load_match_file(args.match)
    result = adjudicate_match(data)
    if args.explain:
        from vision_ref.rules.explain import explain_match

        sys.stdout.write(explain_match(data, result))
    else:
        json.dump(result, sys.stdout, indent=2 if args.pretty else None, ensure_ascii=False)
        sys.stdout.write("\n")
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "adjudicate",
        help="decide every shot of a match file (RULES.md) and print the decisions",
        description="Decide every shot of a vision-ref.match/1 file under RULES.md.",
    )
    p.add_argument("match", metavar="MATCH.json", help="match file (format vision-ref.match/1)")
    p.add_argument("--explain", action="store_true", help="print a readable account per shot instead of JSON")
    p.add_argument("--pretty", action="store_true", help="indent the JSON output")
    p.set_defaults(func=_run_adjudicate)
