"""`git memory mcp` through the official MCP SDK client: over stdio (the server started as
`git memory mcp` from bin/) and over streamable HTTP (a real server on 127.0.0.1)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pytest

from conftest import LIB, commit_all, git, head, memfile, memory, snapshot, toml_loads, write

pytest.importorskip("mcp.server.mcpserver", reason="the [mcp] extra is not installed")

import anyio
from mcp import Client, StdioServerParameters

LIMIT = 60  # seconds for any one exchange: a hang fails with a message, not a stall


@pytest.fixture(autouse=True)
def scrub_mcp_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No client or server setting of the person running the tests leaks in (or is written to)."""
    for name in ("CODEX_HOME", "GIT_MEMORY_MCP_TOKEN", "GIT_MEMORY_MCP_ORIGINS", "GIT_MEMORY_MCP_POLL", "MCP_TIMEOUT",
                 "CLAUDE_CONFIG_DIR"):
        monkeypatch.delenv(name, raising=False)


def stdio(repo: Path, *args: str) -> StdioServerParameters:
    return StdioServerParameters(command="git", args=["memory", "mcp", *args], cwd=str(repo), env=dict(os.environ))


def call(params: Any, body: Any, **client: Any) -> Any:
    """Run `body(client)` against a fresh client session; return what it returns."""
    async def main() -> Any:
        with anyio.fail_after(LIMIT * 2):
            async with Client(params, **client) as c:
                return await body(c)
    return anyio.run(main)


