"""--from claude-code: / codex: / auto: the session files of today's agents, read from
fixture files written in each tool's published format, reaching the prompt with their
cursors advancing."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from conftest import ROOT
from dreamkit import dream, dream_json, landlock, log_of
from gitmemfs.dream import sources, sources_agents

FIXTURES = ROOT / "tests" / "fixtures" / "sessions"
CLAUDE = FIXTURES / "claude-code.jsonl"
CODEX = FIXTURES / "codex-rollout.jsonl"
SHOW = 'echo "TRANSCRIPT:"; cat "$DREAM_TRANSCRIPT"; echo; echo "PROMPT:"; cat "$DREAM_PROMPT_FILE"'


@pytest.fixture(autouse=True)
def no_agent_homes(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GIT_DREAM_PROJECT"):
        monkeypatch.delenv(name, raising=False)


def transcript_of(result: dict) -> list[dict]:
    block = log_of(result).split("TRANSCRIPT:\n", 1)[1].split("\nPROMPT:", 1)[0]
    return json.loads(block)


def cursors(repo: Path) -> dict[str, str]:
    path = repo / ".git" / "dream" / "state.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    return {k: v.get("cursor") for k, v in data.get("sources", {}).items()}


def claude_line(uuid: str, kind: str, text: str, at: str = "2025-09-01T12:00:00.000Z",
                cwd: str = "/home/dev/proj") -> str:
    message = ({"role": "user", "content": text} if kind == "user" else
               {"id": f"msg_{uuid}", "type": "message", "role": "assistant",
                "content": [{"type": "text", "text": text}]})
    return json.dumps({"parentUuid": None, "isSidechain": False, "type": kind, "message": message, "uuid": uuid,
                       "timestamp": at, "cwd": cwd, "sessionId": "s"}) + "\n"


def codex_line(role: str, text: str, at: str = "2025-09-02T12:00:00.000Z") -> str:
    kind = "input_text" if role == "user" else "output_text"
    return json.dumps({"timestamp": at, "type": "response_item",
                       "payload": {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}}) + "\n"


# -- the readers ---------------------------------------------------------------------------------

def test_claude_code_reader_turns_tools_compaction_and_malformed_lines() -> None:
    parsed = sources_agents.claude_code(str(CLAUDE))
    assert parsed.skipped == 2, "one line that is not JSON and one that is not an object"
    assert parsed.meta == {"session": "5f1c2b9e-7a41-4c2e-9d0b-2f6a8e1d3c47", "cwd": "/home/dev/proj"}
    kinds = [r["kind"] for r in parsed.rows]
    assert kinds == ["summary", "user", "user", "reasoning", "tool_call", "tool_call", "assistant", "summary",
                     "user", "assistant"]
    texts = json.dumps(parsed.rows)
    assert "Caveat" not in texts, "isMeta lines are harness text"
    assert "subagent" not in texts, "sidechain turns are the subagent's own"
    shell, make = parsed.rows[4], parsed.rows[5]
    assert (shell["name"], shell["source_message_id"], shell["resultText"], shell["resultOk"]) == \
        ("Bash", "toolu_01", "/usr/bin/fish", True)
    assert json.loads(shell["argsText"])["command"] == "echo $SHELL"
    assert make["resultOk"] is False and "No rule" in make["resultText"]
    compacted = parsed.rows[7]
    assert compacted["text"].startswith("This session is being continued")
    assert compacted["source_message_id"] == "c0000000-0000-4000-8000-000000000009"


def test_codex_reader_items_tool_outputs_compaction_and_malformed_lines() -> None:
    parsed = sources_agents.codex(str(CODEX))
    assert parsed.skipped == 1, "the truncated line"
    assert parsed.meta["cwd"] == "/home/dev/proj"
    assert [(r["kind"], r.get("text") or r.get("name")) for r in parsed.rows] == [
        ("user", "Our CI runs on Python 3.11; please remember that."),
        ("reasoning", "**Checking the CI config**"),
        ("tool_call", "shell"), ("tool_call", "shell"), ("tool_call", "apply_patch"),
        ("assistant", "CI uses Python 3.11; tox is not installed."),
        ("summary", "Summary: the user's CI runs Python 3.11; tox is missing."),
        ("user", "Use uv instead of pip from now on."),
        ("tool_call", "shell"), ("assistant", "Will use uv.")]
    _, _, ok, missing, patch, _, _, _, uv, _ = parsed.rows
    assert ok["resultText"] == "python-version: '3.11'\n" and ok["resultOk"] is True
    assert missing["resultOk"] is False, "exit code 127"
    assert patch["argsText"].startswith("*** Begin Patch") and patch["resultOk"] is True
    assert uv["resultText"] == "uv 0.8.0" and json.loads(uv["argsText"]) == {"command": ["uv", "--version"]}


def test_codex_reader_reads_early_bare_rollouts(tmp_path: Path) -> None:
    old = tmp_path / "rollout-2025-05-01-x.jsonl"
    old.write_text("\n".join(json.dumps(x) for x in (
        {"id": "sess", "timestamp": "2025-05-01T10:00:00Z", "instructions": None},
        {"record_type": "state"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hello"}]},
        {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c"},
        {"type": "function_call_output", "call_id": "c", "output": "Exit code: 2\nboom"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hi"}]},
    )) + "\n")
    parsed = sources_agents.codex(str(old))
    assert [r["kind"] for r in parsed.rows] == ["user", "tool_call", "assistant"]
    assert parsed.rows[1]["resultOk"] is False
    assert parsed.skipped == 2, "lines without a type"


def test_normalised_slice_keeps_summaries_and_counts_skipped_lines() -> None:
    source = sources.parse(f"claude-code:{CLAUDE}")
    chosen = sources.slice_for(source, {})
    assert chosen is not None and chosen.skipped == 2 and "skipped 2 malformed line(s)" in chosen.notes[0]
    records = sources.normalise(chosen)
    assert records[0] == {"role": "meta", "source": "claude-code", "skipped_lines": 2}
    roles = [r["role"] for r in records[1:]]
    assert roles == ["summary", "user", "reasoning", "assistant", "tool", "assistant", "tool", "assistant",
                     "summary", "user", "assistant"], "the /clear command is harness noise"
    assert records[7]["content"].startswith("Error: make") and records[7]["ok"] is False
    assert chosen.end_id == "c0000000-0000-4000-8000-000000000011"


def test_source_errors_name_the_new_types(repo: Path, tmp_path: Path) -> None:
    proc = dream(repo, "--from", "slack:x", "--agent", "true")
    assert proc.returncode == 2 and "Supported: claude-code, codex, openhands, transcript" in proc.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = dream(repo, "--from", f"codex:{empty}", "--agent", "true")
    assert proc.returncode == 1 and f"no codex session files found in {empty}" in proc.stderr


# -- end to end: the prompt and the cursor -----------------------------------------------------------

@landlock
def test_claude_code_file_reaches_the_prompt_and_its_cursor_advances(repo: Path, tmp_path: Path) -> None:
    session = tmp_path / "5f1c2b9e.jsonl"
    shutil.copy(CLAUDE, session)
    first = dream_json(repo, "--from", f"claude-code:{session}", "--agent", SHOW, code=0)
    assert first["status"] == "no_changes"
    got = transcript_of(first)
    assert got[0]["source"] == "claude-code"
    contents = [r.get("content") for r in got]
    assert "Please remember that I use the fish shell and run tests with make check." in contents
    assert any(r.get("tool_calls", [{}])[0].get("name") == "Bash" for r in got)
    assert any(r["role"] == "summary" for r in got)
    assert "Please remember that I use the fish shell" in log_of(first).split("PROMPT:", 1)[1]
    assert "skipped 2 malformed line(s)" in first["_stderr"]
    assert cursors(repo) == {f"claude-code:{session}": "c0000000-0000-4000-8000-000000000011"}
    assert dream_json(repo, "--from", f"claude-code:{session}", "--agent", SHOW, code=0)["status"] == "no_payload"
    with session.open("a") as fh:
        fh.write(claude_line("u-new", "user", "Also: I deploy on Fridays."))
        fh.write(claude_line("a-new", "assistant", "Noted."))
    again = dream_json(repo, "--from", f"claude-code:{session}", "--agent", SHOW, code=0)
    assert [r.get("content") for r in transcript_of(again)][1:] == ["Also: I deploy on Fridays.", "Noted."]
    assert cursors(repo)[f"claude-code:{session}"] == "a-new"


@landlock
def test_codex_folder_has_a_cursor_per_rollout(repo: Path, tmp_path: Path) -> None:
    day = tmp_path / "sessions" / "2025" / "09" / "02"
    day.mkdir(parents=True)
    one = day / "rollout-2025-09-02T09-00-00-0199a1b2.jsonl"
    shutil.copy(CODEX, one)
    (day / "notes.txt").write_text("not a rollout")
    folder = tmp_path / "sessions"
    first = dream_json(repo, "--from", f"codex:{folder}", "--agent", SHOW, code=0)
    contents = [r.get("content") for r in transcript_of(first)]
    assert "Use uv instead of pip from now on." in contents and "Will use uv." in contents
    first_cursor = cursors(repo)[f"codex:{one}"]
    assert first_cursor
    two = day / "rollout-2025-09-02T11-00-00-0199a1b3.jsonl"
    two.write_text(codex_line("user", "Second session: I prefer tabs.") + codex_line("assistant", "Tabs it is."))
    os.utime(two, (os.path.getmtime(one) + 10,) * 2)
    second = dream_json(repo, "--from", f"codex:{folder}", "--agent", SHOW, code=0)
    got = transcript_of(second)
    assert [r.get("content") for r in got if r["role"] != "meta"] == ["Second session: I prefer tabs.", "Tabs it is."]
    assert got[0]["session"] == str(two)
    assert cursors(repo)[f"codex:{one}"] == first_cursor and cursors(repo)[f"codex:{two}"]
    assert dream_json(repo, "--from", f"codex:{folder}", "--agent", SHOW, code=0)["status"] == "no_payload"


@landlock
def test_auto_reads_every_new_session_of_the_project(repo: Path, tmp_path: Path, hermetic: Path) -> None:
    project = tmp_path / "proj.x"
    project.mkdir()
    claude_dir = hermetic / ".claude" / "projects" / sources_agents.claude_slug(str(project))
    claude_dir.mkdir(parents=True)
    assert claude_dir.name == sources_agents.claude_slug(str(project)) and "." not in claude_dir.name
    cc = claude_dir / "5f1c2b9e.jsonl"
    cc.write_text(CLAUDE.read_text().replace("/home/dev/proj", str(project)))
    codex_home = tmp_path / "codex-home"
    day = codex_home / "sessions" / "2025" / "09" / "02"
    day.mkdir(parents=True)
    mine = day / "rollout-2025-09-02T09-00-00-a.jsonl"
    mine.write_text(CODEX.read_text().replace("/home/dev/proj", str(project)))
    other = day / "rollout-2025-09-02T09-00-00-b.jsonl"
    other.write_text(CODEX.read_text().replace("/home/dev/proj", str(tmp_path / "elsewhere"))
                     .replace("Use uv instead", "OTHER PROJECT"))
    env = {"CODEX_HOME": str(codex_home)}
    first = dream_json(project, "--memory-dir", str(repo), "--from", "auto", "--agent", SHOW, code=0, env=env)
    got = transcript_of(first)
    sessions = [r["session"] for r in got if r["role"] == "meta"]
    assert sorted(sessions) == sorted([str(cc), str(mine)])
    assert "OTHER PROJECT" not in json.dumps(got)
    assert set(cursors(repo)) == {f"claude-code:{cc}", f"codex:{mine}"}
    nothing = dream_json(project, "--memory-dir", str(repo), "--from", "auto", "--agent", SHOW, code=0, env=env)
    assert nothing["status"] == "no_payload" and str(project) in nothing["message"]
    with mine.open("a") as fh:
        fh.write(codex_line("user", "New in Codex: run ruff before commits.", "2025-09-03T09:00:00.000Z"))
    # the project can also be named: dream.project, or auto:DIR
    later = dream_json(repo, "--from", f"auto:{project}", "--agent", SHOW, code=0, env=env)
    assert [r.get("content") for r in transcript_of(later) if r["role"] != "meta"] == \
        ["New in Codex: run ruff before commits."]
