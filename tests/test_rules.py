"""The shared validator, rule by rule (pure: bytes in, problems out)."""
from __future__ import annotations

import pytest

from gitmemfs.core import rules

GOOD = b"---\ndescription: Fine\n---\nbody\n"
RO = b"---\ndescription: Fixed\nread_only: true\n---\nbody\n"


def msgs(problems: list[rules.Problem]) -> list[str]:
    return [p.message for p in problems]


@pytest.mark.parametrize("data,expected", [
    (b"no frontmatter\n", "missing frontmatter (must start with ---)"),
    (b"---\ndescription: x\n", "frontmatter opened but never closed (missing closing ---)"),
    (b"---\nlimit: 3\n---\n", "missing required field 'description'"),
    (b"---\ndescription: ''\n---\n", "'description' must not be empty"),
    (b"---\ndescription: |\n  two\n  lines\n---\n", "'description' must be a single line"),
    (b"---\ndescription: [a, b]\n---\n", "'description' must be a single line of text"),
    (b"---\ndescription: x\ntags: [a]\n---\n", "unknown frontmatter key 'tags' (allowed: description read_only limit)"),
    (b"---\ndescription: x\ndescription: y\n---\n", "duplicate frontmatter key 'description'"),
    (b"---\ndescription: 'open\n---\n", "invalid YAML in frontmatter"),
    (b"\xff\xfe-\x00-\x00", "has UTF-16LE BOM; convert the file to UTF-8"),
    (b"\xef\xbb\xbf---\ndescription: x\n---\n", "starts with a UTF-8 byte order mark; save it as UTF-8 without BOM"),
    (b"---\ndescription: x\n---\n\x00", "contains NUL bytes"),
    (b"---\ndescription: \xc3\x28\n---\n", "is not valid UTF-8"),
])
def test_structure_rules(data: bytes, expected: str) -> None:
    found = msgs(rules.check_state("system/x.md", data, scope="letta"))
    assert any(expected in m for m in found), found


def test_good_file_and_comments_pass() -> None:
    assert rules.check_state("system/x.md", GOOD, scope="letta") == []
    assert rules.check_state("system/x.md", b"---\n# note\ndescription: a  # c\nlimit: 1\n---\n",
                             scope="letta") == []


def test_scope() -> None:
    broken = b"no frontmatter"
    assert rules.check_state("notes/x.md", broken, scope="letta") == []
    assert msgs(rules.check_state("notes/x.md", broken, scope="all"))
    assert msgs(rules.check_state("memory/system/x.md", broken, scope="letta"))
    assert msgs(rules.check_state("reference/deep/x.MD", broken, scope="letta"))
    assert rules.check_state("skills/tool/SKILL.md", broken, scope="all") == []
    assert rules.check_state("system/data.json", broken, scope="all") == []
    with pytest.raises(ValueError):
        rules.valid_scope("everything")


def test_flat_skills_are_rejected() -> None:
    assert msgs(rules.check_state("skills/tool.md", GOOD, scope="letta")) == [
        "invalid skill path (skills must be folders). Use skills/<name>/SKILL.md"]
    assert msgs(rules.check_state("memory/skills/tool.md", GOOD, scope="letta"))
    assert rules.check_state("skills/tool/SKILL.md", GOOD, scope="letta") == []


def test_symlinks_in_scope_are_rejected() -> None:
    assert msgs(rules.check_state("system/x.md", b"../etc/passwd", scope="letta", mode="120000")) == [
        "is a symbolic link; memory files must be regular files"]


@pytest.mark.parametrize("old,new,expected", [
    (RO, RO.replace(b"body", b"edited"), "file is read_only and cannot be modified"),
    (RO, None, "file is read_only and cannot be deleted"),
    (None, RO, "'read_only' is a protected field and cannot be set by the agent"),
    (GOOD, RO, "'read_only' is a protected field and cannot be set by the agent"),
    (b"---\ndescription: x\nread_only: false\n---\n", b"---\ndescription: x\n---\n",
     "'read_only' is a protected field and cannot be removed by the agent"),
    (b"---\ndescription: x\nread_only: false\n---\n", b"---\ndescription: x\nread_only: yes\n---\n",
     "'read_only' is a protected field and cannot be changed by the agent"),
    (b'---\ndescription: x\nread_only: "True"\n---\n', b"---\ndescription: y\n---\n",
     "file is read_only and cannot be modified"),
])
def test_read_only_protection(old: bytes | None, new: bytes | None, expected: str) -> None:
    assert expected in msgs(rules.check_change("system/x.md", old, new, scope="letta"))


def test_read_only_protection_applies_outside_the_scope_too() -> None:
    assert msgs(rules.check_change("notes/x.md", RO, None, scope="letta")) == [
        "file is read_only and cannot be deleted"]


def test_broken_old_version_cannot_launder_protection() -> None:
    broken_ro = b"---\ndescription: [unclosed\nread_only: true\n---\n"
    assert msgs(rules.check_change("system/x.md", broken_ro, GOOD, scope="letta")) == [
        "file is read_only and cannot be modified"]


def test_unchanged_and_unprotected_changes_pass() -> None:
    assert rules.check_change("system/x.md", RO, RO, scope="letta") == []
    assert rules.check_change("system/x.md", GOOD, None, scope="letta") == []
    assert rules.check_change("system/x.md", None, GOOD, scope="letta") == []
    same_key = b"---\ndescription: x\nread_only: false\n---\n"
    assert rules.check_change("system/x.md", same_key, same_key.replace(b"x\n", b"y\n"), scope="letta") == []


def test_problem_formatting() -> None:
    p = rules.Problem("system/x.md", "bad", commit="0123456789abcdef")
    assert str(p) == "0123456 system/x.md: bad"
    assert p.as_dict() == {"path": "system/x.md", "message": "bad", "commit": "0123456789abcdef"}