def text(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def subject(repo: Path, rev: str = "HEAD") -> str:
    return git("log", "-1", "--format=%s", rev, cwd=repo).stdout.strip()


# -- listing ------------------------------------------------------------------------------

def test_lists_tools_resources_prompts_and_instructions(mem: Path) -> None:
    async def body(c: Client) -> Any:
        return (c.instructions, (await c.list_tools()).tools, (await c.list_resources()).resources,
                (await c.list_resource_templates()).resource_templates, (await c.list_prompts()).prompts)

    instructions, tools, resources, templates, prompts = call(stdio(mem), body)
    assert "reason" in instructions and "memory://compiled" in instructions
    by_name = {t.name: t for t in tools}
    assert set(by_name) >= {"view", "create", "str_replace", "insert", "delete", "rename", "update_description",
                            "apply_patch", "tree", "compile", "search", "log", "show", "diff", "undo", "restore"}
    for name in ("view", "tree", "compile", "search", "log", "show", "diff"):
        assert by_name[name].annotations.read_only_hint is True
    for name in ("create", "str_replace", "insert", "delete", "rename", "update_description", "apply_patch",
                 "undo", "restore"):  # every write is a commit undo takes back: none is destructive
        assert by_name[name].annotations.destructive_hint is False
        assert by_name[name].annotations.read_only_hint is False
    schema = by_name["str_replace"].input_schema
    assert set(schema["properties"]) == {"path", "old_string", "new_string", "reason", "replace_all", "propose"}
    assert set(schema["required"]) == {"path", "old_string", "new_string", "reason"}
    assert schema["additionalProperties"] is False
    for tool in tools:
        for name, prop in tool.input_schema["properties"].items():
            assert "type" in prop and "anyOf" not in prop, (tool.name, name, prop)
            assert prop["description"] == " ".join(prop["description"].split()), (tool.name, name)
        assert tool.description == " ".join(tool.description.split()), tool.name
        assert (tool.output_schema is not None) == (tool.name in {
            "create", "str_replace", "insert", "delete", "rename", "update_description", "apply_patch"}), tool.name
    assert by_name["search"].input_schema["required"] == ["query"]
    assert by_name["rename"].input_schema["required"] == ["old_path", "new_path", "reason"]
    uris = {r.uri: r for r in resources}
    assert {"memory://compiled", "memory://tree", "memory://system/contacts.md",
            "memory://system/rules.md"} <= set(uris)
    assert "memory://reference/history/a.md" not in uris  # only pinned files are listed
    assert uris["memory://system/contacts.md"].mime_type == "text/markdown"
    assert uris["memory://system/contacts.md"].description == "People I know"
    assert {t.uri_template for t in templates} == {"memory://{path}", "memory://{path}@{rev}"}
    assert {p.name for p in prompts} == {"remember", "reflect", "load_memory"}


# -- every tool -----------------------------------------------------------------------------

def test_every_tool_over_stdio(mem: Path) -> None:
    patch = ("*** Begin Patch\n*** Update File: reference/history/b.md\n@@\n-beta\n+beta, patched\n"
             "*** End Patch\n")

    async def body(c: Client) -> dict[str, Any]:
        out: dict[str, Any] = {}

        async def step(name: str, args: dict[str, Any]) -> Any:
            result = await c.call_tool(name, args)
            assert not result.is_error, (name, text(result))
            out[name] = result
            return result

        await step("view", {"path": "system/contacts.md"})
        await step("create", {"path": "notes/tea.md", "description": "Tea", "file_text": "green\n",
                              "reason": "user likes tea"})
        await step("str_replace", {"file_path": "system/contacts.md", "old_str": "Tom", "new_str": "Thomas",
                                   "reason": "Tom prefers Thomas"})
        await step("insert", {"path": "notes/tea.md", "insert_line": 1, "insert_text": "oolong",
                              "reason": "another tea"})
        await step("update_description", {"path": "notes/tea.md", "description": "Teas the user likes",
                                          "reason": "clearer description"})
        await step("rename", {"old_path": "notes/tea.md", "new_path": "notes/drinks.md", "reason": "broader"})
        await step("apply_patch", {"input": patch, "reason": "patch b"})
        await step("delete", {"path": "reference/history/a.md", "reason": "obsolete"})
        await step("tree", {})
        await step("compile", {})
        out["ranged"] = await c.call_tool("view", {"file_path": "system/contacts.md", "view_range": [2, -1]})
        return out

    before = head(mem)
    out = call(stdio(mem), body)
    assert "Sarah: +1-555-0100" in text(out["view"])
    assert out["view"].structured_content is None  # reads are text, what the model reads
    for name, reason in (("create", "user likes tea"), ("str_replace", "Tom prefers Thomas"),
                         ("insert", "another tea"), ("update_description", "clearer description"),
                         ("rename", "broader"), ("apply_patch", "patch b"), ("delete", "obsolete")):
        data = out[name].structured_content
        assert set(data) == {"commit", "paths"} and data["paths"], (name, data)
        assert re.fullmatch(r"[0-9a-f]{40}", data["commit"])
        assert git("log", "-1", "--format=%s", data["commit"], cwd=mem).stdout.strip() == reason
        assert f"committed ({data['commit'][:7]})" in text(out[name])
    log = git("log", "--format=%s", f"{before}..HEAD", cwd=mem).stdout.split("\n")
    assert len([s for s in log if s]) == 7
    assert (mem / "notes/drinks.md").read_text() == memfile("Teas the user likes", "oolong\ngreen\n")
    assert "Thomas: +1-555-0199" in (mem / "system/contacts.md").read_text()
    assert "beta, patched" in (mem / "reference/history/b.md").read_text()
    assert not (mem / "reference/history/a.md").exists()
    assert "drinks.md" in text(out["tree"])
    assert "Thomas" in text(out["compile"]) and "<memory>" in text(out["compile"])
    assert text(out["ranged"]).splitlines()[0].split("\t")[1] == "Thomas: +1-555-0199"
    assert git("status", "--porcelain", cwd=mem).stdout == ""
    assert git("fsck", "--strict", cwd=mem).returncode == 0


def test_history_tools_search_log_show_diff_undo_restore(mem: Path) -> None:
    async def body(c: Client) -> dict[str, Any]:
        out: dict[str, Any] = {}
        edit = await c.call_tool("str_replace", {"path": "system/contacts.md", "old_string": "+1-555-0100",
                                                 "new_string": "+1-555-0101", "reason": "Sarah's new number"})
        out["edit"] = edit.structured_content["commit"]
        out["search"] = await c.call_tool("search", {"query": "sarah"})
        out["search_history"] = await c.call_tool("search", {"query": "0100", "history": True})
        out["log"] = await c.call_tool("log", {"file_path": "system/contacts.md"})
        out["show"] = await c.call_tool("show", {"path": "system/contacts.md@HEAD~1"})
        out["diff"] = await c.call_tool("diff", {})
        out["undo"] = await c.call_tool("undo", {"last": True, "reason": "wrong number after all"})
        await c.call_tool("delete", {"path": "reference/history/a.md", "reason": "tidy"})
        out["restore"] = await c.call_tool("restore", {"path": "reference/history/a.md", "rev": "HEAD~1",
                                                       "reason": "still needed"})
        out["undo_no_reason"] = await c.call_tool("undo", {"last": True})
        return out

    out = call(stdio(mem), body)
    for name in ("search", "search_history", "log", "show", "diff", "undo", "restore"):
        assert not out[name].is_error, (name, text(out[name]))
    assert out["search"].structured_content is None
    assert "system/contacts.md" in text(out["search"]).split("\n")[0]
    assert "0100" in text(out["search_history"])
    assert "Sarah's new number" in text(out["log"])
    assert "+1-555-0100" in text(out["show"])
    assert "+1-555-0101" in text(out["diff"])
    assert out["edit"][:7] in text(out["undo"])
    assert "+1-555-0100" in (mem / "system/contacts.md").read_text()
    assert (mem / "reference/history/a.md").read_text() == memfile("History A", "alpha\n")
    assert subject(mem) == "still needed"
    assert out["undo_no_reason"].is_error and "reason" in text(out["undo_no_reason"])


# -- refusals -------------------------------------------------------------------------------

def cli_error(repo: Path, *args: str) -> str:
    proc = memory(*args, cwd=repo)
    assert proc.returncode != 0
    return proc.stderr.strip().removeprefix("error: ")


@pytest.mark.parametrize("case", ["read_only", "jail", "no_reason", "not_found"])
def test_refusals_are_errors_with_the_cli_message_and_leave_the_repo(mem: Path, case: str) -> None:
    tool, args, cli = {
        "read_only": ("str_replace", {"path": "system/rules.md", "old_string": "Never", "new_string": "Always",
                                      "reason": "try"},
                      ("str_replace", "system/rules.md", "Never", "Always", "-m", "try")),
        "jail": ("create", {"path": "../outside.md", "description": "x", "file_text": "x", "reason": "escape"},
                 ("create", "../outside.md", "x", "-d", "x", "-m", "escape")),
        "no_reason": ("delete", {"path": "system/contacts.md", "reason": "  "},
                      ("delete", "system/contacts.md", "-m", "  ")),
        "not_found": ("str_replace", {"path": "system/contacts.md", "old_string": "Nobody", "new_string": "x",
                                      "reason": "r"},
                      ("str_replace", "system/contacts.md", "Nobody", "x", "-m", "r")),
    }[case]
    before = snapshot(mem)

    async def body(c: Client) -> Any:
        return await c.call_tool(tool, args)

    result = call(stdio(mem), body)
    assert result.is_error
    assert result.structured_content is None
    assert snapshot(mem) == before
    assert text(result) == cli_error(mem, *cli)
    assert snapshot(mem) == before


def test_dirty_tree_is_refused_and_left_alone(mem: Path) -> None:
    write(mem, "system/contacts.md", memfile("People I know", "half-made edit\n"))
    before = snapshot(mem)

    async def body(c: Client) -> Any:
        return await c.call_tool("create", {"path": "notes/x.md", "description": "x", "file_text": "x",
                                            "reason": "while dirty"})

    result = call(stdio(mem), body)
    assert result.is_error and "uncommitted changes" in text(result)
    assert text(result) == cli_error(mem, "create", "notes/x.md", "x", "-d", "x", "-m", "while dirty")
    assert snapshot(mem) == before


def test_outside_changes_are_adopted_only_when_the_server_is_told_to(mem: Path) -> None:
    """Issue 28: the option the SDK class has by default, off by default over MCP."""
    write(mem, "notes/by-hand.md", memfile("Written by a person", "typed in an editor\n"))

    async def body(c: Client) -> Any:
        return await c.call_tool("create", {"path": "notes/x.md", "description": "x", "file_text": "x",
                                            "reason": "after a person's edit"})

    assert call(stdio(mem), body).is_error  # off by default: refused as dirty
    result = call(stdio(mem, "--adopt-outside-changes"), body)
    assert not result.is_error, text(result)
    assert subject(mem) == "after a person's edit"
    adopted = git("log", "-1", "--format=%B", "HEAD~1", cwd=mem).stdout
    assert "Memory-Op: adopt" in adopted and "Memory-Path: notes/by-hand.md" in adopted
    assert git("status", "--porcelain", cwd=mem).stdout == ""


# -- resources ------------------------------------------------------------------------------

def test_resources_at_head_and_at_a_past_revision(mem: Path) -> None:
    old = head(mem)
    write(mem, "system/contacts.md", memfile("People I know", "Sarah: moved\n"))
    commit_all(mem, "sarah moved")
    write(mem, "system/contacts.md", memfile("People I know", "uncommitted\n"))  # never shown

    async def body(c: Client) -> Any:
        reads = {}
        for uri in ("memory://system/contacts.md", f"memory://system/contacts.md@{old}",
                    "memory://system/contacts.md@HEAD~1", "memory://reference/history/a.md",
                    "memory://compiled", "memory://tree"):
            reads[uri] = (await c.read_resource(uri)).contents[0]
        try:
            await c.read_resource("memory://system/missing.md")
        except Exception as exc:  # noqa: BLE001 - the SDK raises MCPError
            reads["missing"] = str(exc)
        prompt = await c.get_prompt("load_memory", {})
        return reads, prompt

    reads, prompt = call(stdio(mem), body)
    assert reads["memory://system/contacts.md"].text.endswith("Sarah: moved\n")
    assert reads[f"memory://system/contacts.md@{old}"].text.endswith("Tom: +1-555-0199\n")
    assert reads["memory://system/contacts.md@HEAD~1"].text == reads[f"memory://system/contacts.md@{old}"].text
    assert reads["memory://system/contacts.md"].mime_type == "text/markdown"
    assert reads["memory://reference/history/a.md"].text.endswith("alpha\n")
    assert "Sarah: moved" in reads["memory://compiled"].text and "uncommitted" not in reads["memory://compiled"].text
    assert "history" in reads["memory://tree"].text
    assert "does not exist" in reads["missing"]
    assert "Sarah: moved" in prompt.messages[0].content.text


# -- notifications --------------------------------------------------------------------------

def plain_commit(repo: Path) -> str:
    """A person's edit beside the server: plain git, through the installed hooks."""
    write(repo, "system/contacts.md", memfile("People I know", "Sarah: +1-555-0100\nAnn: +1-555-0123\n"))
    git("commit", "-qam", "add Ann", cwd=repo)
    return head(repo)


def test_listen_stream_gets_resource_updated_after_a_plain_git_commit(mem: Path) -> None:
    uri = "memory://system/contacts.md"

    async def body(c: Client) -> Any:
        async with c.listen(resource_subscriptions=[uri, "memory://compiled"]) as sub:
            await anyio.to_thread.run_sync(plain_commit, mem)
            seen = set()
            async for event in sub:
                seen.add(event.uri)
                if seen >= {uri, "memory://compiled"}:
                    break
        return seen, (await c.read_resource(uri)).contents[0].text

    seen, now = call(stdio(mem), body)
    assert seen == {uri, "memory://compiled"}
    assert "Ann" in now


def test_legacy_subscribe_gets_resource_updated_after_a_plain_git_commit(mem: Path) -> None:
    uri = "memory://system/contacts.md"
    send, receive = anyio.create_memory_object_stream[str](100)

    async def on_message(message: Any) -> None:
        if getattr(message, "method", "") == "notifications/resources/updated":
            await send.send(str(message.params.uri))

    async def body(c: Client) -> Any:
        assert c.protocol_version < "2026"
        assert c.server_capabilities.resources.subscribe is True
        with pytest.warns(Warning):
            await c.subscribe_resource(uri)
        await anyio.to_thread.run_sync(plain_commit, mem)
        return await receive.receive()

    assert call(stdio(mem), body, mode="legacy", message_handler=on_message) == uri


# -- HTTP -----------------------------------------------------------------------------------

@contextmanager
def http_server(repo: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[str]:
    proc = subprocess.Popen(["git", "memory", "mcp", "--http", "--port", "0", *args], cwd=repo,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})})
    try:
        line = proc.stderr.readline()  # the server says where it listens once the socket is bound
        match = re.search(r"serving (http://\S+)", line)
        assert match, line + proc.stderr.read() if proc.poll() is not None else line
        threading.Thread(target=proc.stderr.read, daemon=True).start()  # keep the pipe drained
        yield match.group(1)
    finally:
        proc.terminate()
        proc.wait(timeout=LIMIT)


