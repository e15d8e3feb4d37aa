"""`git memory install claude-code | codex` and the hooks they install, with the real
harnesses from the npm registry run against a stand-in for the model's API on loopback
(tests/npmkit.py): the memory reaches the first model request, steps and compactions
start exactly the dreams the trigger says, a busy or dirty memory never breaks a
session, and uninstall puts every file back byte for byte."""
from __future__ import annotations

import fcntl
import itertools
import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import npmkit
import pytest
from npmkit import LIMIT, node_bin, npm_package, stand_in

from conftest import git, memory, snapshot
from dreamkit import common_dir
from gitmemfs.dream import state, trigger

FACT = "Sarah prefers tea, green, no sugar"


@pytest.fixture
def agent_mem(repo: Path) -> Path:
    """A memory with a fact to look for, and the builtin notes agent as its dream agent."""
    assert memory("str_replace", "system/human.md", "(nothing yet)", FACT, "-m", "what Sarah drinks",
                  cwd=repo).returncode in (0, 1)
    human = repo / "system" / "human.md"
    if FACT not in human.read_text():
        assert memory("create", "system/tea.md", FACT + "\n", "-d", "Drinks", "-m", "what Sarah drinks",
                      cwd=repo).returncode == 0
    git("config", "dream.agent", "builtin:notes", cwd=repo)
    return repo


