"""The project's rules reference (docs/rules.md) and the tests agree: every rule id
the reference defines has a test named ``test_<ID>_...`` under tests/rules/, and the
reference covers every id of the shared RULES.md."""

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"

RULE_ID = re.compile(r"\*\*([A-Z][0-9]{1,2}|R[0a-z])\*\*")


def rule_ids(path: Path) -> list[str]:
    ids = RULE_ID.findall(path.read_text(encoding="utf-8"))
    return list(dict.fromkeys(ids))


def collect_tested_ids() -> set[str]:
    names = set()
    for f in (REPO / "tests" / "rules").glob("test_*.py"):
        for m in re.finditer(r"^def test_([A-Z][0-9a-z]{1,2})_", f.read_text(encoding="utf-8"), re.M):
            names.add(m.group(1))
    return names


def test_reference_lists_rule_ids():
    ids = rule_ids(REPO / "docs" / "rules.md")
    assert len(ids) >= 55 and "F8" in ids and "Rz" in ids


def test_every_rule_id_in_the_reference_has_a_test():
    missing = [r for r in rule_ids(REPO / "docs" / "rules.md") if r not in collect_tested_ids()]
    assert not missing, f"rule ids without a test_<ID>_ test: {missing}"


def test_reference_covers_the_shared_rules():
    shared = SHARED / "rules" / "RULES.md"
    if not shared.exists():
        pytest.skip("shared/rules/RULES.md not present in this checkout")
    ours = set(rule_ids(REPO / "docs" / "rules.md"))
    theirs = [r for r in rule_ids(shared) if r != "Reading"]
    assert [r for r in theirs if r not in ours] == []
