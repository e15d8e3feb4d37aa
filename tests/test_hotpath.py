"""The hook's hot path: what it imports, and the hand-written readers that keep `re`
off it, checked against the patterns they replace."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import git, memfile, snapshot, write
from gitmemfs.core import memfile as mf
from gitmemfs.core import rules
from gitmemfs.core.gitfiles import loose

# The patterns the fast frontmatter reader used before it dropped `re` (the oracle).
KEY_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*):(?:[ \t]+(.*?))?[ \t]*$")
CHAR = "[^\x00-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]"
SAFE_PLAIN = re.compile(rf"^(?![ \-?:,\[\]{{}}#&*!|>'\"%@`]){CHAR}(?:(?!: | #){CHAR})*(?<![: ])$")
NON_STR = re.compile(r"(?i)^(?:y|n|yes|no|true|false|on|off|null|~|=|<<|[-+.0-9].*)$")
FLAT_SKILL = re.compile(r"^(?:memory/)?skills/[^/]+\.md$", re.IGNORECASE)

# Text biased towards the characters the readers care about.
TRICKY = st.text(alphabet=st.sampled_from(list("ab_-:# \t'\"?[]{}.0123y/sSkKmMdD\x85\x7f\x00\u017f\u0131\u0130"
                                               "\u212a\ufffe\u00e9")) | st.characters(), max_size=12
                 ).filter(lambda t: "\n" not in t)  # both readers get single lines (split, or sanitised)


@settings(max_examples=3000, deadline=None)
@given(TRICKY)
def test_key_line_matches_the_pattern(line: str) -> None:
    m = KEY_LINE.match(line)
    want = (m.group(1), m.group(2)) if m and m.group(2) else None
    assert mf._key_line(line) == want


@settings(max_examples=3000, deadline=None)
@given(TRICKY)
def test_plain_scalar_tests_match_the_patterns(text: str) -> None:
    assert mf._safe_plain(text) == bool(SAFE_PLAIN.match(text))
    if text:
        assert mf._non_str(text) == bool(NON_STR.match(text)) or not text.isascii()


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(["memory/", "MEMORY/", "skills/", "sKills/", "\u017fkills/", "s\u212aills/",
                                 "x", "a.md", ".md", ".MD", "/", "\u0131", "\u212a"]), max_size=5).map("".join))
def test_flat_skill_matches_the_pattern(path: str) -> None:
    assert rules._flat_skill(path) == bool(FLAT_SKILL.match(path))


def test_description_line_breaks_become_spaces() -> None:
    assert mf.sanitize_description(" a\r\nb\rc\nd ") == "a b c d"


def test_pre_commit_path_imports_no_heavy_module() -> None:
    """What the hook imports: none of re, typing, dataclasses, json, sh, yaml, subprocess.
    (`signal` is in, with the enum, functools and collections it brings: the private
    `_signal` saved ~4 % of a hook, under the fast-path rule's 5 %.)"""
    code = ("import sys; import gitmemfs.hookmain; "
            "print(' '.join(m for m in ('re', 'typing', 'dataclasses', 'json', 'sh', "
            "'yaml', 'subprocess') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-I", "-S", "-c", f"import sys; sys.path[:0] = {sys.path!r}; {code}"],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == ""


# -- the hook reads loose objects itself; everything else still goes through cat-file -----------

def _refused(repo, *problems: str) -> None:
    before = snapshot(repo)
    proc = git("commit", "-q", "-m", "bad", cwd=repo, check=False)
    assert proc.returncode == 1, proc.stderr
    assert [ln for ln in proc.stderr.splitlines()[1:] if ln] == list(problems), proc.stderr
    assert snapshot(repo) == before


def test_read_only_still_holds_when_the_old_blob_is_packed(mem) -> None:
    git("gc", "-q", "--prune=now", cwd=mem)  # every object packed: the hook must ask cat-file
    assert not list((mem / ".git" / "objects").glob("??/*"))
    write(mem, "system/rules.md", memfile("Ground rules", "Share secrets freely.\n", "read_only: true"))
    git("add", "-A", cwd=mem)
    _refused(mem, "system/rules.md: file is read_only and cannot be modified")


def test_read_only_still_holds_in_a_linked_worktree(mem, tmp_path) -> None:
    other = tmp_path / "linked"
    git("worktree", "add", "-q", str(other), cwd=mem)  # .git is a file there: cat-file path
    write(other, "system/rules.md", memfile("Ground rules", "Changed.\n", "read_only: true"))
    git("add", "-A", cwd=other)
    _refused(other, "system/rules.md: file is read_only and cannot be modified")


def test_loose_reader_returns_only_objects_that_hash_to_their_name(mem) -> None:
    blob = git("rev-parse", "HEAD:system/rules.md", cwd=mem).stdout.strip()
    objects = loose.objects_dir(str(mem))
    assert objects is not None
    data = loose.read_loose(objects, blob)
    assert data is not None and data.startswith(b"---\ndescription: Ground rules")
    # A loose file whose bytes are another blob's is not trusted: cat-file decides.
    other = git("rev-parse", "HEAD:system/contacts.md", cwd=mem).stdout.strip()
    target = Path(objects, blob[:2], blob[2:])
    target.chmod(0o644)
    target.write_bytes(Path(objects, other[:2], other[2:]).read_bytes())
    assert loose.read_loose(objects, blob) is None
    assert loose.read_loose(objects, "not-an-oid") is None
    assert loose.read_loose(objects, "0" * 40) is None


def test_loose_reader_steps_aside_when_git_dir_is_set(mem, monkeypatch) -> None:
    monkeypatch.setenv("GIT_DIR", str(mem / ".git"))
    assert loose.objects_dir(str(mem)) is None
    monkeypatch.delenv("GIT_DIR")
    assert loose.objects_dir(str(mem), {"GIT_OBJECT_DIRECTORY": "/elsewhere"}) is None


def test_checkout_launcher_runs_without_site_and_ignores_the_current_folder(mem, monkeypatch) -> None:
    """bin/git-memory with the checkout's venv: -S with its site-packages named (yaml
    still found), and a module in the current folder cannot shadow ours."""
    monkeypatch.delenv("GIT_MEMFS_PYTHON")
    (mem / "argparse.py").write_text("raise SystemExit('shadowed')\n")
    git("add", "argparse.py", cwd=mem)
    git("commit", "-q", "--no-verify", "-m", "a trap", cwd=mem)
    proc = subprocess.run(["git", "memory", "create", "system/q.md", "body", "-d", "quoted: 'yes'", "-m", "yaml"],
                          cwd=mem, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "description: 'quoted: ''yes'''" in (mem / "system" / "q.md").read_text()


@pytest.mark.parametrize("argv", [
    ["str_replace", "system/a.md", "x", "y", "-m", "r"],
    ["--json", "create", "notes/a.md", "body", "-d", "d", "-m", "r"],
    ["--memory-dir", "/tmp/x", "-q", "insert", "system/a.md", "3", "t", "-m", "r"],
    ["--memory-dir=/tmp/x", "view", "system/", "--json"],
    ["config", "--json"],
])
def test_an_edit_builds_only_its_part_of_the_parser_with_the_same_result(argv: list[str]) -> None:
    """command_word picks the subcommand past the global options; the partial parser
    parses exactly as the whole one does."""
    from gitmemfs.cli.fastargs import command_word
    from gitmemfs.cli.memory import build_parser
    word = command_word(argv)
    assert word == next(a for a in argv if not a.startswith("-") and a != "/tmp/x")
    partial, whole = build_parser(word), build_parser()
    assert vars(partial.parse_args(argv)) == vars(whole.parse_args(argv))


@pytest.mark.parametrize("argv", [["-h"], ["--version"], ["--bogus", "view"], []])
def test_anything_else_gets_the_whole_parser(argv: list[str]) -> None:
    from gitmemfs.cli.fastargs import command_word
    assert command_word(argv) is None


def test_run_many_runs_each_command_and_keeps_their_order(mem) -> None:
    from gitmemfs.core import git as gitrun
    top, bad, cfg = gitrun.run_many([["rev-parse", "--show-toplevel"], ["rev-parse", "--verify", "nope"],
                                           ["config", "-z", "--list"]], cwd=str(mem / "system"))
    assert top.code == 0 and top.out.strip() == str(mem)
    assert bad.code != 0
    assert cfg.code == 0 and "memory.repo\ntrue" in cfg.out
