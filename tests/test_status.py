"""`git memory status`: clean/dirty with diagnostics, ahead/behind without network,
freshness of that answer, the last sync, hooks and mirror."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from gitserver import GitServer, quick_clone, seed, server_fixture, token_env  # noqa: F401

from conftest import git, memory, snapshot, write


def status(repo: Path) -> tuple[str, dict[str, Any]]:
    text = memory("status", cwd=repo)
    data = memory("status", "--json", cwd=repo)
    assert text.returncode == 0 and data.returncode == 0, text.stderr + data.stderr
    return text.stdout, json.loads(data.stdout)


def test_a_fresh_repo_without_upstream(repo: Path) -> None:
    text, data = status(repo)
    assert "On branch main, no upstream" in text and "Working tree clean." in text
    assert data["dirty"] is False and data["upstream"] is None and data["ahead"] is None
    assert data["last_fetch"] is None and data["last_sync"] is None
    assert set(data["hooks"]) >= {"installed", "effective"} and set(data["mirror"]) >= {"url", "last_push"}
    assert "Hooks: " in text and "Mirror: none." in text


def test_hooks_that_will_not_run_say_why(repo: Path) -> None:
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.chmod(0o644)
    text, data = status(repo)
    assert data["hooks"]["installed"] and not data["hooks"]["effective"]
    assert (f"Hooks: installed in {repo / '.git' / 'hooks'} but git will not run them: pre-commit: not "
            f"executable, so git ignores it (chmod +x {hook}).") in text


def test_dirty_with_encoding_diagnostics_changes_nothing(repo: Path) -> None:
    write(repo, "system/notes.md", "---\ndescription: x\n---\nhi\n".encode("utf-16"))
    write(repo, "reference/nul.md", b"---\ndescription: y\n---\na\0b\n")
    before = snapshot(repo)
    text, data = status(repo)
    assert data["dirty"] is True
    assert sorted(data["dirty_paths"]) == ["reference/nul.md", "system/notes.md"]
    assert "system/notes.md has UTF-16LE BOM" in data["encoding_issues"]
    assert "reference/nul.md contains NUL bytes, possibly UTF-16" in data["encoding_issues"]
    assert "Memory repo has uncommitted changes" in text and "UTF-16LE BOM" in text
    assert snapshot(repo) == before


def test_ahead_and_behind_come_from_the_last_fetch_without_network(server: GitServer, tmp_path: Path) -> None:
    seed(server, tmp_path)
    one, two = quick_clone(server, tmp_path, "one"), quick_clone(server, tmp_path, "two")
    assert memory("create", "notes/a.md", "alpha", "-d", "A", "-m", "a", cwd=one).returncode == 0
    assert memory("sync", cwd=one, env=token_env()).returncode == 0
    assert memory("create", "notes/b.md", "beta", "-d", "B", "-m", "b", cwd=two).returncode == 0
    asked = len(server.requests)
    text, data = status(two)
    assert len(server.requests) == asked              # status never touches the network
    assert (data["upstream"], data["ahead"], data["behind"]) == ("origin/main", 1, 0)   # not fetched yet
    assert "1 ahead, 0 behind (as of the last fetch just now" in text
    assert memory("sync", cwd=two, env={**token_env(), "GIT_MEMORY_TOKEN": "wrong-token-1234"}).returncode == 1
    _, data = status(two)
    assert data["last_sync"]["state"] == "fetch_failed" and "refused" in data["last_sync"]["error"]
    # A plain git fetch (here straight from the server's disk) counts as fresh news too.
    git("fetch", "-q", str(server.root / "memory.git"), "main:refs/remotes/origin/main", cwd=two)
    text, data = status(two)
    assert (data["ahead"], data["behind"]) == (1, 1) and data["last_fetch_age_s"] < 60


def test_staleness_is_spelled_out(server: GitServer, tmp_path: Path) -> None:
    seed(server, tmp_path)
    assert memory("clone", server.url(), "c", cwd=tmp_path, env=token_env()).returncode == 0
    long_ago = time.time() - 3 * 3600 - 5
    for log in (tmp_path / "c/.git/logs/refs/remotes").rglob("*"):
        os.utime(log, (long_ago, long_ago))       # the clone wrote these
    record = tmp_path / "c/.git/memory-sync.json"
    record.write_text(json.dumps({"last_fetch": long_ago,
                                  "last_sync": {"state": "pushed", "time": time.time() - 7200, "error": None}}))
    text, data = status(tmp_path / "c")
    assert "as of the last fetch 3 hours ago" in text and "Last sync: pushed, 2 hours ago." in text
    assert data["last_fetch_age_s"] >= 3 * 3600
    (tmp_path / "c/.git/FETCH_HEAD").write_text("")   # a plain git fetch just now counts too
    text, _ = status(tmp_path / "c")
    assert "as of the last fetch just now" in text


def test_an_operation_in_progress_is_reported(repo: Path) -> None:
    write(repo, "system/human.md", "---\ndescription: h\n---\nmain side\n")
    git("commit", "-qam", "main side", "--no-verify", cwd=repo)
    git("switch", "-q", "-c", "other", "HEAD~1", cwd=repo)
    write(repo, "system/human.md", "---\ndescription: h\n---\nother side\n")
    git("commit", "-qam", "other side", "--no-verify", cwd=repo)
    assert git("merge", "main", cwd=repo, check=False).returncode != 0
    text, data = status(repo)
    assert data["operation"] == "a merge" and data["conflicts"] == ["system/human.md"]
    assert "A merge is in progress (conflicted: system/human.md)" in text


def test_status_never_writes_the_index(repo: Path) -> None:
    """A read must not take index.lock: a concurrent edit's commit would fail on it."""
    index = repo / ".git/index"
    before = index.read_bytes(), index.stat().st_mtime_ns
    past = time.time() - 100
    os.utime(repo / "system/human.md", (past, past))   # stale stat info: git would refresh it
    _, data = status(repo)
    assert data["dirty"] is False
    assert (index.read_bytes(), index.stat().st_mtime_ns) == before
