import pytest

from vision_ref.live.operator import CommandError, parse_command


@pytest.mark.parametrize("line, action, calls, who, raises", [
    ("touch", "call", [{"type": "touch"}], None, None),
    ("t cs", "call", [{"type": "touch"}, {"type": "cue_side"}], None, None),
    ("pw white2 @ivan", "call", [{"type": "partner_stop_white", "ball": "white2"}], "ivan", None),
    ("partner_stop_white", None, None, None, "needs the ball"),
    ("pw cue", None, None, None, "needs the ball"),
    ("bystander", "call", [{"type": "bystander"}], None, None),
    ("pn", "call", [{"type": "pin_not_set"}], None, None),
    ("ss", "call", [{"type": "self_stop"}], None, None),
    ("pc", "call", [{"type": "partner_stop_cue"}], None, None),
    ("amend touch", "amend", [{"type": "touch"}], None, None),
    ("amend none", "amend", [], None, None),
    ("amend", None, None, None, "amend CALL"),
    ("x touch", "cancel", [{"type": "touch"}], None, None),
    ("u", "undo", [], None, None),
    ("undo now", None, None, None, "takes no arguments"),
    ("who Olga", "who", [], None, None),
    ("dance", None, None, None, "unknown call 'dance'"),
    ("@bob", None, None, None, "needs a command"),
    ("q", "quit", [], None, None),
])
def test_parse(line, action, calls, who, raises):
    if raises:
        with pytest.raises(CommandError, match=raises):
            parse_command(line)
        return
    cmd = parse_command(line)
    assert cmd.action == action and cmd.calls == calls and cmd.who == who


def test_blank_line_is_nothing():
    assert parse_command("   \n") is None
