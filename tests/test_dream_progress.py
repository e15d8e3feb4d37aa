"""Long dreams are not silent: a heartbeat in the log (and on stderr off a terminal),
a live line with the elapsed time and the agent's last line on a terminal; a failed
dream names its log. (`show` of a merge conflict: tests/test_dream.py.)"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

from conftest import on_terminal

# The agent waits (bounded) until the dream has written a heartbeat to its log: no sleep
# stands in for synchronisation, and a missing heartbeat fails the assertion, not the clock.
WAIT_FOR_HEARTBEAT = ("echo 'working on it'; i=0; "
                      "while ! grep -qs 'still running the agent [(]' {logs}/*.log && [ $i -lt 1200 ]; "
                      "do sleep 0.05; i=$((i+1)); done")


def _agent(repo: Path) -> str:
    return WAIT_FOR_HEARTBEAT.format(logs=repo / ".git" / "dream" / "logs")


def test_heartbeat_in_the_log_and_on_stderr_off_a_terminal(repo: Path) -> None:
    proc = subprocess.run(["git", "dream", "--agent", _agent(repo), "--no-sandbox"], cwd=repo,
                          capture_output=True, text=True, env={**os.environ, "GIT_DREAM_HEARTBEAT": "0.2"},
                          stdin=subprocess.DEVNULL, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "git dream: still running the agent (" in proc.stderr
    assert "\x1b[K" not in proc.stderr  # no live line in a pipe
    logs = list((repo / ".git" / "dream" / "logs").glob("2*.log"))
    assert any("still running the agent" in p.read_text() for p in logs)


def test_live_line_on_a_terminal(repo: Path) -> None:
    code, seen = on_terminal(["git", "dream", "--agent", _agent(repo), "--no-sandbox"], repo, stdout=False,
                             env={**os.environ, "GIT_DREAM_HEARTBEAT": "0.2", "COLUMNS": "200"})
    assert code == 0, seen
    text = seen.decode("utf-8", "replace")
    assert "\r\x1b[Kgit dream: running the agent, " in text
    assert "— working on it" in text
    assert "still running the agent (" not in text  # the heartbeat goes to the log only


def test_a_failed_dream_names_its_log(repo: Path) -> None:
    proc = subprocess.run(["git", "dream", "--agent", "echo broken >&2; exit 3", "--no-sandbox"], cwd=repo,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
    assert proc.returncode != 0
    assert "log: " in proc.stderr and ".git/dream/logs/" in proc.stderr, proc.stderr
