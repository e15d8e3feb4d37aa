"""`git memory mcp` on the wire: what a client that is not ours meets. Per-agent tokens
under --root, one agent's odd content against the others, token errors, URIs with
awkward names, argument checking, the raw stdio pipe, and the install helpers."""
from __future__ import annotations

import http.client
import json
import stat
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from conftest import git, head, memory, snapshot, toml_loads

pytest.importorskip("mcp.server.mcpserver", reason="the [mcp] extra is not installed")

import anyio
from mcp import Client
from test_mcp import LIMIT, call, http_server, scrub_mcp_env, stdio, subject, text  # noqa: F401


def agents_root(tmp_path: Path, *names: str, layout: str = "plain") -> Path:
    root = tmp_path / "agents"
    for agent in names:
        proc = memory("init", str(root / agent), "--layout", layout, "--agent-id", agent, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
    return root


def anthropic_create(repo: Path, path: str, body: str = "ref: refs/heads/main\n") -> None:
    call_json = json.dumps({"command": "create", "path": f"/memories/{path}", "file_text": body})
    proc = memory("call", "--schema", "anthropic", call_json, cwd=repo)
    assert proc.returncode == 0 and json.loads(proc.stdout)["ok"], proc.stdout + proc.stderr


def over_http(url: str, token: str | None, body: Any) -> Any:
    async def main() -> Any:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        headers = {"Authorization": f"Bearer {token}"} if token else {}
        with anyio.fail_after(LIMIT):
            async with httpx2.AsyncClient(headers=headers) as http:
                async with Client(streamable_http_client(url, http_client=http)) as c:
                    return await body(c)
    return anyio.run(main)


def raw(url: str, path: str = "", headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
    base = url.rsplit("/mcp", 1)[0]
    request = urllib.request.Request(base + path if path else url, data=None if path else body,
                                     method="GET" if path else "POST", headers={
                                         "Content-Type": "application/json",
                                         "Accept": "application/json, text/event-stream", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=LIMIT) as answer:
            return answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


# -- one agent never breaks the others (issue 24, item 8) ------------------------------------

def test_bare_repo_lookalike_in_one_agent_breaks_no_listing(tmp_path: Path) -> None:
    """Three ordinary Anthropic-schema creates make alice/memory look like a bare repository;
    every client must still list and read every agent, alice's real memory included."""
    root = agents_root(tmp_path, "alice", "bob")
    for path in ("memory/HEAD", "memory/objects/x", "memory/refs/x"):
        anthropic_create(root / "alice", path)
    anthropic_create(root / "bob", "notes.md", "bob's notes\n")

    async def body(c: Client) -> Any:
        uris = [r.uri for r in (await c.list_resources()).resources]
        alice = (await c.read_resource("memory://alice/memory/HEAD")).contents[0].text
        made = await c.call_tool("create", {"agent": "alice", "path": "notes.md", "file_text": "still mine\n",
                                            "description": "n", "reason": "alice writes on"})
        assert not made.is_error, text(made)
        bob = (await c.read_resource("memory://bob/notes.md")).contents[0].text
        return uris, alice, bob

    uris, alice, bob = call(stdio(tmp_path, "--root", str(root)), body)
    assert {"memory://alice/compiled", "memory://bob/compiled"} <= set(uris)
    assert alice == "ref: refs/heads/main\n"
    assert subject(root / "alice") == "alice writes on"
    assert bob == "bob's notes\n"


def test_an_unreadable_agent_is_left_out_not_fatal(tmp_path: Path) -> None:
    root = agents_root(tmp_path, "alice", "bob")
    (root / "alice" / ".git" / "HEAD").write_text("garbage\n")  # alice's repository is broken

    async def body(c: Client) -> Any:
        return [r.uri for r in (await c.list_resources()).resources]

    uris = call(stdio(tmp_path, "--root", str(root)), body)
    assert "memory://bob/compiled" in uris and not any(u.startswith("memory://alice/") for u in uris)


@pytest.mark.parametrize("layout", ["letta", "letta-root", "plain"])
def test_tree_and_compile_are_what_the_cli_prints_in_every_layout(tmp_path: Path, layout: str) -> None:
    root = agents_root(tmp_path, "ada", layout=layout)
    repo = root / "ada"
    if layout == "letta-root":  # a folder holds memory only with its own index (Letta 0.32)
        anthropic_create(repo, "notes/MEMORY.md", "# Notes\n")
    anthropic_create(repo, "notes/plans.md", "ship it\n")

    async def body(c: Client) -> Any:
        return {name: text(await c.call_tool(name, {})) for name in ("tree", "compile")} | {
            "tree_resource": (await c.read_resource("memory://tree")).contents[0].text,
            "listed": {r.uri for r in (await c.list_resources()).resources}}

    seen = call(stdio(repo), body)
    cli_tree = memory("tree", cwd=repo).stdout.rstrip("\n")
    pinned = {u for u in seen["listed"] if u not in ("memory://tree", "memory://compiled")}
    assert pinned == {"letta": {"memory://system/human.md", "memory://system/persona.md"},
                      "letta-root": {"memory://MEMORY.md", "memory://human.md", "memory://persona.md"},
                      "plain": set()}[layout], pinned
    assert seen["tree"] == cli_tree and seen["tree_resource"] == cli_tree
    assert seen["compile"] == memory("compile", cwd=repo).stdout.rstrip("\n")


# -- a token per agent ----------------------------------------------------------------------

ALICE, BOB, ADMIN = "alice-token-0123456789", "bob-token-0123456789ab", "admin-token-0123456789"


def tokens_file(tmp_path: Path, mode: int = 0o600) -> Path:
    path = tmp_path / "tokens"
    path.write_text(f"# agent token\nalice {ALICE}\nbob {BOB}\n* {ADMIN}\n")
    path.chmod(mode)
    return path


def test_a_token_sees_and_touches_only_its_agents(tmp_path: Path) -> None:
    root = agents_root(tmp_path, "alice", "bob")
    anthropic_create(root / "bob", "secret.md", "bob's secret\n")
    bob_before = snapshot(root / "bob")

    with http_server(tmp_path, "--root", str(root), "--tokens", str(tokens_file(tmp_path))) as url:
        async def as_alice(c: Client) -> Any:
            out: dict[str, Any] = {}
            out["uris"] = [r.uri for r in (await c.list_resources()).resources]
            out["write_bob"] = await c.call_tool("create", {"agent": "bob", "path": "x.md", "file_text": "x",
                                                            "description": "x", "reason": "not mine"})
            out["view_bob"] = await c.call_tool("view", {"agent": "bob", "path": "secret.md"})
            try:
                await c.read_resource("memory://bob/secret.md")
            except Exception as exc:  # noqa: BLE001 - the SDK raises MCPError
                out["read_bob"] = str(exc)
            try:
                await c.get_prompt("load_memory", {"agent": "bob"})
            except Exception as exc:  # noqa: BLE001
                out["prompt_bob"] = str(exc)
            try:
                async with c.listen(resource_subscriptions=["memory://bob/compiled"]):
                    out["listen_bob"] = "opened"
            except Exception as exc:  # noqa: BLE001
                out["listen_bob"] = str(exc)
            out["own"] = await c.call_tool("create", {"path": "mine.md", "file_text": "mine\n", "description": "m",
                                                      "reason": "alice's own"})  # her one agent is implied
            return out

        async def as_admin(c: Client) -> Any:
            return [r.uri for r in (await c.list_resources()).resources]

        alice = over_http(url, ALICE, as_alice)
        admin = over_http(url, ADMIN, as_admin)
        assert raw(url)[0] == 401
    assert alice["uris"] and all(u.startswith("memory://alice/") for u in alice["uris"]), alice["uris"]
    for key in ("write_bob", "view_bob"):
        assert alice[key].is_error and "may not use agent bob" in text(alice[key]), text(alice[key])
        assert "secret" not in text(alice[key])
    for key in ("read_bob", "prompt_bob", "listen_bob"):
        assert "may not use agent bob" in alice[key], (key, alice[key])
    assert not alice["own"].is_error, text(alice["own"])
    assert subject(root / "alice") == "alice's own"
    assert snapshot(root / "bob") == bob_before
    assert {"memory://alice/compiled", "memory://bob/compiled"} <= set(admin)


def test_tokens_file_must_be_private_and_needs_root(tmp_path: Path) -> None:
    root = agents_root(tmp_path, "alice")
    loose = tokens_file(tmp_path, 0o644)
    proc = memory("mcp", "--http", "--port", "0", "--root", str(root), "--tokens", str(loose), cwd=tmp_path)
    assert proc.returncode == 2 and f"chmod 600 {loose}" in proc.stderr
    assert ALICE not in proc.stderr + proc.stdout
    loose.chmod(stat.S_IRUSR | stat.S_IWUSR)
    proc = memory("mcp", "--http", "--port", "0", "--tokens", str(loose), cwd=root / "alice")
    assert proc.returncode == 2 and "--root" in proc.stderr


def test_token_errors_say_what_to_do_and_oauth_discovery_is_404(tmp_path: Path, mem: Path) -> None:
    with http_server(mem, env={"GIT_MEMORY_MCP_TOKEN": "s3cret-token-0123456789"}) as url:
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            status, answer_headers, body = raw(url, headers=headers)
            assert status == 401
            challenge = {k.lower(): v for k, v in answer_headers.items()}["www-authenticate"]
            assert challenge.startswith('Bearer realm="git-memory", error="invalid_token", error_description="')
            assert "Authorization: Bearer <token>" in challenge and "GIT_MEMORY_MCP_TOKEN" in challenge
            assert json.loads(body)["error"] == "invalid_token"
        for path in ("/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp",
                     "/.well-known/oauth-authorization-server"):
            assert raw(url, path)[0] == 404, path


def test_the_token_never_reaches_what_the_server_runs(mem: Path) -> None:
    """A commit through the server runs hooks (and may start a dream) in the server's
    environment; none of them may read the bearer token from it."""
    token = "s3cret-token-0123456789"
    hooks = Path(git("rev-parse", "--git-path", "hooks", cwd=mem).stdout.strip())
    hooks = hooks if hooks.is_absolute() else mem / hooks
    seen = mem.parent / "hook-env.txt"
    local = hooks / "post-commit.local"
    local.write_text(f"#!/bin/sh\nenv > '{seen}'\n")
    local.chmod(0o755)
    with http_server(mem, env={"GIT_MEMORY_MCP_TOKEN": token}) as url:
        async def body(c: Client) -> Any:
            return await c.call_tool("create", {"path": "notes/t.md", "description": "t", "file_text": "t\n",
                                                "reason": "a commit runs the hooks"})

        made = over_http(url, token, body)
    assert not made.is_error, text(made)
    dumped = seen.read_text()
    assert "PATH=" in dumped  # the hook ran, with an environment
    assert token not in dumped and "GIT_MEMORY_MCP_TOKEN" not in dumped


# -- URIs -----------------------------------------------------------------------------------

NAMES = ("system/my notes.md", "system/café.md", "system/user@host.md", "system/a#b.md")
ENCODED = ("memory://system/my%20notes.md", "memory://system/caf%C3%A9.md", "memory://system/user%40host.md",
           "memory://system/a%23b.md")


def test_uris_are_percent_encoded_and_round_trip(mem: Path) -> None:
    async def body(c: Client) -> Any:
        for n, name in enumerate(NAMES):
            made = await c.call_tool("create", {"path": name, "description": f"odd name {n}",
                                                "file_text": f"body {n}\n", "reason": f"odd {n}"})
            assert not made.is_error, text(made)
        listed = [r.uri for r in (await c.list_resources()).resources]
        reads = {u: (await c.read_resource(u)).contents[0].text for u in ENCODED}
        past = (await c.read_resource(ENCODED[2] + "@HEAD~1")).contents[0].text
        return listed, reads, past

    listed, reads, past = call(stdio(mem), body)
    assert set(ENCODED) <= set(listed), listed
    for n, uri in enumerate(ENCODED):
        assert reads[uri].endswith(f"body {n}\n"), (uri, reads[uri])
    assert past.endswith("body 2\n")  # the file's @ is %40; the revision's @ splits


# -- arguments, errors ----------------------------------------------------------------------

def test_arguments_are_checked_with_the_names_and_types_listed(mem: Path) -> None:
    before = snapshot(mem)

    async def body(c: Client) -> dict[str, Any]:
        out = {}
        out["unknown"] = await c.call_tool("str_replace", {"path": "system/contacts.md", "old": "Tom",
                                                           "new_string": "T", "reason": "r"})
        out["missing"] = await c.call_tool("str_replace", {"path": "system/contacts.md", "old_string": "Tom",
                                                           "new_string": "T"})
        out["float"] = await c.call_tool("insert", {"path": "system/contacts.md", "insert_line": 1.5,
                                                    "insert_text": "x", "reason": "r"})
        out["range"] = await c.call_tool("view", {"path": "system/contacts.md", "view_range": "1-3"})
        try:
            await c.call_tool("no_such_tool", {})
        except Exception as exc:  # noqa: BLE001 - MCPError
            out["tool"] = exc
        try:
            await c.get_prompt("no_such_prompt", {})
        except Exception as exc:  # noqa: BLE001
            out["prompt"] = exc
        try:
            await c.get_prompt("remember", {})
        except Exception as exc:  # noqa: BLE001
            out["prompt_arg"] = exc
        return out

    out = call(stdio(mem), body)
    assert text(out["unknown"]) == ("memory str_replace: unknown argument 'old'; str_replace takes path, "
                                    "old_string, new_string, reason, replace_all, propose")
    assert text(out["missing"]) == "memory str_replace: missing required argument 'reason'"
    assert text(out["float"]) == "memory insert: 'insert_line' must be a whole number, not 1.5"
    assert "'view_range' must be [first, last]" in text(out["range"])
    assert all(out[k].is_error for k in ("unknown", "missing", "float", "range"))
    assert out["tool"].error.code == -32602 and "unknown tool 'no_such_tool'; tools: view" in str(out["tool"])
    assert out["prompt"].error.code == -32602 and "prompts: remember, reflect, load_memory" in str(out["prompt"])
    assert out["prompt_arg"].error.code == -32602 and "'fact'" in str(out["prompt_arg"])
    assert snapshot(mem) == before


def raw_stdio(repo: Path, lines: list[str]) -> tuple[list[dict[str, Any]], str]:
    """Write every line, close stdin at once, read every answer: the client that exits early."""
    proc = subprocess.run(["git", "memory", "mcp"], cwd=repo, input="".join(line + "\n" for line in lines),
                          capture_output=True, text=True, timeout=LIMIT)
    return [json.loads(line) for line in proc.stdout.splitlines()], proc.stderr


INIT = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
INITIALIZED = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})


def tool_call(n: int, name: str, args: dict[str, Any]) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": name, "arguments": args}})


def test_a_call_written_just_before_stdin_closes_is_answered(mem: Path) -> None:
    answers, stderr = raw_stdio(mem, [INIT, INITIALIZED, tool_call(2, "create", {
        "path": "notes/last.md", "description": "last", "file_text": "said last\n", "reason": "then hung up"})])
    by_id = {a.get("id"): a for a in answers}
    assert by_id[2]["result"]["structuredContent"]["paths"] == ["notes/last.md"]
    assert by_id[2]["result"]["structuredContent"]["commit"] == head(mem)
    assert subject(mem) == "then hung up"
    assert stderr == ""


def test_not_json_is_a_parse_error_and_a_refusal_is_quiet(mem: Path) -> None:
    before = snapshot(mem)
    answers, stderr = raw_stdio(mem, [INIT, INITIALIZED, "this is not json", '{"jsonrpc": "2.0", "id": 7, "id": 8, '
                                      '"method": "ping"}',
                                      tool_call(3, "str_replace", {"path": "system/rules.md", "old_string": "Never",
                                                                   "new_string": "Always", "reason": "try"}),
                                      json.dumps({"jsonrpc": "2.0", "id": 4, "method": "prompts/get",
                                                  "params": {"name": "nope"}}),
                                      json.dumps({"jsonrpc": "2.0", "id": 5, "method": "resources/read",
                                                  "params": {"uri": "memory://system/missing.md"}})])
    errors = [a for a in answers if a.get("id") is None]
    assert [e["error"]["code"] for e in errors] == [-32700, -32600]
    refused = next(a for a in answers if a.get("id") == 3)["result"]
    assert refused["isError"] is True and "read_only" in refused["content"][0]["text"]
    assert "structuredContent" not in refused
    by_id = {a.get("id"): a for a in answers}
    assert by_id[4]["error"]["code"] == -32602 and by_id[5]["error"]["code"] == -32602
    assert stderr == ""  # refusals are answers, not tracebacks
    assert snapshot(mem) == before


def post(url: str, body: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    """One JSON-RPC message POSTed as any client sends it, the body exactly as given."""
    request = urllib.request.Request(url, data=body.encode(), method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers})
    try:
        with urllib.request.urlopen(request, timeout=LIMIT) as answer:
            return answer.status, {k.lower(): v for k, v in answer.headers.items()}, answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read()


@pytest.mark.parametrize("tokens", [False, True])
def test_http_refuses_a_key_given_twice_as_stdio_does(mem: Path, tokens: bool) -> None:
    """The SDK's parser takes the last of two equal keys: a tools/call whose arguments
    name two paths (nested) would create the second, and `"method"` twice would run
    whichever came last. Over HTTP, as on stdio, each is JSON-RPC's -32600 and nothing
    reaches the tools; the session goes on."""
    env = {"GIT_MEMORY_MCP_TOKEN": "s3cret-token"} if tokens else None
    auth = {"Authorization": "Bearer s3cret-token", "Content-Type": "application/json; charset=utf-8"} if tokens else {}
    with http_server(mem, env=env) as url:
        def send(body: str, session: str | None = None) -> tuple[int, dict[str, str], bytes]:
            return post(url, body, {**auth, **({"Mcp-Session-Id": session} if session else {})})

        status, headers, _ = send(INIT)
        assert status == 200, status
        session = headers["mcp-session-id"]
        assert send(INITIALIZED, session)[0] == 202
        before = snapshot(mem)
        nested = ('{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "create", "arguments": '
                  '{"path": "notes/a.md", "path": "notes/b.md", "description": "d", "file_text": "x\\n", '
                  '"reason": "which path?"}}}')
        top = '{"jsonrpc": "2.0", "id": 3, "method": "ping", "method": "tools/call", "params": {"name": "view", ' \
              '"arguments": {"path": "system/contacts.md"}}}'
        for body, key in ((nested, "path"), (top, "method")):
            status, headers, answer = send(body, session)
            assert status == 400 and headers["content-type"] == "application/json", (status, answer)
            error = json.loads(answer)
            assert error["jsonrpc"] == "2.0" and error["id"] is None, error
            assert error["error"] == {"code": -32600, "message": f"Invalid Request: the key {key!r} appears twice"}
        # The same body in chunks, the second key in the last one: the whole body is judged.
        where = urllib.parse.urlsplit(url)
        conn = http.client.HTTPConnection(where.hostname, where.port, timeout=LIMIT)
        pieces = [nested[:40].encode(), nested[40:90].encode(), nested[90:].encode()]
        conn.request("POST", where.path, body=iter(pieces), encode_chunked=True, headers={
            "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
            "Mcp-Session-Id": session, **auth})
        chunked = conn.getresponse()
        assert chunked.status == 400 and json.loads(chunked.read())["error"]["code"] == -32600
        conn.close()
        assert snapshot(mem) == before and not (mem / "notes" / "b.md").exists()
        status, _, answer = send('{"jsonrpc": "2.0", "id": 4, "method": "ping"', session)
        assert status == 400 and json.loads(answer)["error"]["code"] == -32700, answer
        status, _, answer = send(tool_call(5, "create", {"path": "notes/b.md", "description": "d", "file_text": "x\n",
                                                         "reason": "one path"}), session)
        assert status == 200 and b'"isError":false' in answer, answer
        assert subject(mem) == "one path"


# -- install --------------------------------------------------------------------------------

def test_install_from_inside_the_memory_writes_to_the_enclosing_project(tmp_path: Path, hermetic: Path) -> None:
    project = tmp_path / "project"
    git("init", "-q", str(project), cwd=tmp_path)
    assert memory("init", str(project / ".memory"), cwd=tmp_path).returncode == 0
    inside = project / ".memory"
    before = snapshot(inside)
    done = memory("mcp", "install", "claude-code", cwd=inside)
    assert done.returncode == 0, done.stderr
    assert "went to the project that encloses it" in done.stdout
    entry = json.loads((project / ".mcp.json").read_text())["mcpServers"]["memory"]
    assert entry["args"][-3:] == ["--memory-dir", str(inside), "mcp"]
    assert snapshot(inside) == before and not (inside / ".mcp.json").exists()
    assert git("status", "--porcelain", cwd=inside).stdout == ""
    assert memory("create", "notes/after.md", "x", "-d", "x", "-m", "still writable", cwd=inside).returncode == 0

    lone = tmp_path / "lone"
    assert memory("init", str(lone), cwd=tmp_path).returncode == 0
    before = snapshot(lone)
    refused = memory("mcp", "install", "claude-code", cwd=lone)
    assert refused.returncode == 1 and "inside the memory" in refused.stderr and "--scope user" in refused.stderr
    refused = memory("mcp", "install", "codex", "--scope", "project", cwd=lone / "system")
    assert refused.returncode == 1 and "inside the memory" in refused.stderr
    assert snapshot(lone) == before


def test_install_http_entries_and_keeps_a_users_additions(tmp_path: Path, mem: Path, hermetic: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"memory": {
        "command": "old", "args": [], "env": {"MINE": "1"}, "timeout": 5}}}))
    done = memory("--memory-dir", str(mem), "mcp", "install", "claude-code", cwd=project)
    assert done.returncode == 0, done.stderr
    entry = json.loads((project / ".mcp.json").read_text())["mcpServers"]["memory"]
    assert entry["env"] == {"MINE": "1"} and entry["timeout"] == 5 and entry["type"] == "stdio"
    done = memory("mcp", "install", "claude-code", "--http", "http://127.0.0.1:8765/mcp", cwd=project)
    assert done.returncode == 0, done.stderr
    entry = json.loads((project / ".mcp.json").read_text())["mcpServers"]["memory"]
    assert entry == {"type": "http", "url": "http://127.0.0.1:8765/mcp", "timeout": 5,
                     "headers": {"Authorization": "Bearer ${GIT_MEMORY_MCP_TOKEN}"}}

    codex = hermetic / ".codex" / "config.toml"
    codex.parent.mkdir()
    codex.write_text('model = "o3"\n\n[mcp_servers.memory]\ncommand = "old"\ntool_timeout_sec = 99\n\n'
                     '[mcp_servers.memory.env]\nX = "1"\n\n[mcp_servers.web]\ncommand = "web"\n')
    done = memory("--memory-dir", str(mem), "mcp", "install", "codex", cwd=project)
    assert done.returncode == 0, done.stderr
    server = toml_loads(codex.read_text())["mcp_servers"]
    assert server["memory"]["args"][-3:] == ["--memory-dir", str(mem), "mcp"]
    assert server["memory"]["required"] is True and server["memory"]["startup_timeout_sec"] >= 10
    assert server["memory"]["env"] == {"X": "1"} and server["memory"]["tool_timeout_sec"] == 99
    assert server["web"] == {"command": "web"}
    done = memory("mcp", "install", "codex", "--http", "http://127.0.0.1:8765/mcp", cwd=project)
    assert done.returncode == 0, done.stderr
    server = toml_loads(codex.read_text())["mcp_servers"]["memory"]
    assert server["url"] == "http://127.0.0.1:8765/mcp" and "command" not in server and "args" not in server
    assert server["bearer_token_env_var"] == "GIT_MEMORY_MCP_TOKEN" and server["env"] == {"X": "1"}
    assert "s3cret" not in codex.read_text()
