"""Operator commands typed at the live referee's keyboard.

One command per line (Enter), so it works over ssh, in tmux and from a FIFO:

    touch | t               F3/B6  the player touched a ball
    cue_side | cs           F9     hit with the side or butt of the cue
    self_stop | ss          F10    the player stopped his own cue ball
    partner_stop_cue | pc   B4     the partner stopped the cue ball
    partner_stop_white BALL | pw BALL   B5  the partner stopped white1/white2
    bystander | by          B3     cue ball came back off a bystander
    pin_not_set | pn        F7     a pin was not set when the shot was made
    stance | st             S3     stance out of bounds playing from hand
    cancel CALL | x CALL    withdraw a pending call
    amend CALL... | a ...   replace the calls of the LAST decided shot and decide it again
                            (`amend none` clears them)
    undo | u                take the last decision back
    pause | p, resume | r   hold / continue deciding shots
    who NAME                who is at the keyboard from now on
    note TEXT               a remark for the log
    help | h, quit | q

A call goes to the shot in progress, or when the table is still to the next shot.
``... @NAME`` at the end of any command names who made it, this once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vision_ref.errors import VisionRefError

CALL_TYPES = ("touch", "cue_side", "self_stop", "partner_stop_cue", "partner_stop_white", "bystander",
              "pin_not_set", "stance")
CALL_ALIASES = {"t": "touch", "cs": "cue_side", "ss": "self_stop", "pc": "partner_stop_cue",
                "pw": "partner_stop_white", "by": "bystander", "pn": "pin_not_set", "st": "stance"}
ACTION_ALIASES = {"x": "cancel", "a": "amend", "u": "undo", "p": "pause", "r": "resume", "h": "help",
                  "?": "help", "q": "quit", "exit": "quit"}
ACTIONS = ("cancel", "amend", "undo", "pause", "resume", "who", "note", "help", "quit", "status")
WHITES = ("white1", "white2")


class CommandError(VisionRefError):
    """A command line the operator typed cannot be understood."""


@dataclass
class Command:
    action: str  # "call" or one of ACTIONS
    calls: list[dict] = field(default_factory=list)
    text: str = ""
    who: str | None = None


def _parse_calls(words: list[str]) -> list[dict]:
    calls: list[dict] = []
    i = 0
    while i < len(words):
        w = CALL_ALIASES.get(words[i].lower(), words[i].lower())
        if w not in CALL_TYPES:
            raise CommandError(f"unknown call {words[i]!r}; calls: {', '.join(CALL_TYPES)}")
        if w == "partner_stop_white":
            if i + 1 >= len(words) or words[i + 1].lower() not in WHITES:
                raise CommandError("partner_stop_white needs the ball: white1 or white2")
            calls.append({"type": w, "ball": words[i + 1].lower()})
            i += 2
            continue
        calls.append({"type": w})
        i += 1
    return calls


def parse_command(line: str) -> Command | None:
    """A Command, None for an empty line; CommandError says what is wrong."""
    words = line.strip().split()
    if not words:
        return None
    who = None
    if words[-1].startswith("@"):
        who = words.pop()[1:] or None
        if not words:
            raise CommandError("a name after @ needs a command before it")
    head = words[0].lower()
    head = ACTION_ALIASES.get(head, head)
    rest = words[1:]
    if head in ("undo", "pause", "resume", "help", "quit", "status"):
        if rest:
            raise CommandError(f"{head} takes no arguments")
        return Command(head, who=who)
    if head == "who":
        if len(rest) != 1:
            raise CommandError("who NAME (one word)")
        return Command("who", text=rest[0], who=who)
    if head == "note":
        return Command("note", text=" ".join(rest), who=who)
    if head == "cancel":
        return Command("cancel", calls=_parse_calls(rest), who=who)
    if head == "amend":
        if rest and [w.lower() for w in rest] == ["none"]:
            return Command("amend", calls=[], who=who)
        if not rest:
            raise CommandError("amend CALL... (or `amend none` to clear the calls)")
        return Command("amend", calls=_parse_calls(rest), who=who)
    return Command("call", calls=_parse_calls(words), who=who)


HELP = __doc__.split("\n\n", 1)[1].split("A call goes")[0].rstrip()
