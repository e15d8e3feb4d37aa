"""What the commands print: memory content comes back exactly as stored, while
errors (and everything git says) are still redacted."""
from __future__ import annotations

import json
from pathlib import Path

from conftest import memory, snapshot

SSH = "ssh://git@github.com/me/memory.git"
HTTPS = "https://bob:hunter2pw@git.example.com/x.git"
BODY = f"clone {SSH}\nmirror {HTTPS}\n"


def stored(repo: Path) -> Path:
    proc = memory("create", "reference/repos.md", BODY, "-d", "Where my repos live", "-m", "repos", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    return repo / "reference" / "repos.md"


def test_view_compile_tree_and_call_show_the_content_as_stored(repo: Path) -> None:
    path = stored(repo)
    assert path.read_text().endswith(BODY)
    assert memory("view", "reference/repos.md", cwd=repo).stdout.endswith(BODY)
    out = json.loads(memory("view", "reference/repos.md", "--json", cwd=repo).stdout)
    assert out["message"].endswith(BODY)
    memory("rename", "reference/repos.md", "system/repos.md", "-m", "pin it", cwd=repo)
    compiled = memory("compile", cwd=repo).stdout
    assert SSH in compiled and HTTPS in compiled
    assert HTTPS in json.loads(memory("compile", "--json", cwd=repo).stdout)["projection"]
    proc = memory("call", json.dumps({"command": "view", "path": "/memories/system/repos.md"}),
                  "--schema", "anthropic", cwd=repo)
    assert SSH in json.loads(proc.stdout)["message"] and HTTPS in json.loads(proc.stdout)["message"]
    # What the agent read, it can edit: the text it copies matches the file.
    proc = memory("str_replace", "system/repos.md", HTTPS, "https://git.example.com/x.git", "-m", "no password",
                  cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert "hunter2pw" not in (repo / "system" / "repos.md").read_text()


def test_errors_are_still_redacted(repo: Path) -> None:
    stored(repo)
    before = snapshot(repo)
    wrong = "https://bob:other-secret@git.example.com/x.git"
    proc = memory("view", wrong, cwd=repo)
    assert proc.returncode == 1
    assert "other-secret" not in proc.stderr and "https://<redacted>@git.example.com" in proc.stderr
    proc = memory("call", json.dumps({"command": "str_replace", "path": "/memories/reference/repos.md",
                                      "old_str": wrong, "new_str": "x"}), "--schema", "anthropic", cwd=repo)
    out = json.loads(proc.stdout)
    assert proc.returncode == 1 and not out["ok"]
    assert "other-secret" not in out["error"] and "<redacted>" in out["error"]
    assert snapshot(repo) == before
    # A URL with a user but no password is no secret, in errors either.
    proc = memory("view", "ssh://git@github.com/other.md", cwd=repo)
    assert proc.returncode == 1 and "ssh://git@github.com/other.md" in proc.stderr
