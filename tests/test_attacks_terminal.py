"""Issue 34, attacks 4 and 5: text an agent or a hostile server wrote never reaches a
person's terminal raw. Each command runs on a real pseudo-terminal (what a person's
shell gives it), and each answer is checked byte for byte for ESC, BEL and C1."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import git, memfile, memory, on_terminal, snapshot

ESC_TITLE = "\x1b]0;owned\x07"
CSI = "\x1b[31m"
C1_CSI = "\x9b"
RAW = (b"\x1b", b"\x07", b"\xc2\x9b")  # what a terminal would act on (C1 CSI as UTF-8)


def terminal(repo: Path, *args: str) -> tuple[int, bytes]:
    """`git memory ARGS` with stdout and stderr on a pty; (exit code, what it printed)."""
    return on_terminal(["git", "memory", *args], repo)


def assert_clean(out: bytes, what: object) -> None:
    for raw in RAW:
        assert raw not in out, (what, out)


@pytest.fixture
def hostile(repo: Path) -> Path:
    """What an agent wrote through its own tool (a description with CSI codes, a body
    and a reason with ESC, BEL and a C1 CSI), and a path holding ESC and BEL in an older
    commit made past the hooks (the gate refuses it now; history keeps it)."""
    sha = git("hash-object", "-w", "--stdin", cwd=repo, input=memfile("old", "planted\n")).stdout.strip()
    git("update-index", "--add", "--cacheinfo", f"100644,{sha},notes/{ESC_TITLE}x.md", cwd=repo)
    git("commit", "-q", "--no-verify", "-m", f"plant {ESC_TITLE}", cwd=repo)
    git("reset", "-q", "--hard", cwd=repo)
    proc = memory("create", "notes/a.md", f"body {ESC_TITLE} here {C1_CSI}2J\n", "-d",
                  f"desc {CSI}red\x1b[0m {C1_CSI}31m", "-m", f"why {CSI}\x1b[2J cleared", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    return repo


@pytest.mark.parametrize("args", [
    ("tree",), ("log",), ("compile",), ("compile", "--compat", "letta"), ("search", "body"),
    ("search", "planted"), ("show", "notes/a.md"), ("view", "notes/a.md"), ("check", "--all"),
    ("diff", "HEAD~2..HEAD"), ("diff",),
])
def test_agent_text_reaches_a_terminal_escaped(hostile: Path, args: tuple[str, ...]) -> None:
    code, out = terminal(hostile, *args)
    assert code in (0, 1), out
    assert_clean(out, args)
    if args != ("compile", "--compat", "letta"):  # upstream's projection shows neither
        assert b"\\x1b" in out or b"\\x9b" in out, (args, out)  # shown, not dropped


def test_a_pipe_gets_the_memory_as_stored_and_json_carries_escapes(hostile: Path) -> None:
    """A model or `show > file` reads the memory byte for byte; --json is the same
    value with every control character escaped."""
    shown = memory("show", "notes/a.md", cwd=hostile).stdout
    assert f"body {ESC_TITLE} here {C1_CSI}2J" in shown
    log = memory("log", cwd=hostile).stdout
    assert "\x1b" not in log and "why \\x1b[31m" in log  # people's output, wherever it goes
    for args in (("log", "--json"), ("show", "notes/a.md", "--json"), ("tree", "--json"), ("compile", "--json")):
        proc = subprocess.run(["git", "memory", *args], cwd=hostile, capture_output=True)
        assert_clean(proc.stdout, args)
        assert json.loads(proc.stdout)


def test_a_refusal_quotes_the_agents_path(repo: Path) -> None:
    """The hook's refusal names the path: escaped, on the person's terminal too."""
    sha = git("hash-object", "-w", "--stdin", cwd=repo, input=memfile("d", "x\n")).stdout.strip()
    git("update-index", "--add", "--cacheinfo", f"100644,{sha},notes/{ESC_TITLE}.md", cwd=repo)
    before = snapshot(repo)
    code, out = on_terminal(["git", "commit", "-q", "-m", "x"], repo)
    assert code == 1, out
    assert b"holds the control character U+001B" in out, out
    assert_clean(out, "commit")
    assert snapshot(repo) == before


# -- attack 4: a hostile server's lines ---------------------------------------------------------

def test_a_hostile_servers_error_lines_are_stripped(repo: Path, tmp_path: Path) -> None:
    """A server (here an ssh one: its stderr reaches git's, byte for byte) answers a
    sync's fetch with escape sequences on an `error:` line."""
    server = tmp_path / "srv.git"
    git("init", "-q", "--bare", str(server), cwd=tmp_path)
    git("remote", "add", "origin", str(server), cwd=repo)
    git("push", "-q", "-u", "origin", "main", cwd=repo)
    git("remote", "set-url", "origin", "ssh://evil.example/srv.git", cwd=repo)
    ssh = tmp_path / "evil-ssh"
    ssh.write_text("#!/bin/sh\nprintf 'error: \\033]0;owned\\007\\033[2Jthe server \\302\\233 is "
                   "\\033[31mdown\\n' >&2\nexit 128\n")
    ssh.chmod(0o755)
    env = {**os.environ, "GIT_SSH_COMMAND": str(ssh)}
    before = snapshot(repo)
    proc = subprocess.run(["git", "memory", "sync"], cwd=repo, capture_output=True, env=env)
    assert proc.returncode == 1, proc.stderr
    assert b"the server" in proc.stderr and b"is down" in proc.stderr.replace(b"  ", b" "), proc.stderr
    assert_clean(proc.stderr + proc.stdout, "sync")
    proc = subprocess.run(["git", "memory", "sync", "--json"], cwd=repo, capture_output=True, env=env)
    answer = json.loads(proc.stdout)
    assert answer["ok"] is False and "the server" in answer["message"], answer
    for value in (answer["message"], answer.get("error", "")):
        assert not any(c in value for c in "\x1b\x07\x9b"), value
    assert snapshot(repo) == before


def test_a_bidi_override_in_agent_text_is_shown_escaped(repo: Path) -> None:
    """"Trojan Source": a right-to-left override makes a terminal show text in another
    order than it is. On a person's terminal it is an escape; a pipe keeps it exact."""
    trick = "pay \u202etnuocca\u202c now \u2066x\u2069"
    proc = memory("create", "notes/bidi.md", f"{trick}\n", "-d", f"about {trick}", "-m", f"why {trick}", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    for args in (("log",), ("show", "notes/bidi.md"), ("compile",), ("search", "pay")):
        code, out = terminal(repo, *args)
        assert code == 0, out
        assert "\u202e".encode() not in out and "\u2066".encode() not in out, (args, out)
        assert b"\\u202e" in out, (args, out)  # shown, not dropped
    assert trick in memory("show", "notes/bidi.md", cwd=repo).stdout
