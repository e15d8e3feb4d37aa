"""`git memory mcp` driven by clients we did not write, installed from the npm registry
by the test set-up (into a cache folder, once: tests/npmkit.py): the official TypeScript SDK client over
stdio and streamable HTTP, Claude Code's `claude mcp list` against the entry
`git memory mcp install claude-code` wrote, and Codex's first request to the model
(a stand-in for the model's API on loopback records it) after `install codex`.

Each skips with its reason when node/npm is missing or the package cannot be installed."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import git, memory, snapshot

pytest.importorskip("mcp.server.mcpserver", reason="the [mcp] extra is not installed")

from npmkit import node_bin, npm_package, stand_in
from test_mcp import LIMIT, http_server, scrub_mcp_env  # noqa: F401

HERE = Path(__file__).resolve().parent
TOKEN = "ts-round-token-0123456789"


# -- the TypeScript SDK client --------------------------------------------------------------

def ts_round(repo: Path, *how: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    sdk = npm_package("@modelcontextprotocol/sdk@1")
    proc = subprocess.run(["node", str(HERE / "mcp_ts" / "round.mjs"), str(sdk), *how], cwd=repo,
                          capture_output=True, text=True, timeout=LIMIT * 2, env={**os.environ, **(env or {})})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def judge_round(mem: Path, out: dict[str, Any], before: tuple) -> None:
    assert out["server"]["name"] == "git-memory" and "reason" in out["instructions"]
    tools = out["tools"]
    assert tools["create"]["required"] == ["path", "description", "reason"] and tools["create"]["output"]
    assert all(t["destructive"] is False for t in tools.values())
    assert tools["view"]["readOnly"] is True and not tools["view"]["output"]
    calls = out["calls"]
    for name in ("view", "create", "str_replace", "search", "log", "undo"):
        assert not calls[name]["isError"], (name, calls[name])
    assert "Sarah" in calls["view"]["text"] and calls["view"]["structured"] is None
    assert calls["create"]["structured"]["paths"] == ["system/café notes.md"]
    assert "Thomas" in calls["search"]["text"]
    assert "ts round: rename Tom" in calls["log"]["text"]
    assert calls["read_only"]["isError"] and "read_only" in calls["read_only"]["text"]
    assert calls["unknown_arg"]["isError"] and "unknown argument 'colour'" in calls["unknown_arg"]["text"]
    assert out["unknown_tool"]["code"] == -32602
    encoded = "memory://system/caf%C3%A9%20notes.md"
    assert encoded in out["resources"] and out["reads"][encoded].endswith("hello from TypeScript\n")
    assert "Tom" in out["reads"]["memory://system/contacts.md"]  # the undo took Thomas back
    assert out["missing_resource"]["code"] == -32602 and "does not exist" in out["missing_resource"]["message"]
    assert set(out["prompts"]) == {"remember", "reflect", "load_memory"}
    assert "tea is green" in out["remember"]
    assert out["unknown_prompt"]["code"] == -32602
    subjects = git("log", "--format=%s", f"{before[0]}..HEAD", cwd=mem).stdout.split("\n")
    assert subjects[:3] == ["ts round: undo", "ts round: rename Tom", "ts round: create"]
    assert git("status", "--porcelain", cwd=mem).stdout == ""


def test_typescript_sdk_client_round_over_stdio(mem: Path) -> None:
    before = snapshot(mem)
    judge_round(mem, ts_round(mem, "stdio", "git", "memory", "mcp"), before)


def test_typescript_sdk_client_round_over_http(mem: Path) -> None:
    before = snapshot(mem)
    with http_server(mem, env={"GIT_MEMORY_MCP_TOKEN": TOKEN}) as url:
        out = ts_round(mem, "http", url, env={"GIT_MEMORY_MCP_TOKEN": TOKEN})
    judge_round(mem, out, before)


# -- Claude Code ----------------------------------------------------------------------------

def claude(cwd: Path, home: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    exe = node_bin(npm_package("@anthropic-ai/claude-code"), "claude")
    return subprocess.run([exe, *args], cwd=cwd, capture_output=True, text=True, timeout=LIMIT * 2,
                          env={**os.environ, "HOME": str(home), **(env or {})})


def test_claude_code_connects_with_the_entry_install_wrote(mem: Path, tmp_path: Path, hermetic: Path) -> None:
    project = tmp_path / "project"
    git("init", "-q", str(project), cwd=tmp_path)
    done = memory("--memory-dir", str(mem), "mcp", "install", "claude-code", cwd=project)
    assert done.returncode == 0, done.stderr
    # A person approves the project's servers once; here, in the test's own HOME.
    (hermetic / ".claude").mkdir(exist_ok=True)
    (hermetic / ".claude" / "settings.json").write_text(json.dumps({"enableAllProjectMcpServers": True}))
    listed = claude(project, hermetic, "mcp", "list")
    assert listed.returncode == 0, listed.stderr
    line = next(x for x in listed.stdout.splitlines() if x.startswith("memory:"))
    assert "Connected" in line, listed.stdout

    # The HTTP entry: the header names the variable; the token comes from the environment.
    with http_server(mem, env={"GIT_MEMORY_MCP_TOKEN": TOKEN}) as url:
        done = memory("mcp", "install", "claude-code", "--scope", "user", "--http", url, "--name", "remote",
                      cwd=project)
        assert done.returncode == 0, done.stderr
        assert TOKEN not in (hermetic / ".claude.json").read_text()
        ok = claude(project, hermetic, "mcp", "list", env={"GIT_MEMORY_MCP_TOKEN": TOKEN})
        wrong = claude(project, hermetic, "mcp", "list", env={"GIT_MEMORY_MCP_TOKEN": "not-the-token"})
    remote = next(x for x in ok.stdout.splitlines() if x.startswith("remote:"))
    assert "Connected" in remote, ok.stdout
    remote = next(x for x in wrong.stdout.splitlines() if x.startswith("remote:"))
    assert "Connected" not in remote, wrong.stdout


# -- Codex ----------------------------------------------------------------------------------

def memory_tools(request: dict[str, Any]) -> set[str]:
    """The names of the memory server's tools in one request to the model."""
    names: set[str] = set()
    for tool in request.get("tools") or []:
        if tool.get("name") == "mcp__memory" and tool.get("type") == "namespace":
            names |= {t.get("name") for t in tool.get("tools") or []}
        elif str(tool.get("name", "")).startswith("mcp__memory__"):
            names.add(tool["name"].removeprefix("mcp__memory__"))
    return names


