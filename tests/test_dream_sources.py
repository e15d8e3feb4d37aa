"""--from sources, the cursor, the normalised transcript, the prompt and --to."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import ROOT, commit_all, git, memfile, write
from dreamkit import common_dir, dream, dream_json, landlock, log_of, no_runs
from gitmemfs.core import snapshot
from gitmemfs.dream import payload, sources

SESSION = ROOT / "examples" / "session.jsonl"
# An agent that copies what it was given into the log, then changes nothing.
SHOW = 'echo "TRANSCRIPT:"; cat "$DREAM_TRANSCRIPT"; echo; echo "PROMPT:"; cat "$DREAM_PROMPT_FILE"'


def rows(*items: tuple[str, str, str | None]) -> str:
    out = []
    for kind, text, mid in items:
        row = {"kind": kind, "text": text, "captured_at": "2025-03-04T10:00:00Z"}
        if mid:
            row["source_message_id"] = mid
        out.append(json.dumps(row))
    return "\n".join(out) + "\n"


def transcript_of(result: dict) -> list[dict]:
    log = log_of(result)
    block = log.split("TRANSCRIPT:\n", 1)[1].split("\nPROMPT:", 1)[0]
    return json.loads(block)


def state(repo: Path) -> dict:
    path = common_dir(repo) / "dream" / "state.json"
    return json.loads(path.read_text()) if path.exists() else {}


# -- the cursor, end to end ------------------------------------------------------------------

@landlock
def test_cursor_advances_only_on_consuming_outcomes(repo: Path, tmp_path: Path) -> None:
    src = tmp_path / "t.jsonl"
    src.write_text(rows(("user", "first question", "m1"), ("assistant", "first answer", "m2")))
    failed = dream_json(repo, "--from", f"transcript:{src}", "--agent", SHOW + "; exit 1", code=1)
    assert [r.get("content") for r in transcript_of(failed)][1:] == ["first question", "first answer"]
    assert not state(repo).get("sources"), "a failed run does not move the cursor"
    done = dream_json(repo, "--from", f"transcript:{src}", "--agent", SHOW, code=0)
    assert done["status"] == "no_changes"
    assert [r.get("content") for r in transcript_of(done)][1:] == ["first question", "first answer"]
    assert state(repo)["sources"][f"transcript:{src}"]["cursor"] == "m2"
    again = dream_json(repo, "--from", f"transcript:{src}", "--agent", "exit 9", code=0)
    assert again["status"] == "no_payload" and "No new transcript content" in again["message"]
    with src.open("a") as fh:
        fh.write(rows(("reasoning", "thinking", None), ("user", "second question", "m3"),
                      ("assistant", "second answer", "m4"), ("reasoning", "trailing thought", None)))
    relative = src.relative_to(tmp_path)
    newer = dream_json(tmp_path, "--memory-dir", str(repo), "--from", f"transcript:./{relative}",
                       "--agent", SHOW, code=0)
    contents = [r.get("content") for r in transcript_of(newer)][1:]
    assert contents == ["thinking", "second question", "second answer"], "only the new slice, same cursor"
    assert state(repo)["sources"][f"transcript:{src}"]["cursor"] == "m4"


@landlock
def test_rows_without_ids_get_content_ids_and_are_not_repeated(repo: Path, tmp_path: Path) -> None:
    src = tmp_path / "t.jsonl"
    src.write_text(rows(("user", "no id here", None), ("assistant", "nor here", None)))
    assert dream_json(repo, "--from", f"transcript:{src}", "--agent", "true", code=0)["status"] == "no_changes"
    assert dream_json(repo, "--from", f"transcript:{src}", "--agent", "true", code=0)["status"] == "no_payload"


@landlock
def test_merged_run_records_the_source_range_in_the_merge_commit(repo: Path, tmp_path: Path) -> None:
    src = tmp_path / "t.jsonl"
    src.write_text(rows(("user", "I prefer tea.", "u1"), ("assistant", "Noted.", "a1")))
    cmd = 'git memory create notes/tea.md "Tea." -d "Drinks" -m "Note tea"'
    out = dream_json(repo, "--from", f"transcript:{src}", "--agent", cmd, code=0)
    body = git("log", "-1", "--format=%B", cwd=repo).stdout
    assert f"Dream-Source: transcript:{src}" in body and "Dream-Through: a1" in body
    assert out["status"] == "merged"


def test_source_errors(repo: Path, tmp_path: Path) -> None:
    missing = dream(repo, "--from", f"transcript:{tmp_path}/nope.jsonl", "--agent", "true")
    assert missing.returncode == 1 and "no such file or directory" in missing.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text(rows(("user", "fine", "m1")) + "{not json\n")
    proc = dream(repo, "--from", f"transcript:{bad}", "--agent", "true")
    assert proc.returncode == 1 and "line 2" in proc.stderr and str(bad) in proc.stderr
    for spec, expect in (("slack:x", 'unknown source type "slack". Supported: claude-code, codex, openhands, '),
                         ("transcript:", 'missing path after "transcript:"'), ("plain", "invalid --from")):
        proc = dream(repo, "--from", spec, "--agent", "true")
        assert proc.returncode == 2 and expect in proc.stderr, proc.stderr
    assert no_runs(repo)


# -- normalisation ------------------------------------------------------------------------------

def test_normalised_records() -> None:
    src = sources.Source("transcript", "x", "/x")
    long_result = "H" * 3000 + "T" * 3000
    raw = [
        {"kind": "user", "text": "<command-name>/clear</command-name>", "source_message_id": "n1"},
        {"kind": "user", "text": "hello", "captured_at": "2025-03-04T10:00:00Z", "source_message_id": "u1"},
        {"kind": "error", "text": "boom", "captured_at": "2025-03-04T10:00:01Z"},
        {"kind": "tool_call", "name": "bash", "argsText": json.dumps({"command": "x" * 1000}),
         "resultText": long_result, "resultOk": True, "source_message_id": "t1"},
        {"kind": "tool_call", "argsText": "not json", "resultText": "denied", "resultOk": False,
         "source_message_id": "t1"},
        {"kind": "assistant", "text": "bye", "captured_at": "2025-03-04T10:00:10Z", "source_message_id": "a1"},
    ]
    chosen = sources.select(src, sources.assign_ids(raw), None)
    assert chosen is not None
    recs = sources.normalise(chosen)
    assert recs[0] == {"role": "meta", "source": "transcript"}
    assert [r["role"] for r in recs[1:]] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", r["timestamp"]) for r in recs[1:])
    call = recs[2]["tool_calls"][0]
    assert call["name"] == "bash" and isinstance(call["args"], dict)
    assert len(json.dumps(call["args"], ensure_ascii=False, separators=(",", ":"))) <= sources.ARGS_LIMIT
    result = recs[3]["content"]
    assert len(result) == sources.RESULT_LIMIT and result.startswith("HHH") and result.endswith("TTT")
    assert "truncated" in result
    second = recs[4]["tool_calls"][0]
    assert second["id"] == "t1__2" and second["name"] == "unknown_tool" and second["args"] == {"_raw": "not json"}
    assert recs[5]["content"] == "Error: denied" and recs[5]["ok"] is False
    assert "boom" not in json.dumps(recs)
    # timestamps between anchors are interpolated
    assert "2025-03-04T10:00:0" in recs[2]["timestamp"]


def test_select_follows_the_cursor() -> None:
    src = sources.Source("transcript", "x", "/x")
    data = sources.assign_ids([
        {"kind": "user", "text": "a", "source_message_id": "1"},
        {"kind": "assistant", "text": "b", "source_message_id": "2"},
        {"kind": "tool_call", "name": "t", "source_message_id": "t"},
        {"kind": "user", "text": "c", "source_message_id": "3"},
        {"kind": "reasoning", "text": "after the last message"},
    ])
    whole = sources.select(src, data, None)
    assert whole is not None and (whole.start_id, whole.end_id, len(whole.rows)) == ("1", "3", 4)
    after = sources.select(src, data, "2")
    assert after is not None and [r["id"] for r in after.rows] == ["t", "3"]
    assert sources.select(src, data, "3") is None
    lost = sources.select(src, data, "gone")
    assert lost is not None and not lost.cursor_found and "no longer" in lost.notes[0]


def test_openhands_events(tmp_path: Path) -> None:
    events = tmp_path / "conv" / "events"
    events.mkdir(parents=True)
    items = [
        {"id": "e1", "kind": "MessageEvent", "source": "user", "timestamp": "2025-03-04T10:00:00",
         "llm_message": {"content": [{"type": "text", "text": "Please remember I use fish."}]}},
        {"id": "e2", "kind": "ActionEvent", "timestamp": "2025-03-04T10:00:05Z", "tool_name": "terminal",
         "thought": [{"type": "text", "text": "Check the shell."}],
         "tool_call": {"id": "c1", "arguments": "{\"cmd\": \"echo $SHELL\"}"}},
        {"id": "e3", "kind": "ObservationEvent", "tool_call_id": "c1", "action_id": "e2",
         "observation": {"content": [{"type": "text", "text": "/usr/bin/fish"}]}},
        {"id": "e4", "kind": "MessageEvent", "source": "agent", "timestamp": "2025-03-04T10:00:09+02:00",
         "llm_message": {"content": [{"type": "text", "text": "You use fish."}]}},
        {"kind": "MessageEvent", "source": "user", "llm_message": {"content": [{"type": "text", "text": "no id"}]}},
        {"id": "e5", "kind": "MessageEvent", "source": "environment",
         "llm_message": {"content": [{"type": "text", "text": "env"}]}},
    ]
    for n, event in enumerate(items):
        (events / f"event-{n:05d}-{event.get('id', 'x')}.json").write_text(json.dumps(event))
    (events / "notes.txt").write_text("ignored")
    got = sources.openhands_rows(str(tmp_path / "conv"))
    assert [(r["kind"], r.get("text")) for r in got] == [
        ("user", "Please remember I use fish."), ("assistant", "Check the shell."), ("tool_call", None),
        ("assistant", "You use fish.")]
    assert got[0]["captured_at"] == "2025-03-04T10:00:00Z" and got[1]["source_message_id"] == "e2:thought"
    assert got[2]["resultText"] == "/usr/bin/fish" and got[2]["resultOk"] is True
    assert got[3]["captured_at"].endswith("+02:00")
    as_file = tmp_path / "events.json"
    as_file.write_text(json.dumps({"items": items}))
    assert sources.openhands_rows(str(as_file)) == got
    (tmp_path / "empty" / "nothing").mkdir(parents=True)
    with pytest.raises(Exception, match="no OpenHands event files"):
        sources.openhands_rows(str(tmp_path / "empty"))
    as_file.write_text("{}")
    with pytest.raises(Exception, match="expected a JSON array"):
        sources.openhands_rows(str(as_file))


@landlock
def test_openhands_source_end_to_end(repo: Path, tmp_path: Path) -> None:
    conv = tmp_path / "oh.json"
    conv.write_text(json.dumps([{"id": "e1", "kind": "MessageEvent", "source": "user",
                                 "llm_message": {"content": [{"type": "text", "text": "I prefer vim."}]}}]))
    out = dream_json(repo, "--from", f"openhands:{conv}", "--agent", "builtin:notes", code=0)
    assert out["status"] == "merged"
    assert "Prefers vim." in (repo / "system/human.md").read_text()


SHOW = 'echo "TRANSCRIPT:"; cat "$DREAM_TRANSCRIPT"; echo; echo "PROMPT:"; cat "$DREAM_PROMPT_FILE"'
OH_USER = {"kind": "MessageEvent", "id": "evt-user-1", "timestamp": "2026-07-04T09:15:23.123456", "source": "user",
           "llm_message": {"role": "user", "content": [{"type": "text", "text": "Fix the failing test"}]}}
OH_AGENT = {"kind": "MessageEvent", "id": "evt-agent-1", "timestamp": "2026-07-04T09:16:00.000000", "source": "agent",
            "llm_message": {"role": "assistant", "content": [{"type": "text", "text": "Done: the test passes."}]}}


def _conversation(folder: Path, *events: dict) -> Path:
    (folder / "events").mkdir(parents=True)
    for n, event in enumerate(events):
        (folder / "events" / f"event-{n:05d}-{event['id']}.json").write_text(json.dumps(event))
    return folder


@landlock
def test_openhands_actions_arrive_with_their_observations(repo: Path, tmp_path: Path) -> None:
    """Letta's cases (agent/trajectories/sources/openhands.test.ts): an action names its
    call in its own `tool_call_id` (its `tool_call` may be absent), the observation in
    `tool_call_id` only, or by `action_id` alone; an agent error is a failed result;
    a store folder is every conversation in it, each pairing only its own calls."""
    action = {"kind": "ActionEvent", "id": "evt-action-1", "timestamp": "2026-07-04T09:15:30.001122",
              "source": "agent", "thought": [], "tool_name": "terminal", "tool_call_id": "toolu_01ABC",
              "tool_call": None, "action": {"kind": "TerminalAction", "command": "bun test"}}
    observed = {"kind": "ObservationEvent", "id": "evt-obs-1", "source": "environment", "tool_name": "terminal",
                "tool_call_id": "toolu_01ABC",
                "observation": {"kind": "TerminalObservation", "content": [{"type": "text", "text": "1 pass"}]}}
    failed = {"kind": "AgentErrorEvent", "id": "evt-err-1", "source": "agent", "tool_call_id": "toolu_02DEF",
              "error": "command not found"}
    by_action = {"kind": "ObservationEvent", "id": "evt-obs-3", "source": "environment", "action_id": "evt-action-3",
                 "observation": {"content": "plain text from an older SDK", "is_error": True}}
    store = tmp_path / "conversations"
    _conversation(store / "conv-a", OH_USER, action, observed,
                  {**action, "id": "evt-action-2", "tool_call_id": "toolu_02DEF"}, failed,
                  {**action, "id": "evt-action-3", "tool_call_id": None}, by_action, OH_AGENT)
    # Another conversation reuses the call id: its result must not answer conv-a's call.
    _conversation(store / "conv-b", {**OH_USER, "id": "b-user"}, {**action, "id": "b-action"},
                  {**OH_AGENT, "id": "b-agent"})
    (store / "conv-bad" / "events").mkdir(parents=True)
    (store / "conv-bad" / "events" / "event-00000-x.json").write_text("not json")
    rows = sources.openhands_rows(str(store))
    calls = [(r["source_message_id"], r.get("resultText"), r.get("resultOk")) for r in rows if r["kind"] == "tool_call"]
    assert calls == [("evt-action-1", "1 pass", True), ("evt-action-2", "command not found", False),
                     ("evt-action-3", "plain text from an older SDK", False), ("b-action", None, None)]
    assert [r["source_message_id"] for r in rows if r["kind"] != "tool_call"] == [
        "evt-user-1", "evt-agent-1", "b-user", "b-agent"]
    out = dream_json(repo, "--from", f"openhands:{store / 'conv-a'}", "--agent", SHOW, code=0)
    block = log_of(out).split("TRANSCRIPT:\n", 1)[1].split("\nPROMPT:", 1)[0]
    sent = [r for r in json.loads(block) if r.get("role") == "tool"]
    assert [r.get("content") for r in sent] == ["1 pass", "Error: command not found",
                                                "Error: plain text from an older SDK"]


# -- the prompt ------------------------------------------------------------------------------------

def test_snapshot_budget_truncates_then_omits_with_notices() -> None:
    files = [("system/a.md", ("---\ndescription: A\n---\n" + "a" * 30_000).encode()),
             ("system/b.md", ("---\ndescription: B\n---\n" + "b" * 20_000).encode()),
             ("system/c.md", b"---\ndescription: C\n---\nsmall\n"),
             ("notes/x.md", b"---\ndescription: External note\n---\nx\n")]
    text = payload.snapshot(files)
    assert len(text) <= payload.SNAPSHOT_BUDGET
    assert text.startswith("<parent_memory>\n<memory_filesystem>\n/memory/\n")
    assert text.endswith("</parent_memory>")
    assert "<path>$MEMORY_DIR/system/a.md</path>" in text and "a" * 29_000 in text
    assert "[Memory preview truncated" in text and "$MEMORY_DIR/system/b.md" in text
    assert "<path>$MEMORY_DIR/system/c.md</path>" in text, "a later file is at least named"
    assert "x.md (External note)" in text and "a.md (A)" not in text
    small = payload.snapshot(files, budget=1500)
    assert len(small) <= 1500
    assert "[Memory preview truncated" in small and "[Memory preview omitted" in small
    assert "(no memory markdown files found)" in payload.snapshot([])


def test_tree_caps_children_and_lines() -> None:
    files = [(f"notes/n{i:03d}.md", f"note {i}") for i in range(60)]
    tree = payload.render_tree(files)
    assert "│   └── … (10 more entries)" in tree and tree.endswith("\n└── system/")
    assert "├── n000.md (note 0)" in tree
    capped = payload.render_tree(files, {"max_lines": 10})
    assert len(capped.splitlines()) <= 10 and capped.splitlines()[-1].startswith("[Tree truncated: showing ")
    # The caps come from the environment the way `git memory tree` reads them (a leading integer).
    assert payload.render_tree(files, env={"LETTA_MEMFS_TREE_MAX_LINES": "10 lines"}) == capped


def test_prompt_tree_is_git_memory_tree_plus_descriptions(repo: Path) -> None:
    """Same order (ICU collation, folders first), same caps: only the descriptions differ."""
    for name, desc in (("Zeta", "Last letter"), ("alpha", "First letter"), ("émile", "A name"),
                       ("wide", "Emoji \U0001F600 width")):
        write(repo, f"notes/{name}.md", memfile(desc, "body\n"))
    write(repo, "notes/deep/inner.md", memfile("Nested", "x\n"))
    write(repo, ".hidden/skip.md", memfile("Hidden", "x\n"))
    commit_all(repo, "notes")
    files = payload.memory_files(snapshot.load(str(repo), "HEAD"))
    prompt_tree = payload.render_tree([(p, payload.description_of(p, d)) for p, d in files])
    cli_tree = git("memory", "tree", cwd=repo).stdout.rstrip("\n")
    assert re.sub(r" \([^()]*\)$", "", prompt_tree, flags=re.M) == cli_tree
    assert "├── alpha.md (First letter)" in prompt_tree
    assert prompt_tree.index("alpha.md") < prompt_tree.index("émile.md") < prompt_tree.index("Zeta.md")
    assert prompt_tree.index("deep/") < prompt_tree.index("alpha.md"), "folders first"
    assert [p for p, _ in files][:2] == ["notes/deep/inner.md", "notes/alpha.md"], "walk order, folders first"


@landlock
def test_prompt_carries_instruction_transcript_and_directive(repo: Path, tmp_path: Path) -> None:
    write(repo, "system/big.md", memfile("Pinned", "line\n" * 10))
    commit_all(repo, "big")
    out = dream_json(repo, "--from", f"transcript:{SESSION}", "-i", "Focus on infrastructure facts.",
                     "--to", str(tmp_path / "AGENTS.md"), "--agent", SHOW, code=0)
    prompt = log_of(out).split("PROMPT:\n", 1)[1]
    assert "# Dream pass: reflect and tidy long-term memory" in prompt
    assert "Focus on infrastructure facts." in prompt
    assert "## Document to maintain" in prompt and "system/AGENTS.md" in prompt and "do not exist" not in prompt
    assert "orbit-stage" in prompt and '"role": "meta"' in prompt
    assert "<path>$MEMORY_DIR/system/big.md</path>" in prompt
    assert str(repo) not in prompt


# -- --to ---------------------------------------------------------------------------------------------

@landlock
def test_to_round_trip(repo: Path, tmp_path: Path) -> None:
    doc = tmp_path / "proj" / "AGENTS.md"
    doc.parent.mkdir()
    doc.write_text("# Agents\n\n- Run `make test`.\n")
    cmd = ('git memory str_replace system/AGENTS.md "- Run \\`make test\\`." '
           '"- Run \\`make test\\` before every commit." -m "Tighten the testing rule"')
    out = dream_json(repo, "--to", str(doc), "--agent", cmd, code=0)
    assert out["status"] == "merged" and out["target_written"] is True
    assert doc.read_text() == "# Agents\n\n- Run `make test` before every commit.\n"
    subjects = git("log", "--format=%s", cwd=repo).stdout
    assert f"dream: sync AGENTS.md from {doc}" in subjects
    stored = (repo / "system/AGENTS.md").read_text()
    assert stored.startswith("---\ndescription: Repository guidance for coding agents, maintained by git dream.\n---\n")
    mtime = doc.stat().st_mtime_ns
    again = dream_json(repo, "--to", str(doc), "--agent", "true", code=0)
    assert again["status"] == "no_changes" and again["target_written"] is False
    assert doc.stat().st_mtime_ns == mtime
    assert git("log", "-1", "--format=%s", cwd=repo).stdout.strip() != f"dream: sync AGENTS.md from {doc}" or \
        subjects.count("dream: sync") == 1


@landlock
def test_to_target_left_absent_when_the_agent_writes_nothing(repo: Path, tmp_path: Path) -> None:
    doc = tmp_path / "GUIDE.md"
    out = dream_json(repo, "--to", str(doc), "--agent", "true", code=0)
    assert out["status"] == "no_changes" and not doc.exists()


@landlock
def test_to_write_back_failure_keeps_the_merge(repo: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where a folder should be\n")
    doc = blocker / "AGENTS.md"
    cmd = 'git memory create system/AGENTS.md "- Run make test." -d "Guidance" -m "Start the guide"'
    out = dream_json(repo, "--to", str(doc), "--agent", cmd, code=1)
    assert out["status"] == "merged" and out["merged"] is True, out
    assert out["target_error"].startswith(f"cannot write --to target {doc}")
    assert "But writing" in out["message"] and out["target_written"] is False
    assert "system/AGENTS.md" in git("ls-tree", "-r", "--name-only", "HEAD", cwd=repo).stdout
    assert "backoff" not in state(repo), "a landed merge is not a failure to back off from"
    record = json.loads((common_dir(repo) / "dream" / "runs" / out["id"] / "run.json").read_text())
    assert record["status"] == "merged" and record["target_error"] == out["target_error"]


def test_to_usage_error(repo: Path) -> None:
    proc = dream(repo, "--to", "/", "--agent", "true")
    assert proc.returncode == 2 and "expected a file path" in proc.stderr