def raw_post(url: str, headers: dict[str, str]) -> int:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
    request = urllib.request.Request(url, data=body, method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers})
    try:
        with urllib.request.urlopen(request, timeout=LIMIT) as answer:
            return answer.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_http_serves_tools_and_checks_origin(mem: Path) -> None:
    with http_server(mem) as url:
        assert url.startswith("http://127.0.0.1:")

        async def body(c: Client) -> Any:
            result = await c.call_tool("create", {"path": "notes/http.md", "description": "over http",
                                                  "file_text": "hello\n", "reason": "said over http"})
            return result, (await c.read_resource("memory://notes/http.md")).contents[0].text

        result, content = call(url, body)
        assert not result.is_error, text(result)
        assert content.endswith("hello\n")
        assert subject(mem) == "said over http"
        assert raw_post(url, {"Origin": "http://evil.example"}) == 403
        assert raw_post(url, {"Origin": "http://127.0.0.1:1234"}) != 403
        port = url.split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1]
        assert raw_post(url, {"Host": f"evil.example:{port}"}) == 403  # DNS rebinding
        assert raw_post(url, {"Host": f"localhost:{port}"}) != 403


def test_http_bearer_token(mem: Path) -> None:
    proc = memory("mcp", "--http", "--host", "192.0.2.1", "--port", "0", cwd=mem)
    assert proc.returncode == 2
    assert "GIT_MEMORY_MCP_TOKEN" in proc.stderr and proc.stderr.startswith("error: ")

    with http_server(mem, env={"GIT_MEMORY_MCP_TOKEN": "s3cret-token"}) as url:
        assert raw_post(url, {}) == 401
        assert raw_post(url, {"Authorization": "Bearer wrong"}) == 401
        assert raw_post(url, {"Authorization": "Bearer s3cret-token"}) not in (401, 403)

        async def main() -> Any:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            with anyio.fail_after(LIMIT):
                async with httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret-token"}) as http:
                    async with Client(streamable_http_client(url, http_client=http)) as c:
                        return await c.call_tool("view", {"path": "system/contacts.md"})

        assert "Sarah" in text(anyio.run(main))


