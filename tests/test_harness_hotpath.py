"""The Claude Code hook's hot path: its line read without argparse (held to
argparse's answers on generated lines), and what a Stop hook imports."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from conftest import cache_of, git, memory
from gitmemfs.cli import cmd_install, fastargs
from gitmemfs.cli import memory as cli
from gitmemfs.core import cachedir
from gitmemfs.core.errors import UsageError
from gitmemfs.harness import claude_code, context


def _plain(values: dict) -> dict:
    return {k: (v.__name__ if callable(v) else v) for k, v in values.items()}


def argparse_answer(argv: list[str]) -> dict | None:
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            args, _parser = cli._parse(argv)
        except (UsageError, SystemExit):
            return None
    found = _plain(vars(args))
    if found.get("rest", [])[:1] == ["--"]:  # as do_hook reads it: argparse may keep the `--` or not
        found["rest"] = found["rest"][1:]
    return found


def fast_answer(argv: list[str]) -> dict | None:
    args = fastargs.parse_hook(argv, lambda: cmd_install.do_hook)
    return None if args is None else _plain(vars(args))


WORDS = ["hook", "claude-code", "codex", "stop", "session-start", "", "-", "--", "-x", "--json", "-q",
         "--memory-dir", "/m", "--memory-dir=/m", "notify", "{}", "a b", "-h"]


@st.composite
def hook_lines(draw: st.DrawFn) -> list[str]:
    before = draw(st.lists(st.sampled_from(["--json", "-q", "--quiet", "--memory-dir", "/m", "-x"]), max_size=3))
    rest = draw(st.lists(st.sampled_from(WORDS), max_size=5))
    return [*before, *rest]


@settings(max_examples=800, deadline=None)
@given(argv=hook_lines())
@example(argv=["hook", "claude-code", "stop", "--json"])
@example(argv=["--memory-dir", "/m", "hook", "claude-code", "-"])
@example(argv=["hook", "claude-code", "--", "stop"])
@example(argv=["--memory-dir", "/m", "hook", "codex", "notify", "{}"])
@example(argv=["hook", "codex", "notify", "--", "notify-send", "a b", "{}"])
@example(argv=["hook", "codex", "notify", "-q", "{}"])
def test_a_hook_line_read_without_argparse_is_read_as_argparse_reads_it(argv: list[str]) -> None:
    fast = fast_answer(argv)
    if fast is not None:
        assert fast == argparse_answer(argv), argv


def test_the_installed_lines_take_the_fast_path(tmp_path: Path) -> None:
    import shlex

    for event in claude_code.EVENTS.values():
        argv = shlex.split(claude_code.hook_command(["git-memory"], str(tmp_path / "my memory"), event))[1:]
        assert fast_answer(argv) is not None and fast_answer(argv) == argparse_answer(argv), argv


def test_a_stop_hook_imports_no_argparse_nor_typing(repo: Path, tmp_path: Path) -> None:
    """End to end through the console script's code (cli/memory.py run): the step is
    counted, and argparse, typing and gettext were never imported."""
    git("config", "dream.trigger", "steps", cwd=repo)
    payload = json.dumps({"session_id": "s", "cwd": str(tmp_path), "transcript_path": str(tmp_path / "t.jsonl")})
    code = ("import sys; from gitmemfs.cli import memory; "
            "code = memory.main(['--memory-dir', sys.argv[1], 'hook', 'claude-code', 'stop']); "
            "sys.stderr.write(' '.join(m for m in ('argparse', 'typing', 'gettext') if m in sys.modules)); "
            "sys.exit(code)")
    proc = subprocess.run([sys.executable, "-c", f"import sys; sys.path[:0] = {sys.path!r}; {code}", str(repo)],
                          input=payload, capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert (repo / ".git" / "dream" / "steps").read_text() == "1\n"


def test_a_codex_notify_imports_no_argparse(repo: Path, tmp_path: Path) -> None:
    """The line Codex runs after every turn (installer.py writes it; Codex appends the
    turn's JSON) takes the same fast path: the step is counted, argparse never imported."""
    git("config", "dream.trigger", "steps", cwd=repo)
    payload = json.dumps({"type": "agent-turn-complete", "thread-id": "t1", "turn-id": "1"})
    code = ("import sys; from gitmemfs.cli import memory; "
            "code = memory.main(['--memory-dir', sys.argv[1], 'hook', 'codex', 'notify', sys.argv[2]]); "
            "sys.stderr.write(' '.join(m for m in ('argparse', 'gettext') if m in sys.modules)); "
            "sys.exit(code)")
    env = {**os.environ, "CODEX_HOME": str(tmp_path / "codex")}
    proc = subprocess.run([sys.executable, "-c", f"import sys; sys.path[:0] = {sys.path!r}; {code}", str(repo),
                           payload], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert (repo / ".git" / "dream" / "steps").read_text() == "1\n"


def _session_start(repo: Path, cwd: Path) -> dict:
    proc = subprocess.run(["git", "memory", "--memory-dir", str(repo), "hook", "claude-code", "session-start"],
                          input=json.dumps({"session_id": "s", "source": "startup", "cwd": str(cwd)}),
                          capture_output=True, text=True, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _compile(repo: Path) -> str:
    proc = memory("--memory-dir", str(repo), "compile", "--absolute", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_session_start_gives_what_compile_prints_cached_by_commit(mem: Path, tmp_path: Path) -> None:
    """The context is `git memory compile --absolute` of HEAD, from harness/context.py's
    cache when nothing it depends on changed, compiled again when anything did."""
    cache = cache_of(mem) / cachedir.PROJECTION

    def context_text() -> str:
        return _session_start(mem, tmp_path)["hookSpecificOutput"]["additionalContext"]

    first = context_text()
    assert first.rstrip("\n") == _compile(mem).rstrip("\n") and "People I know" in first
    assert cache.read_text().endswith(first)
    key, _, text = cache.read_text().partition("\n")
    cache.write_text(f"{key}\n{text.replace('People I know', 'People I met')}")
    assert "People I met" in context_text(), "an unchanged memory is answered from the cache"
    cache.write_text(f"{key}\n{text}")
    # A new commit, another layout, another quoting, a damaged cache: compiled again.
    assert memory("create", "reference/café.md", "croissants\n", "-d", "Breakfast place", "-m", "found it",
                  cwd=mem).returncode == 0
    for change in ([], ["config", "core.quotePath", "false"], ["config", "memory.layout", "plain"]):
        if change:
            git(*change, cwd=mem)
        now = context_text()
        assert now.rstrip("\n") == _compile(mem).rstrip("\n") and "caf" in now, change
        assert cache.read_text().endswith(now)
    cache.write_bytes(b"\xff\xfe not a cache")
    assert context_text().rstrip("\n") == _compile(mem).rstrip("\n")
    assert cache.read_text().startswith(context.HEADER)


def test_session_start_leaves_the_index_to_the_agent(mem: Path, tmp_path: Path) -> None:
    """The hook's status runs beside the agent's own git: it never takes index.lock to
    write back a refreshed index (a `git add` at that moment would fail on the lock)."""
    index = mem / ".git" / "index"
    target = mem / "system" / "contacts.md"
    stamp = os.stat(target).st_mtime_ns + 5_000_000_000
    os.utime(target, ns=(stamp, stamp))  # same bytes, new time: a status would refresh and rewrite the index
    before = index.read_bytes()
    out = _session_start(mem, tmp_path)
    assert "systemMessage" not in out, "unchanged bytes are not a change"
    assert index.read_bytes() == before
    git("status", "--porcelain", cwd=mem)  # plain git does rewrite it: the check above can fail
    assert index.read_bytes() != before


def test_session_end_compiles_the_next_session_start_in_the_background(mem: Path, tmp_path: Path) -> None:
    import time

    cache = cache_of(mem) / cachedir.PROJECTION
    _session_start(mem, tmp_path)
    assert memory("create", "notes/later.md", "x\n", "-d", "Made after the start", "-m", "later",
                  cwd=mem).returncode == 0
    head = git("rev-parse", "HEAD", cwd=mem).stdout.strip()
    proc = subprocess.run(["git", "memory", "--memory-dir", str(mem), "hook", "claude-code", "session-end"],
                          input=json.dumps({"session_id": "s", "reason": "exit", "cwd": str(tmp_path)}),
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == "", proc.stderr
    deadline = time.monotonic() + 60
    while head not in cache.read_text().partition("\n")[0]:
        assert time.monotonic() < deadline, "the cache was not compiled for the new HEAD"
        time.sleep(0.05)
    written = os.stat(cache)
    start = _session_start(mem, tmp_path)["hookSpecificOutput"]["additionalContext"]
    assert "Made after the start" in start and start.rstrip("\n") == _compile(mem).rstrip("\n")
    assert os.stat(cache).st_mtime_ns == written.st_mtime_ns, "answered from the cache the hook had made"
