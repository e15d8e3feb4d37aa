"""Issue 24 items 7 and 9: what a source hands the dream agent.

Item 7: a session that holds a withheld token, a forge token or a model key reaches
the agent masked, whatever the source (transcript, openhands, claude-code, codex) or
the -i text: an agent that copies its whole payload into memory copies no secret.
Item 9: `--from auto` reads only the sessions whose recorded cwd is the project, not
another project's that shares Claude Code's folder name."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import git
from dreamkit import agent, dream_json, landlock, log_of
from gitmemfs.dream import sources_agents

pytestmark = landlock

WITHHELD = "mcp-tok-19af03c2d7e5b8"
FORGE = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
MODEL = "sk-ant-api03-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0"
SAID = f"Deploy with token {FORGE}; the server's is {WITHHELD}; my key is {MODEL}. Remember I prefer tea."
AT = "2025-09-01T12:00:00.000Z"


def _transcript(folder: Path) -> str:
    path = folder / "t.jsonl"
    path.write_text(json.dumps({"kind": "user", "text": SAID, "captured_at": AT}) + "\n")
    return f"transcript:{path}"


def _openhands(folder: Path) -> str:
    path = folder / "events.json"
    path.write_text(json.dumps([{"id": "e1", "kind": "MessageEvent", "source": "user", "timestamp": AT,
                                 "llm_message": {"content": [{"type": "text", "text": SAID}]}}]))
    return f"openhands:{path}"


def _claude(folder: Path) -> str:
    path = folder / "s.jsonl"
    path.write_text(json.dumps({"type": "user", "uuid": "u1", "timestamp": AT, "cwd": str(folder),
                                "sessionId": "s", "message": {"role": "user", "content": SAID}}) + "\n")
    return f"claude-code:{path}"


def _codex(folder: Path) -> str:
    path = folder / "rollout-2025-09-01T12-00-00-x.jsonl"
    path.write_text(json.dumps({"timestamp": AT, "type": "session_meta", "payload": {"id": "x", "cwd": str(folder)}})
                    + "\n" + json.dumps({"timestamp": AT, "type": "response_item", "payload": {
                        "type": "message", "role": "user", "content": [{"type": "input_text", "text": SAID}]}}) + "\n")
    return f"codex:{path}"


@pytest.mark.parametrize("source", ["transcript", "openhands", "claude-code", "codex", "instruction"])
def test_secrets_in_a_source_never_reach_the_agent(repo: Path, tmp_path: Path, source: str) -> None:
    makers = {"transcript": _transcript, "openhands": _openhands, "claude-code": _claude, "codex": _codex}
    args = ["-i", SAID] if source == "instruction" else ["--from", makers[source](tmp_path)]
    out = dream_json(repo, *args, "--agent", agent("copy_payload.sh"),
                     env={"GIT_MEMORY_MCP_TOKEN": WITHHELD}, code=0)
    assert out["status"] == "merged", out
    copied = git("show", "HEAD:notes/payload.md", cwd=repo).stdout
    assert "Remember I prefer tea." in copied  # the rest of what was said is there
    for secret in (WITHHELD, FORGE, MODEL):
        assert secret not in copied, f"{secret} reached the agent from {source}"
    assert "<redacted>" in copied
    history = git("log", "--all", "-p", cwd=repo).stdout
    assert not any(s in history for s in (WITHHELD, FORGE, MODEL))
    runs = repo / ".git" / "dream" / "runs"
    for path in runs.rglob("*"):
        if path.is_file():
            text = path.read_text(errors="replace")
            assert not any(s in text for s in (WITHHELD, FORGE, MODEL)), path


def test_auto_skips_another_projects_sessions_that_share_the_folder(repo: Path, tmp_path: Path, hermetic: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    mine, theirs = tmp_path / "my-proj", tmp_path / "my_proj"
    mine.mkdir()
    theirs.mkdir()
    folder = hermetic / ".claude" / "projects" / sources_agents.claude_slug(str(mine))
    assert sources_agents.claude_slug(str(theirs)) == folder.name  # the collision
    folder.mkdir(parents=True)
    for name, cwd, text in (("a.jsonl", mine, "Mine: use uv."), ("b.jsonl", theirs, "THEIR PROJECT'S PLAN")):
        (folder / name).write_text(json.dumps({"type": "user", "uuid": name, "timestamp": AT, "cwd": str(cwd),
                                               "sessionId": name, "message": {"role": "user", "content": text}})
                                   + "\n")
    show = 'cat "$DREAM_TRANSCRIPT"'
    out = dream_json(repo, "--from", f"auto:{mine}", "--agent", show, code=0)
    log = log_of(out)
    assert "Mine: use uv." in log and "THEIR PROJECT" not in log, log
    theirs_out = dream_json(repo, "--from", f"auto:{theirs}", "--agent", show, code=0)
    assert "THEIR PROJECT'S PLAN" in log_of(theirs_out) and "Mine:" not in log_of(theirs_out)