# -- concurrency ----------------------------------------------------------------------------

def test_four_clients_and_a_cli_writer_all_land(mem: Path) -> None:
    per_writer = 4
    start = head(mem)
    with http_server(mem, env={"GIT_MEMORY_LOCK_TIMEOUT": "60"}) as url:
        failures: list[str] = []

        def cli_writer() -> None:
            for i in range(per_writer):
                proc = memory("create", f"cli/{i}.md", f"cli {i}", "-d", f"cli {i}", "-m", f"cli {i}",
                              cwd=mem, env={"GIT_MEMORY_LOCK_TIMEOUT": "60"})
                if proc.returncode:
                    failures.append(proc.stderr)

        async def client(n: int) -> None:
            async with Client(url) as c:
                for i in range(per_writer):
                    r = await c.call_tool("create", {"path": f"c{n}/{i}.md", "description": f"c{n} {i}",
                                                     "file_text": f"{n}/{i}\n", "reason": f"client {n} #{i}"})
                    if r.is_error:
                        failures.append(text(r))

        async def main() -> None:
            with anyio.fail_after(LIMIT * 4):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(anyio.to_thread.run_sync, cli_writer)
                    for n in range(4):
                        tg.start_soon(client, n)

        anyio.run(main)
    assert failures == []
    subjects = git("log", "--format=%s", f"{start}..HEAD", cwd=mem).stdout.split()
    assert len(git("rev-list", f"{start}..HEAD", cwd=mem).stdout.split()) == 5 * per_writer, subjects
    files = git("ls-files", cwd=mem).stdout.split()
    assert all(f"c{n}/{i}.md" in files for n in range(4) for i in range(per_writer))
    assert all(f"cli/{i}.md" in files for i in range(per_writer))
    assert git("status", "--porcelain", cwd=mem).stdout == ""
    assert git("fsck", "--strict", "--no-dangling", cwd=mem).returncode == 0
    assert memory("check", "--all", cwd=mem).returncode == 0


