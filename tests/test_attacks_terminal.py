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


# -- invisible characters: two texts that look alike and differ ----------------------------------

# What is put between "Sar" and "ah", and how a terminal must show it: each invisible
# character out of the company that would keep it.
INVISIBLE = {"\u200b": "\\u200b", "\u200c": "\\u200c", "\u200d": "\\u200d", "\u2060": "\\u2060",
             "\ufeff": "\\ufeff", "\u00ad": "\\u00ad", "\u180e": "\\u180e", "\u3164": "\\u3164",
             "\U000e0041": "\\U000e0041", "\ufe0f": "\\ufe0f",  # a tag alone, VS16 after a letter
             "\U0001f469\u200d": "\U0001f469\\u200d",  # a ZWJ between an emoji and a letter
             "\U0001f3f4\U000e0061\U000e0062\U000e007f": "\U0001f3f4\\U000e0061\\U000e0062\\U000e007f",  # no such flag
             "\u3164\U000e0068\U000e0069": "\\u3164\\U000e0068\\U000e0069",  # a filler, tags spelling "hi"
             # lookalikes: a Cyrillic а in a Latin word, a no-break space, two pictographs no font joins
             "\u0430": "\\u0430", "\u00a0": "\\u00a0",
             "\U0001f525\u200d\U0001f525": "\U0001f525\\u200d\U0001f525"}
# Sequences a person expects drawn: an emoji ZWJ sequence with a skin tone, a subdivision
# flag (tags), a keycap and a red heart (VS16), Persian's ZWNJ, a Devanagari half form (ZWJ).
DRAWN = ("\U0001f469\U0001f3fd\u200d\U0001f4bb", "\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067"
         "\U000e007f", "1\ufe0f\u20e3", "\u2764\ufe0f", "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",
         "\u0915\u094d\u200d\u0937")


def test_invisible_characters_in_agent_text_are_shown_escaped(repo: Path) -> None:
    """Two paths, descriptions, bodies and reasons that differ from the plain ones only
    by an invisible character: on a person's terminal each invisible one is an escape,
    so the two look different; emoji sequences and scripts that need a joiner are drawn
    as written; a pipe still gets the bytes as stored."""
    proc = memory("create", "notes/Sarah.md", "call Sarah's phone\n", "-d", "Sarah's phone", "-m", "plain", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    for char in INVISIBLE:
        trick = f"Sar{char}ah's phone"
        proc = memory("create", f"notes/Sar{char}ah.md", f"call {trick}\n", "-d", trick, "-m", f"why {trick}",
                      cwd=repo)
        assert proc.returncode == 0, proc.stderr
    drawn = " ".join(DRAWN)
    proc = memory("create", "notes/drawn.md", f"{drawn}\n", "-d", f"fine {drawn}", "-m", f"kept {drawn}", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    outputs = {}
    diff = ("diff", f"HEAD~{len(INVISIBLE) + 1}..HEAD")
    for args in (("tree",), ("log",), ("compile",), ("search", "phone"), ("show", "notes/Sar\u200bah.md"),
                 ("view", "notes/Sar\u00adah.md"), diff, ("show", "notes/drawn.md")):
        code, out = terminal(repo, *args)
        assert code == 0, (args, out)
        outputs[" ".join(args).split(".md")[0].replace("notes/", "")] = out
        for char in INVISIBLE:
            assert char.encode() not in out.replace(drawn.encode(), b""), (args, INVISIBLE[char], out)
        assert not {"\u200b", "\ufeff", "\u2060", "\U000e0041"} & set(out.decode()), (args, out)
    for command in ("tree", "log", "compile", "search phone", " ".join(diff)):
        missing = [shown for shown in INVISIBLE.values() if f"Sar{shown}ah".encode() not in outputs[command]]
        assert not missing, (command, missing, outputs[command])
    for command in ("log", "compile", "show drawn"):
        assert drawn.encode() in outputs[command], (command, outputs[command])  # drawn as written
    assert b"call Sar\\u200bah's phone" in outputs["show Sar\u200bah"]
    assert b"call Sar\\u00adah's phone" in outputs["view Sar\u00adah"]
    for char in INVISIBLE:
        assert memory("show", f"notes/Sar{char}ah.md", cwd=repo).stdout.endswith(f"call Sar{char}ah's phone\n")
