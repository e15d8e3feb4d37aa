"""`git memory config`: every effective setting and where it comes from."""
from __future__ import annotations

import json
from pathlib import Path

from conftest import git, memory


def settings(repo: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, dict]:
    proc = memory("config", "--json", *args, cwd=repo, env=env)
    assert proc.returncode == 0, proc.stderr
    return {row["name"]: row for row in json.loads(proc.stdout)["settings"]}


def test_config_names_each_source(repo: Path, tmp_path: Path) -> None:
    git("config", "dream.trigger", "commits", cwd=repo)
    git("config", "memory.mirrorUrl", "https://u:hunter22@example.com/m.git", cwd=repo)
    out = settings(repo, env={"GIT_DREAM_AGENT": "builtin:tidy"})
    assert out["repository"]["value"] == str(repo)
    assert out["repository"]["source"].startswith("the current directory")
    assert out["dream trigger"]["value"] == "commits"
    assert out["dream trigger"]["source"] == "git config dream.trigger (local)"
    assert out["dream agent"]["value"] == "builtin:tidy"
    assert out["dream agent"]["source"] == "environment GIT_DREAM_AGENT"
    assert out["dream every"]["value"] == "25" and out["dream every"]["source"] == "default"
    assert "hunter22" not in json.dumps(out) and "<redacted>" in out["mirror"]["value"]
    assert out["author"]["value"] == "Test User <test@example.com>"
    assert out["author"]["source"] == "git config user.name (global)"


def test_config_says_why_an_agent_repository_was_chosen(repo: Path, tmp_path: Path) -> None:
    env = {"MEMORY_DIR": str(repo), "AGENT_ID": "bot-2"}
    out = settings(tmp_path, env=env)
    assert out["repository"]["source"] == f"MEMORY_DIR={repo}"
    assert out["author"]["value"] == "bot-2 <bot-2@agents.invalid>"
    assert out["author"]["source"].startswith("agent AGENT_ID=bot-2")
    text = memory("config", cwd=tmp_path, env=env).stdout
    assert text.splitlines()[0].split() == ["repository", str(repo), f"(MEMORY_DIR={repo})"]


def test_dream_triggers_resolve_global_then_project_then_agent(repo: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    git("init", "-q", str(project), cwd=tmp_path)
    git("config", "--global", "dream.trigger", "steps,compaction", cwd=repo)
    git("config", "--global", "dream.every", "40", cwd=repo)
    git("config", "dream.every", "10", cwd=project)
    git("config", "dream.trigger", "bogus", cwd=project)  # does not parse: the global value stays
    out = settings(project, "--memory-dir", str(repo))
    assert out["dream trigger"]["value"] == "steps,compaction"
    assert out["dream trigger"]["source"] == "git config dream.trigger (global)"
    assert out["dream every"]["value"] == "10"
    assert out["dream every"]["source"] == f"project {project} (git config --local dream.every)"
    git("config", "dream.every", "3", cwd=repo)  # the agent's own memory wins over the project
    git("config", "dream.trigger", "-3", cwd=repo)
    out = settings(project, "--memory-dir", str(repo))
    assert (out["dream every"]["value"], out["dream every"]["source"]) == ("3", "git config dream.every (local)")
    assert out["dream trigger"]["value"] == "steps,compaction"
    git("config", "dream.every", "-3", cwd=repo)  # not a count: shown where it is, refused where used
    out = settings(project, "--memory-dir", str(repo))
    assert (out["dream every"]["value"], out["dream every"]["source"]) == ("-3", "git config dream.every (local)")