# -- several agents -------------------------------------------------------------------------

def test_root_serves_several_agents_selected_per_call(tmp_path: Path) -> None:
    root = tmp_path / "agents"
    for agent in ("ada", "bob"):
        assert memory("init", str(root / agent / "memory"), "--agent-id", agent, cwd=tmp_path).returncode == 0

    async def body(c: Client) -> Any:
        made = await c.call_tool("create", {"agent": "bob", "path": "notes/x.md", "description": "x",
                                            "file_text": "for bob\n", "reason": "bob learns"})
        missing = await c.call_tool("view", {"path": "notes/x.md"})
        other = await c.call_tool("view", {"agent": "ada", "path": "notes/x.md"})
        uris = [r.uri for r in (await c.list_resources()).resources]
        read = (await c.read_resource("memory://bob/notes/x.md")).contents[0].text
        return made, missing, other, uris, read

    made, missing, other, uris, read = call(stdio(tmp_path, "--root", str(root)), body)
    assert not made.is_error, text(made)
    assert subject(root / "bob" / "memory") == "bob learns"
    assert missing.is_error and "name the agent" in text(missing)
    assert other.is_error and "No such file" in text(other)
    assert "memory://ada/compiled" in uris and "memory://bob/compiled" in uris
    assert read.endswith("for bob\n")