def test_codex_sends_the_memory_tools_in_its_first_request(mem: Path, tmp_path: Path, hermetic: Path) -> None:
    exe = node_bin(npm_package("@openai/codex"), "codex")
    home = hermetic / ".codex"
    home.mkdir()
    runs = 10
    with stand_in() as server:
        (home / "config.toml").write_text(
            'model = "gpt-5"\nmodel_provider = "standin"\n\n[model_providers.standin]\nname = "stand-in"\n'
            f'base_url = "http://127.0.0.1:{server.server_address[1]}/v1"\nwire_api = "responses"\n'
            'env_key = "STANDIN_KEY"\n')
        done = memory("--memory-dir", str(mem), "mcp", "install", "codex", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        before = snapshot(mem)
        seen = []
        for n in range(runs):
            start = len(server.requests)
            proc = subprocess.run([exe, "exec", "--skip-git-repo-check", f"say done ({n})"], cwd=tmp_path,
                                  capture_output=True, text=True, timeout=LIMIT * 2,
                                  env={**os.environ, "CODEX_HOME": str(home), "STANDIN_KEY": "x"})
            assert proc.returncode == 0, proc.stdout + proc.stderr
            assert len(server.requests) > start, proc.stderr
            seen.append(memory_tools(server.requests[start]))
    expected = {"view", "create", "str_replace", "search", "undo"}
    assert [expected <= names for names in seen] == [True] * runs, seen
    assert snapshot(mem) == before  # the stand-in asked for nothing: nothing changed
