"""Issue 12 item 16: inside the dream sandbox, back-dating files (touch -d, os.utime with
explicit times) is refused by the same seccomp filter as chmod; a plain `touch` ("now",
a NULL times argument) still works, so agents can create files with it."""
from __future__ import annotations

import os
from pathlib import Path

from conftest import git
from dreamkit import agent, dream_json, landlock, log_of

pytestmark = landlock


def _times(paths: list[Path]) -> dict[str, int]:
    return {str(p): os.stat(p).st_mtime_ns for p in paths}


def test_agent_cannot_back_date_the_memory_or_its_config(repo: Path) -> None:
    watched = [repo / ".git/config", repo / "system/human.md"]
    before = _times(watched)
    out = dream_json(repo, "--agent", agent("utime.sh"), code=0)
    log = log_of(out)
    for what in ("touch-config", "touch-memory", "touch-own-dated", "python-utime"):
        assert f"DENIED: {what}\n" in log, f"{what} was not denied:\n{log}"
    assert "WROTE: touch-own-now\n" in log, log
    assert _times(watched) == before
    assert out["status"] == "no_changes"


def test_allow_chmod_also_allows_timestamps(repo: Path) -> None:
    git("config", "dream.sandbox.allowChmod", "true", cwd=repo)
    out = dream_json(repo, "--agent", "touch -d 2001-01-01 system/human.md && echo UTIME-OK", code=0)
    assert "UTIME-OK" in log_of(out)