# -- install and the missing extra ------------------------------------------------------------

def test_install_writes_client_configuration(mem: Path, tmp_path: Path, hermetic: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    dry = memory("--memory-dir", str(mem), "mcp", "install", "claude-code", "--dry-run", cwd=project)
    assert dry.returncode == 0, dry.stderr
    assert "would write" in dry.stdout and not (project / ".mcp.json").exists()

    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}}))
    done = memory("--memory-dir", str(mem), "mcp", "install", "claude-code", cwd=project)
    assert done.returncode == 0, done.stderr
    config = json.loads((project / ".mcp.json").read_text())
    assert config["mcpServers"]["other"] == {"command": "x"}
    server = config["mcpServers"]["memory"]
    assert server["args"][-3:] == ["--memory-dir", str(mem), "mcp"]
    assert "claude mcp add --scope project memory --" in done.stdout

    codex = hermetic / ".codex" / "config.toml"
    codex.parent.mkdir()
    codex.write_text('model = "o3"\n\n[mcp_servers.memory]\ncommand = "old"\n\n[mcp_servers.memory.env]\nX = "1"\n'
                     '\n[mcp_servers.web]\ncommand = "web"\n')
    done = memory("--memory-dir", str(mem), "mcp", "install", "codex", cwd=project)
    assert done.returncode == 0, done.stderr
    parsed = toml_loads(codex.read_text())
    assert parsed["model"] == "o3" and parsed["mcp_servers"]["web"] == {"command": "web"}
    assert parsed["mcp_servers"]["memory"]["args"][-3:] == ["--memory-dir", str(mem), "mcp"]
    assert parsed["mcp_servers"]["memory"]["env"] == {"X": "1"}  # the user's own, kept
    assert parsed["mcp_servers"]["memory"]["required"] is True

    snippet = memory("--memory-dir", str(mem), "mcp", "install", "json", cwd=project)
    assert json.loads(snippet.stdout)["mcpServers"]["memory"]["args"][-1] == "mcp"

    # The configuration starts a server that answers.
    entry = config["mcpServers"]["memory"]

    async def body(c: Client) -> Any:
        return await c.call_tool("view", {"path": "system/contacts.md"})

    params = StdioServerParameters(command=entry["command"], args=entry["args"], cwd=str(tmp_path),
                                   env=dict(os.environ))
    assert "Sarah" in text(call(params, body))


