"""Issue 12 item 9: a withheld token is unreachable from the dream agent, /proc included.

`git dream` and the `git` that started it keep GIT_MEMORY_TOKEN in their environment
for life; the agent runs in its own PID namespace with its own /proc, so a real agent
that greps every readable /proc/*/environ and /proc/*/cmdline finds nothing."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conftest import LIB, git
from dreamkit import agent, dream_json, landlock, log_of

sys.path.insert(0, str(LIB))
from gitmemfs.dream import pidns

TOKEN = "tok-Withheld-5f3a9c1e77"
needs_pidns = pytest.mark.skipif(not pidns.available()[0], reason=pidns.available()[1] or "no PID namespace")


def _scan(repo: Path, tmp_path: Path, *flags: str) -> dict:
    needle = tmp_path / "needle"
    needle.write_text(TOKEN)
    git("config", "dream.sandbox.allowRead", str(needle), cwd=repo)  # reads are confined: it is the agent's input
    env = {"GIT_MEMORY_TOKEN": TOKEN, "LETTA_API_KEY": TOKEN + "-letta"}
    return dream_json(repo, *flags, "--agent", agent("scan_proc.sh", str(needle)), env=env)


def _assert_not_found(repo: Path, out: dict) -> None:
    log = log_of(out)
    assert "SCANNED" in log, log
    assert "FOUND" not in log, log
    history = git("log", "--all", "-p", cwd=repo).stdout
    assert TOKEN not in history


@needs_pidns
@landlock
def test_sandboxed_agent_cannot_read_the_token_from_proc(repo: Path, tmp_path: Path) -> None:
    out = _scan(repo, tmp_path)
    assert out["_code"] == 0, out
    _assert_not_found(repo, out)
    # It sees only its own processes: the namespace's first few pids, never ours.
    assert "shares our process namespace" not in out["_stderr"] + log_of(out)


@needs_pidns
def test_unsandboxed_agent_cannot_read_it_either(repo: Path, tmp_path: Path) -> None:
    out = _scan(repo, tmp_path, "--no-sandbox")
    assert out["_code"] == 0, out
    _assert_not_found(repo, out)


def test_without_a_namespace_the_log_says_what_stays_readable(repo: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """No unshare on PATH: the agent still runs, and the log names the exposure."""
    bare = tmp_path / "bin"
    bare.mkdir()
    import os
    import shutil

    for tool in ("git", "sh", "cat", "tr", "grep", "ls", "wc", "mkdir", "env", "python3", "sed", "dirname",
                 "head", "cut", "id", "rm", "cp", "mv"):
        found = shutil.which(tool)
        if found:
            (bare / tool).symlink_to(found)
    bin_dir = Path(LIB).parent / "bin"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{bare}")
    out = _scan(repo, tmp_path, "--no-sandbox")
    log = log_of(out)
    assert "the agent shares our process namespace (unshare (util-linux) is not installed); withheld " \
           "GIT_MEMORY_TOKEN, LETTA_API_KEY stay readable" in log, log