def project_of(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    git("init", "-q", str(project), cwd=tmp_path)
    return project


def claude_run(exe: str, project: Path, home: Path, url: str, prompt: str,
               env: dict[str, str] | None = None, args: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    return subprocess.run([exe, "-p", prompt, *args], cwd=project, capture_output=True, text=True, timeout=LIMIT * 2,
                          env={**os.environ, "HOME": str(home), "ANTHROPIC_BASE_URL": url,
                               "ANTHROPIC_API_KEY": "sk-stand-in", "GIT_DREAM_SANDBOX": "0",
                               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", **(env or {})})


def claude_exe() -> str:
    return node_bin(npm_package("@anthropic-ai/claude-code"), "claude")


def runs(repo: Path) -> list[dict[str, Any]]:
    dirs = state.Dirs(str(common_dir(repo)))
    return [state.load_record(dirs, i) or {} for i in state.record_ids(dirs)]


def settle(repo: Path, count: int) -> list[dict[str, Any]]:
    """Wait (bounded) until `count` dreams finished and none runs."""
    deadline = time.monotonic() + LIMIT * 2
    while time.monotonic() < deadline:
        done = [r for r in runs(repo) if r.get("status") not in (None, "running")]
        if len(done) >= count and not trigger.running(str(common_dir(repo))):
            return done
        time.sleep(0.2)
    raise AssertionError(f"{count} dreams expected, have {runs(repo)}")


def listed(repo: Path) -> list[dict[str, Any]]:
    proc = subprocess.run(["git", "dream", "list", "--all", "--json"], cwd=repo, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["runs"]


def sources(repo: Path) -> set[str]:
    data = json.loads((common_dir(repo) / "dream" / "state.json").read_text())
    return {key.partition(":")[2] for key in data.get("sources") or {}}


def test_claude_code_sessions_carry_the_memory_and_steps_start_dreams(agent_mem: Path, tmp_path: Path,
                                                                     hermetic: Path) -> None:
    exe = claude_exe()
    project = project_of(tmp_path)
    git("config", "dream.trigger", "steps", cwd=agent_mem)
    git("config", "dream.every", "2", cwd=agent_mem)
    done = memory("--memory-dir", str(agent_mem), "install", "claude-code", cwd=project)
    assert done.returncode == 0, done.stderr
    sessions = 5
    with stand_in() as server:
        for n in range(sessions):
            start = len(server.requests)
            proc = claude_run(exe, project, hermetic, server.url, f"say done ({n})")
            assert proc.returncode == 0, proc.stdout + proc.stderr
            assert "done" in proc.stdout
            first = json.dumps(server.requests[start])
            assert FACT in first and "<memory>" in first, f"session {n}: the memory is not in the first request"
            settle(agent_mem, (n + 1) // 2)
    # 5 steps, every 2: dreams after the 2nd and the 4th, none after the 5th (one step counted).
    finished = settle(agent_mem, 2)
    assert len(finished) == 2, finished
    assert trigger.read_steps(str(common_dir(agent_mem))) == 1
    assert {r["id"] for r in listed(agent_mem)} == {r["id"] for r in finished}
    transcripts = {str(p) for p in (hermetic / ".claude" / "projects").rglob("*.jsonl")}
    assert len(transcripts) == sessions
    assert len(sources(agent_mem) & transcripts) == 2, "each dream read the session that reached the count"
    assert git("status", "--porcelain", cwd=agent_mem).stdout == ""


def installed_command(settings: Path, event: str) -> str:
    data = json.loads(settings.read_text())
    return data["hooks"][event][-1]["hooks"][0]["command"]


def claude_transcript(path: Path, cwd: Path) -> Path:
    """A Claude Code session file, as it writes them, with one exchange worth remembering."""
    rows = [{"type": "user", "uuid": "u1", "sessionId": "s-compact", "cwd": str(cwd), "timestamp":
             "2026-12-03T10:00:00Z", "message": {"role": "user", "content": "Remember: the deploy key rotates "
                                                 "every Monday."}},
            {"type": "assistant", "uuid": "a1", "sessionId": "s-compact", "cwd": str(cwd), "timestamp":
             "2026-12-03T10:00:05Z", "message": {"role": "assistant", "content": [
                 {"type": "text", "text": "Noted: the deploy key rotates every Monday."}]}}]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_pre_compact_payload_starts_a_dream_over_that_transcript(agent_mem: Path, tmp_path: Path,
                                                                 hermetic: Path) -> None:
    project = project_of(tmp_path)
    git("config", "dream.trigger", "compaction", cwd=agent_mem)
    assert memory("--memory-dir", str(agent_mem), "install", "claude-code", cwd=project).returncode == 0
    command = installed_command(hermetic / ".claude" / "settings.json", "PreCompact")
    transcript = claude_transcript(hermetic / ".claude" / "projects" / "p" / "s-compact.jsonl", project)
    payload = {"session_id": "s-compact", "transcript_path": str(transcript), "cwd": str(project),
               "hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": ""}
    env = {**os.environ, "GIT_DREAM_SANDBOX": "0"}
    # A Stop does nothing under trigger=compaction: no step counted, no dream.
    stop = subprocess.run(installed_command(hermetic / ".claude" / "settings.json", "Stop"), shell=True,
                          input=json.dumps({**payload, "hook_event_name": "Stop"}), capture_output=True,
                          text=True, cwd=project, env=env, timeout=LIMIT)
    assert stop.returncode == 0 and stop.stdout == "", stop.stderr
    proc = subprocess.run(command, shell=True, input=json.dumps(payload), capture_output=True, text=True,
                          cwd=project, env=env, timeout=LIMIT)
    assert proc.returncode == 0 and proc.stdout == "", proc.stdout + proc.stderr
    finished = settle(agent_mem, 1)
    assert [r.get("status") for r in finished] == ["merged"], finished
    assert sources(agent_mem) == {str(transcript)}
    assert "deploy key" in git("diff", "HEAD^1", "HEAD", cwd=agent_mem).stdout


@pytest.fixture
def numbered_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stand-in's answers each with a message id of its own, as the API gives them:
    Claude Code splits a conversation into API rounds by message id and will not
    compact fewer than two ("Not enough messages to compact")."""
    ids = itertools.count(1)
    plain = npmkit.messages_events

    def numbered(model: str) -> list[dict[str, Any]]:
        events = plain(model)
        events[0]["message"]["id"] = f"msg_{next(ids)}"
        return events

    monkeypatch.setattr(npmkit, "messages_events", numbered)


def test_claude_code_compacts_a_session_and_its_pre_compact_hook_starts_a_dream(
        agent_mem: Path, tmp_path: Path, hermetic: Path, numbered_answers: None) -> None:
    """`/compact` in a headless session (`claude -p /compact --continue`): Claude Code
    itself runs the installed PreCompact hook, whose dream reads that session, and
    the SessionStart after the compaction gives the memory again."""
    exe = claude_exe()
    project = project_of(tmp_path)
    git("config", "dream.trigger", "compaction", cwd=agent_mem)
    assert memory("--memory-dir", str(agent_mem), "install", "claude-code", cwd=project).returncode == 0
    with stand_in() as server:
        for n, prompt in enumerate(("Remember: the deploy key rotates every Monday.", "say done", "say done")):
            proc = claude_run(exe, project, hermetic, server.url, prompt, args=("--continue",) if n else ())
            assert proc.returncode == 0 and "done" in proc.stdout, proc.stdout + proc.stderr
        assert runs(agent_mem) == [], "trigger compaction: the turns start no dream"
        proc = claude_run(exe, project, hermetic, server.url, "/compact", args=("--continue",))
        assert proc.returncode == 0 and "Not enough messages" not in proc.stdout, proc.stdout + proc.stderr
    [transcript] = (hermetic / ".claude" / "projects").rglob("*.jsonl")
    rows = [json.loads(line) for line in transcript.read_text().splitlines()]
    kinds = [(row.get("type"), row.get("subtype")) for row in rows]
    assert ("system", "compact_boundary") in kinds, "Claude Code compacted the session"
    after = rows[kinds.index(("system", "compact_boundary")):]
    assert any(row.get("type") == "attachment" and row["attachment"].get("type") == "hook_additional_context"
               and "<memory>" in json.dumps(row) for row in after), "SessionStart (compact) gave the memory"
    finished = settle(agent_mem, 1)
    assert [r.get("status") for r in finished] == ["merged"], finished
    assert sources(agent_mem) == {str(transcript)}
    assert "deploy key" in git("diff", "HEAD^1", "HEAD", cwd=agent_mem).stdout


def hold(path: Path) -> Any:
    fh = open(path, "a+")
    fcntl.flock(fh, fcntl.LOCK_EX)
    fh.seek(0)
    fh.truncate()
    fh.write(f"pid {os.getpid()} test\n")
    fh.flush()
    return fh


def test_a_busy_or_dirty_memory_never_breaks_a_session(agent_mem: Path, tmp_path: Path, hermetic: Path) -> None:
    exe = claude_exe()
    project = project_of(tmp_path)
    git("config", "dream.trigger", "steps", cwd=agent_mem)
    git("config", "dream.every", "1", cwd=agent_mem)
    assert memory("--memory-dir", str(agent_mem), "install", "claude-code", cwd=project).returncode == 0
    (agent_mem / "system" / "human.md").write_text("half-written\n")  # dirty
    (common_dir(agent_mem) / "dream").mkdir(exist_ok=True)
    writer = hold(common_dir(agent_mem) / "memory.lock")  # an edit in progress
    try:
        before = snapshot(agent_mem)
        with stand_in() as server:
            for n in range(2):
                proc = claude_run(exe, project, hermetic, server.url, f"say done ({n})")
                assert proc.returncode == 0, proc.stdout + proc.stderr
                assert "done" in proc.stdout
            assert FACT in json.dumps(server.requests[0]), "the committed memory still reaches the model"
        assert runs(agent_mem) == [], "no dream over a dirty memory"
        said = (common_dir(agent_mem) / "dream" / "said").read_text().splitlines()
        assert sum(line.endswith(" dirty") for line in said) == 2, "said once per session"
        assert snapshot(agent_mem) == before
        # A dream holding its lock: the step is counted, nothing else starts, the session goes on.
        git("checkout", "--", "system/human.md", cwd=agent_mem)
        dream_lock = hold(common_dir(agent_mem) / "dream" / "lock")
        try:
            with stand_in() as server:
                proc = claude_run(exe, project, hermetic, server.url, "say done")
            assert proc.returncode == 0 and "done" in proc.stdout, proc.stderr
            assert runs(agent_mem) == []
        finally:
            dream_lock.close()
    finally:
        writer.close()


def test_claude_code_uninstall_restores_every_file_byte_for_byte(repo: Path, tmp_path: Path,
                                                                 hermetic: Path) -> None:
    config = tmp_path / "claude-config"
    config.mkdir()
    settings = config / "settings.json"
    settings.write_text('{\n    "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo mine"}]}]},\n'
                        '    "model": "opus"\n}')  # their own formatting, no final newline
    claude_json = config / ".claude.json"
    claude_json.write_text('{"mcpServers": {"other": {"command": "other-server"}}}\n')
    env = {"CLAUDE_CONFIG_DIR": str(config)}
    project = project_of(tmp_path)
    before = {p: p.read_bytes() for p in (settings, claude_json)}
    dry = memory("--memory-dir", str(repo), "install", "claude-code", "--dry-run", cwd=project, env=env)
    assert dry.returncode == 0 and "hook claude-code stop" in dry.stdout, dry.stderr
    assert {p: p.read_bytes() for p in before} == before
    assert memory("--memory-dir", str(repo), "install", "claude-code", cwd=project, env=env).returncode == 0
    data = json.loads(settings.read_text())
    assert data["hooks"]["Stop"][0]["hooks"][0]["command"] == "echo mine", "their hook kept, first"
    assert set(data["hooks"]) == {"Stop", "SessionStart", "PreCompact", "SessionEnd"}
    assert f"--memory-dir {repo}" in data["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    servers = json.loads(claude_json.read_text())["mcpServers"]
    assert set(servers) == {"other", "memory"} and str(repo) in servers["memory"]["args"]
    assert not (hermetic / ".claude").exists() and not (hermetic / ".claude.json").exists()
    # Installing twice is one install.
    assert memory("--memory-dir", str(repo), "install", "claude-code", cwd=project, env=env).returncode == 0
    assert len(json.loads(settings.read_text())["hooks"]["Stop"]) == 2
    done = memory("--memory-dir", str(repo), "uninstall", "claude-code", cwd=project, env=env)
    assert done.returncode == 0, done.stderr
    assert {p: p.read_bytes() for p in before} == before

    # Project scope: files that were not there are gone again, folder included.
    assert memory("--memory-dir", str(repo), "install", "claude-code", "--project", cwd=project).returncode == 0
    local = json.loads((project / ".claude" / "settings.local.json").read_text())
    assert local["enabledMcpjsonServers"] == ["memory"]
    assert "memory" in json.loads((project / ".mcp.json").read_text())["mcpServers"]
    listed_servers = subprocess.run([claude_exe(), "mcp", "list"], cwd=project, capture_output=True, text=True,
                                    timeout=LIMIT * 2, env={**os.environ, "HOME": str(hermetic)})
    line = next(x for x in listed_servers.stdout.splitlines() if x.startswith("memory:"))
    assert "Connected" in line, "approved by name: Claude Code starts it without asking"
    for leftover in (hermetic / ".claude.json", hermetic / ".claude"):  # what Claude Code itself wrote
        subprocess.run(["rm", "-rf", str(leftover)], check=True)
    assert memory("--memory-dir", str(repo), "uninstall", "claude-code", "--project", cwd=project).returncode == 0
    assert sorted(p.name for p in project.iterdir()) == [".git"]

    # Changed by someone else since, even between two installs: only our entries come out, theirs stay.
    assert memory("--memory-dir", str(repo), "install", "claude-code", cwd=project, env=env).returncode == 0
    data = json.loads(settings.read_text())
    data["theme"] = "dark"
    settings.write_text(json.dumps(data))
    assert memory("--memory-dir", str(repo), "install", "claude-code", cwd=project, env=env).returncode == 0
    assert memory("--memory-dir", str(repo), "uninstall", "claude-code", cwd=project, env=env).returncode == 0
    data = json.loads(settings.read_text())
    assert data["theme"] == "dark" and data["hooks"] == {"Stop": [{"hooks": [{"type": "command",
                                                                              "command": "echo mine"}]}]}


def test_codex_install_gives_the_memory_counts_turns_and_uninstalls_byte_for_byte(
        agent_mem: Path, tmp_path: Path, hermetic: Path) -> None:
    exe = node_bin(npm_package("@openai/codex"), "codex")
    home = hermetic / ".codex"
    home.mkdir()
    seen = tmp_path / "theirs.log"
    theirs = tmp_path / "their-notify.sh"
    theirs.write_text(f'#!/bin/sh\nprintf "%s\\n" "$1" >> {seen}\n')
    theirs.chmod(0o755)
    git("config", "dream.trigger", "steps", cwd=agent_mem)
    git("config", "dream.every", "2", cwd=agent_mem)
    agents = home / "AGENTS.md"
    agents.write_text("Answer briefly.")
    with stand_in() as server:
        config = home / "config.toml"
        config.write_text(f'model = "gpt-5"\nmodel_provider = "standin"\nnotify = ["{theirs}"]\n\n'
                          '[model_providers.standin]\nname = "stand-in"\n'
                          f'base_url = "{server.url}/v1"\nwire_api = "responses"\nenv_key = "STANDIN_KEY"\n')
        before = {p: p.read_bytes() for p in (config, agents)}
        done = memory("--memory-dir", str(agent_mem), "install", "codex", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert "Answer briefly." in agents.read_text() and FACT in agents.read_text()
        for n in range(2):
            start = len(server.requests)
            proc = subprocess.run([exe, "exec", "--skip-git-repo-check", f"say done ({n})"], cwd=tmp_path,
                                  capture_output=True, text=True, timeout=LIMIT * 2,
                                  env={**os.environ, "CODEX_HOME": str(home), "STANDIN_KEY": "x",
                                       "GIT_DREAM_SANDBOX": "0"})
            assert proc.returncode == 0, proc.stdout + proc.stderr
            assert FACT in json.dumps(server.requests[start]), "the memory is in Codex's first request"
    deadline = time.monotonic() + LIMIT
    while time.monotonic() < deadline and not (seen.exists() and len(seen.read_text().splitlines()) >= 2):
        time.sleep(0.2)
    assert [json.loads(x)["type"] for x in seen.read_text().splitlines()] == ["agent-turn-complete"] * 2
    # Each turn a step; the second reached dream.every: one dream, over that session's rollout.
    finished = settle(agent_mem, 1)
    assert len(finished) == 1 and finished[0].get("status") in ("merged", "no_changes"), finished
    rollouts = {str(p) for p in (home / "sessions").rglob("rollout-*.jsonl")}
    assert len(rollouts) == 2 and len(sources(agent_mem) & rollouts) == 1, (sources(agent_mem), rollouts)
    assert trigger.read_steps(str(common_dir(agent_mem))) == 0
    # The memory moved: the next turn's notify refreshes the AGENTS.md block.
    assert memory("create", "system/plants.md", "The fern needs water on Fridays.\n", "-d", "Plants",
                  "-m", "the fern", cwd=agent_mem).returncode == 0
    notify = subprocess.run(
        [*json.loads(config.read_text().split("notify = ", 1)[1].splitlines()[0]),
         json.dumps({"type": "agent-turn-complete", "thread-id": "t", "cwd": str(tmp_path)})],
        capture_output=True, text=True, timeout=LIMIT)
    assert notify.returncode == 0, notify.stderr
    assert "fern needs water" in agents.read_text()
    done = memory("--memory-dir", str(agent_mem), "uninstall", "codex", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert {p: p.read_bytes() for p in before} == before


def test_session_end_syncs_in_the_background_where_a_remote_is_set(repo: Path, tmp_path: Path,
                                                                   hermetic: Path) -> None:
    project = project_of(tmp_path)
    assert memory("--memory-dir", str(repo), "install", "claude-code", cwd=project).returncode == 0
    command = installed_command(hermetic / ".claude" / "settings.json", "SessionEnd")
    payload = json.dumps({"session_id": "s-end", "cwd": str(project), "hook_event_name": "SessionEnd",
                          "reason": "exit"})
    # No remote: nothing to do, nothing said.
    proc = subprocess.run(command, shell=True, input=payload, capture_output=True, text=True, cwd=project,
                          timeout=LIMIT)
    assert (proc.returncode, proc.stdout) == (0, ""), proc.stderr
    remote = tmp_path / "remote.git"
    git("clone", "-q", "--bare", str(repo), str(remote), cwd=tmp_path)
    git("remote", "add", "origin", str(remote), cwd=repo)
    git("fetch", "-q", "origin", cwd=repo)
    git("branch", "-q", "--set-upstream-to=origin/main", cwd=repo)
    assert memory("create", "system/plants.md", "The fern needs water on Fridays.\n", "-d", "Plants",
                  "-m", "the fern", cwd=repo).returncode == 0
    mine = git("rev-parse", "HEAD", cwd=repo).stdout.strip()
    proc = subprocess.run(command, shell=True, input=payload, capture_output=True, text=True, cwd=project,
                          timeout=LIMIT)
    assert (proc.returncode, proc.stdout) == (0, ""), proc.stderr
    deadline = time.monotonic() + LIMIT
    while time.monotonic() < deadline and git("rev-parse", "main", cwd=remote).stdout.strip() != mine:
        time.sleep(0.2)
    assert git("rev-parse", "main", cwd=remote).stdout.strip() == mine



def test_hooks_of_a_memory_that_is_gone_exit_0_and_say_it_at_session_start(repo: Path, tmp_path: Path,
                                                                            hermetic: Path) -> None:
    project = project_of(tmp_path)
    assert memory("--memory-dir", str(repo), "install", "claude-code", cwd=project).returncode == 0
    settings = hermetic / ".claude" / "settings.json"
    subprocess.run(["rm", "-rf", str(repo)], check=True)
    payload = json.dumps({"session_id": "gone", "cwd": str(project), "source": "startup",
                          "transcript_path": str(tmp_path / "none.jsonl")})
    said = {}
    for event in ("SessionStart", "Stop", "PreCompact", "SessionEnd"):
        proc = subprocess.run(installed_command(settings, event), shell=True, input=payload, capture_output=True,
                              text=True, cwd=project, timeout=LIMIT)
        assert proc.returncode == 0, (event, proc.stderr)
        said[event] = proc.stdout
    assert "does not exist" in json.loads(said["SessionStart"])["systemMessage"]
    assert {k: v for k, v in said.items() if k != "SessionStart"} == {"Stop": "", "PreCompact": "",
                                                                      "SessionEnd": ""}


def test_a_bad_dream_every_is_said_once_and_the_session_goes_on(repo: Path, tmp_path: Path,
                                                               hermetic: Path) -> None:
    project = project_of(tmp_path)
    git("config", "dream.trigger", "steps", cwd=repo)
    git("config", "dream.every", "-3", cwd=repo)
    assert memory("--memory-dir", str(repo), "install", "claude-code", cwd=project).returncode == 0
    command = installed_command(hermetic / ".claude" / "settings.json", "Stop")
    payload = json.dumps({"session_id": "bad-every", "cwd": str(project)})
    said = []
    for _ in range(2):
        proc = subprocess.run(command, shell=True, input=payload, capture_output=True, text=True, cwd=project,
                              timeout=LIMIT)
        assert proc.returncode == 0, proc.stderr
        said.append(proc.stdout)
    assert "dream.every must be a whole number" in json.loads(said[0])["systemMessage"]
    assert said[1] == "" and runs(repo) == []