def test_without_the_sdk_one_line_names_the_extra(mem: Path) -> None:
    code = ("import sys; sys.modules['mcp'] = None\n"
            "from gitmemfs.cli.memory import main\nsys.exit(main(['mcp']))\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=mem, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(LIB)})
    assert proc.returncode == 4
    assert proc.stderr == ("error: mcp: the MCP SDK is not installed; pip install '.[mcp]' in your git-memfs "
                           "checkout\n")
    assert proc.stdout == ""


def test_plain_git_memory_does_not_import_the_sdk(mem: Path) -> None:
    code = "import sys\nfrom gitmemfs.cli import memory\nmemory.build_parser()\nprint('mcp' in sys.modules)\n"
    proc = subprocess.run([sys.executable, "-c", code], cwd=mem, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(LIB)})
    assert proc.stdout.strip() == "False", proc.stderr


def test_stdio_stdout_carries_only_protocol_messages(mem: Path) -> None:
    """Raw JSON-RPC over the pipe: every line on stdout is a protocol message, even when a
    write runs the installed hooks and a call fails; logs go to stderr."""
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "create", "arguments": {
            "path": "notes/raw.md", "description": "raw", "file_text": "raw\n", "reason": "raw pipe"}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "view", "arguments": {
            "path": "notes/missing.md"}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "no_such_tool", "arguments": {}}},
    ]
    proc = subprocess.Popen(["git", "memory", "mcp"], cwd=mem, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    answers: dict[int, Any] = {}
    try:
        for request in requests:
            proc.stdin.write(json.dumps(request) + "\n")
            proc.stdin.flush()
            if "id" not in request:
                continue
            while request["id"] not in answers:
                line = proc.stdout.readline()
                assert line, proc.stderr.read()
                message = json.loads(line)  # anything else on stdout fails here
                assert message["jsonrpc"] == "2.0"
                if "id" in message:
                    answers[message["id"]] = message
    finally:
        proc.stdin.close()
        proc.wait(timeout=LIMIT)
    assert answers[1]["result"]["serverInfo"]["name"] == "git-memory"
    assert answers[2]["result"]["structuredContent"]["paths"] == ["notes/raw.md"]
    assert subject(mem) == "raw pipe"
    assert answers[3]["result"]["isError"] is True
    assert "No such file" in answers[3]["result"]["content"][0]["text"]
    assert "error" in answers[4] or answers[4]["result"]["isError"] is True
    assert proc.stdout.read() == ""
