"""`git memory serve`'s one port for everything: /mcp and the review page beside git, with
the same keys. The real server on 127.0.0.1 (bin/), the official MCP Python SDK client and
the TypeScript SDK client (from npm, tests/npmkit.py), headless Chromium for the page.

What a key may do is the same over every door: agent A's key never reaches B's memory
(not in a listing, a read, a call, a resource), a read key writes nothing, a wrong key is
refused with the server's words, and an agent's key does not open the page. A change made
over /mcp lands in the bare repository through its gate, so a git client pulls it."""
from __future__ import annotations

import json
import os
import re
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import test_serve
from npmkit import npm_package
from test_serve import Served, bearer, commit, get, note

from conftest import git

pytest.importorskip("mcp.client.streamable_http", reason="the [mcp] extra is not installed")
anyio = pytest.importorskip("anyio")
served = test_serve.served  # the same fixture: `git memory serve` from bin/ on 127.0.0.1

HERE = Path(__file__).resolve().parent
LIMIT = 60


def seeded(served: Served, tmp_path: Path, agent: str, key: str, body: str) -> Path:
    """A clone of `agent`'s memory (made on first use) holding one more note, pushed."""
    work = tmp_path / f"clone-{agent}"
    git("clone", "-q", served.letta(agent), str(work), cwd=tmp_path, env=bearer(key))
    commit(work, "system/people.md", note("People I know", body), f"{agent}: people")
    git("push", "-q", "origin", "HEAD", cwd=work, env=bearer(key))
    return work


def text(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def _session(url: str, key: str, act: Any) -> Any:
    import httpx2
    from mcp.client import Client
    from mcp.client.streamable_http import streamable_http_client

    with anyio.fail_after(LIMIT):
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}) as http:
            async with Client(streamable_http_client(url, http_client=http)) as c:
                return await act(c)


def session(url: str, key: str, act: Any) -> Any:
    return anyio.run(_session, f"{url}/mcp", key, act)


def post(url: str, headers: dict[str, str], message: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
    return get(f"{url}/mcp", {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                              **headers}, json.dumps(message).encode())


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


# -- /mcp with the Python SDK ---------------------------------------------------------------

def test_python_sdk_client_reaches_only_the_memory_its_key_names(served: Served, tmp_path: Path) -> None:
    ka, kb = served.key("agent-a"), served.key("agent-b")
    work_a = seeded(served, tmp_path, "agent-a", ka, "Sarah: likes tea\n")
    seeded(served, tmp_path, "agent-b", kb, "Bob's secret: plays the oboe\n")

    async def as_a(c: Any) -> dict[str, Any]:
        seen = await c.call_tool("view", {"path": "system/people.md"})  # the agent is the key's own
        made = await c.call_tool("str_replace", {"path": "system/people.md", "old_string": "tea",
                                                 "new_string": "green tea", "reason": "a: tea is green"})
        theirs = await c.call_tool("view", {"path": "system/people.md", "agent": "agent-b"})
        listed = [str(r.uri) for r in (await c.list_resources()).resources]
        try:
            await c.read_resource("memory://agent-b/system/people.md")
            stolen = None
        except Exception as exc:  # noqa: BLE001 - the SDK raises the server's JSON-RPC error
            stolen = str(exc)
        return {"seen": text(seen), "made": made, "theirs": theirs, "listed": listed, "stolen": stolen}

    out = session(served.url, ka, as_a)
    assert "Sarah: likes tea" in out["seen"]
    assert not out["made"].is_error, text(out["made"])
    assert out["theirs"].is_error and "key agent-a may not read memory agent-b" in text(out["theirs"])
    assert "oboe" not in text(out["theirs"])
    assert out["listed"] and all(u.startswith("memory://agent-a/") for u in out["listed"]), out["listed"]
    assert out["stolen"] and "key agent-a may not read memory agent-b" in out["stolen"]

    # The change landed in the bare repository, by the key's id, and a git client pulls it.
    bare = served.bare("agent-a")
    assert git("log", "-1", "--format=%s|%an", "main", cwd=bare).stdout.strip() == "a: tea is green|agent-a"
    git("pull", "-q", "--ff-only", cwd=work_a, env=bearer(ka))
    assert "Sarah: likes green tea" in (work_a / "system/people.md").read_text()
    git("fsck", "--strict", "--no-dangling", cwd=bare)
    assert "oboe" in git("show", "main:system/people.md", cwd=served.bare("agent-b")).stdout  # B's untouched


def test_a_read_key_reads_over_mcp_and_writes_nothing(served: Served, tmp_path: Path) -> None:
    owner = served.key("agent-r")
    reader = served.key("auditor", "--read", "agent-r")
    seeded(served, tmp_path, "agent-r", owner, "Ann: owns a boat\n")
    before = git("rev-parse", "main", cwd=served.bare("agent-r")).stdout

    async def as_reader(c: Any) -> tuple[Any, Any]:
        return (await c.call_tool("view", {"path": "system/people.md"}),
                await c.call_tool("create", {"path": "notes/x.md", "description": "x", "file_text": "x\n",
                                             "reason": "auditor writes"}))

    seen, wrote = session(served.url, reader, as_reader)
    assert "Ann: owns a boat" in text(seen)
    assert wrote.is_error and "key auditor may not write memory agent-r" in text(wrote)
    assert git("rev-parse", "main", cwd=served.bare("agent-r")).stdout == before


def test_a_change_over_mcp_lands_on_what_a_git_client_pushed_meanwhile(served: Served, tmp_path: Path) -> None:
    key = served.key("agent-m")
    work = seeded(served, tmp_path, "agent-m", key, "Ann: owns a boat\n")

    async def first(c: Any) -> Any:
        return await c.call_tool("view", {"path": "system/people.md"})

    session(served.url, key, first)  # the server's work tree now exists, at this tip
    commit(work, "notes/git.md", note("From git", "pushed by git\n"), "git: a note")
    git("push", "-q", "origin", "HEAD", cwd=work, env=bearer(key))

    async def then(c: Any) -> Any:
        return await c.call_tool("create", {"path": "notes/mcp.md", "description": "From MCP",
                                            "file_text": "made over mcp\n", "reason": "mcp: a note"})

    made = session(served.url, key, then)
    assert not made.is_error, text(made)
    log = git("log", "--format=%s", "main", cwd=served.bare("agent-m")).stdout.split("\n")
    assert log[:2] == ["mcp: a note", "git: a note"]  # on top of git's push: nothing rewritten
    git("pull", "-q", "--ff-only", cwd=work, env=bearer(key))
    assert (work / "notes/mcp.md").is_file()


def test_a_change_the_gate_refuses_is_refused_over_mcp_in_the_gates_words(served: Served, tmp_path: Path) -> None:
    key = served.key("agent-g")
    seeded(served, tmp_path, "agent-g", key, "Ann: owns a boat\n")
    bare = served.bare("agent-g")
    before = git("rev-parse", "main", cwd=bare).stdout
    # The server's gate holds a rule the client does not: the operator's own pre-receive.local,
    # which the gate runs after its checks. Only the server can refuse this change.
    local = bare / "hooks" / "pre-receive.local"
    local.write_text("#!/bin/sh\necho 'operator: memories are frozen today' >&2\nexit 1\n")
    local.chmod(0o755)

    async def write(c: Any) -> Any:
        return await c.call_tool("create", {"path": "notes/n.md", "description": "n", "file_text": "n\n",
                                            "reason": "try"})

    made = session(served.url, key, write)
    assert made.is_error and "memories are frozen today" in text(made), text(made)
    assert "nothing landed" in text(made)
    assert git("rev-parse", "main", cwd=bare).stdout == before

    async def look(c: Any) -> Any:  # the server's work tree is back at the memory's tip
        return await c.call_tool("view", {"path": "notes/n.md"})

    assert session(served.url, key, look).is_error


def test_wrong_and_missing_keys_get_401_in_the_servers_words(served: Served, tmp_path: Path) -> None:
    key = served.key("agent-w")
    for headers in ({}, {"Authorization": "Bearer " + key[:-2] + "xx"}, {"Authorization": "Bearer"}):
        status, head, body = post(served.url, headers, INITIALIZE)
        assert status == 401, (headers, status, body)
        answer = json.loads(body)
        assert answer["error"] == "invalid_token" and "git memory serve keys add" in answer["error_description"]
        assert "agent-w" not in body.decode()
    status, head, body = post(served.url, {"Authorization": f"Bearer {key}"}, INITIALIZE)
    assert status == 200 and b'"serverInfo"' in body
    # Another valid key presenting this session's id finds no such session
    other = served.key("agent-w2")
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    sid = {"Mcp-Session-Id": head["mcp-session-id"], "Mcp-Protocol-Version": "2025-06-18"}
    status, _, body = post(served.url, {"Authorization": f"Bearer {other}", **sid}, listing)
    assert status == 404 and b"Session not found" in body, (status, body)
    status, _, body = post(served.url, {"Authorization": f"Bearer {key}", **sid}, listing)
    assert status == 200 and b'"tools"' in body
    # The client ends its session (DELETE), and the id is gone; git's paths take no DELETE
    end = urllib.request.Request(f"{served.url}/mcp", method="DELETE",
                                 headers={"Authorization": f"Bearer {key}", **sid})
    with urllib.request.urlopen(end, timeout=LIMIT) as resp:
        assert resp.status in (200, 204)
    status, _, body = post(served.url, {"Authorization": f"Bearer {key}", **sid}, listing)
    assert status == 404, (status, body)
    gone = urllib.request.Request(f"{served.letta('agent-w')}/git-receive-pack", method="DELETE",
                                  headers={"Authorization": f"Bearer {key}"})
    try:
        urllib.request.urlopen(gone, timeout=LIMIT)
        raise AssertionError("DELETE on a git path was answered")
    except urllib.error.HTTPError as exc:
        assert exc.code == 405

    async def act(c: Any) -> Any:
        return await c.list_tools()

    # The Python SDK's client stops at the 401 but keeps only "Server returned an error
    # response" of it (the body above is what a client that shows it, like the TS SDK, says).
    with pytest.raises(BaseException) as raised:
        session(served.url, key[:-2] + "xx", act)
    assert "error response" in repr(raised.value), repr(raised.value)


def test_a_foreign_origin_and_a_rebound_host_are_refused_on_mcp(served: Served) -> None:
    key = served.key("agent-o")
    status, _, body = post(served.url, {"Authorization": f"Bearer {key}", "Origin": "http://evil.example"},
                           INITIALIZE)
    assert status == 403, (status, body)
    port = served.url.rsplit(":", 1)[1]
    status, _, body = post(served.url, {"Authorization": f"Bearer {key}", "Host": f"evil.example:{port}"},
                           INITIALIZE)
    assert status == 403 and b"answers only to" in body


# -- /mcp with the TypeScript SDK -----------------------------------------------------------

def test_typescript_sdk_client_with_per_agent_keys(served: Served, tmp_path: Path) -> None:
    sdk = npm_package("@modelcontextprotocol/sdk@1")
    ka, kb = served.key("agent-ts"), served.key("agent-tt")
    work = seeded(served, tmp_path, "agent-ts", ka, "Sarah: likes tea\n")
    seeded(served, tmp_path, "agent-tt", kb, "Bob: plays the oboe\n")

    def run(key: str) -> dict[str, Any]:
        proc = subprocess.run(["node", str(HERE / "mcp_ts" / "serve.mjs"), str(sdk), f"{served.url}/mcp"],
                              capture_output=True, text=True, timeout=LIMIT * 2,
                              env={**os.environ, "GIT_MEMORY_KEY": key, "OTHER_AGENT": "agent-tt"})
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    out = run(ka)
    assert out["connect"] is None, out
    assert out["server"]["name"] == "git-memory"
    assert not out["view"]["isError"] and "Sarah: likes tea" in out["view"]["text"]
    assert not out["create"]["isError"] and out["create"]["structured"]["paths"] == ["notes/ts.md"]
    assert out["other"]["isError"] and "key agent-ts may not read memory agent-tt" in out["other"]["text"]
    assert "oboe" not in json.dumps(out)
    assert out["resources"] and all(u.startswith("memory://agent-ts/") for u in out["resources"])
    assert out["stolen"]["code"] == -32602 and "may not read memory agent-tt" in out["stolen"]["message"]
    git("pull", "-q", "--ff-only", cwd=work, env=bearer(ka))
    assert (work / "notes/ts.md").read_text().endswith("from TypeScript\n")

    wrong = run(ka[:-2] + "xx")
    assert wrong["connect"] and wrong["connect"]["code"] == 401, wrong
    assert "git memory serve keys add" in wrong["connect"]["message"], wrong  # the server's words


# -- the review page ------------------------------------------------------------------------

def test_the_page_refuses_agent_keys_and_wrong_keys_in_its_words(served: Served, tmp_path: Path) -> None:
    pytest.importorskip("starlette", reason="the [review] extra is not installed")
    agent = served.key("agent-p")
    seeded(served, tmp_path, "agent-p", agent, "Ann: owns a boat\n")
    status, _, body = get(f"{served.url}/?token={agent}")
    assert status == 403 and body.decode().startswith("error: key agent-p is an agent's key"), body
    status, _, body = get(f"{served.url}/a/agent-p/", {"Authorization": f"Bearer {agent}"})
    assert status == 403 and b"agent's key" in body
    status, _, body = get(f"{served.url}/?token=gmk_wrong")
    assert status == 401 and body.startswith(b"error: ") and b"person" in body
    status, _, body = get(f"{served.url}/a/agent-p/")
    assert status == 401
    person = served.key("pat", "--kind", "person", "--read", "agent-q")
    status, _, body = get(f"{served.url}/a/agent-p/files", {"Authorization": f"Bearer {person}"})
    assert status == 400 and b"key pat may not read memory agent-p" in body
    assert b"Ann" not in body

    # A person who may only read sees the page's revert form, and the revert is refused
    reader = served.key("rita", "--kind", "operator", "--read", "agent-p")
    bare = served.bare("agent-p")
    tip = git("rev-parse", "main", cwd=bare).stdout.strip()
    auth = {"Authorization": f"Bearer {reader}"}
    status, _, page = get(f"{served.url}/a/agent-p/commit/{tip}", auth)
    assert status == 200 and b"Ann: owns a boat" in page
    form_token = re.search(rb'name="form_token" value="([0-9a-f]+)"', page)
    assert form_token
    form = f"form_token={form_token[1].decode()}&reason=rita+reverts".encode()
    status, _, body = get(f"{served.url}/a/agent-p/commit/{tip}/revert",
                          {**auth, "Origin": served.url, "Content-Type": "application/x-www-form-urlencoded"}, form)
    assert status == 409 and b"key rita may not write memory agent-p" in body, body
    assert git("rev-parse", "main", cwd=bare).stdout.strip() == tip


def test_a_person_reviews_and_reverts_in_a_browser_on_serves_port(served: Served, tmp_path: Path) -> None:
    pytest.importorskip("starlette", reason="the [review] extra is not installed")
    from test_review import CHROMIUM, FLAGS

    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(f"{CHROMIUM} is missing")
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright (the [dev] extra)")
    agent = served.key("agent-v")
    work = seeded(served, tmp_path, "agent-v", agent, "Ann: owns a boat\n")
    commit(work, "notes/oops.md", note("A mistake", "<script>document.title='pwned'</script>oops\n"), "agent: oops")
    git("push", "-q", "origin", "HEAD", cwd=work, env=bearer(agent))
    seeded(served, tmp_path, "other-w", served.key("other-x", "--create", "other-w"), "Zed\n")
    person = served.key("pat", "--kind", "person", "--write", "agent-v")
    bare = served.bare("agent-v")
    oops = git("rev-parse", "main", cwd=bare).stdout.strip()
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            page = browser.new_page()
            page.goto(f"{served.url}/?token={person}")
            assert "token=" not in page.url  # the key left the address bar
            assert page.locator("a", has_text="agent-v").count() == 1
            assert page.locator("a", has_text="other-w").count() == 0  # not the key's
            page.goto(f"{served.url}/a/agent-v/commit/{oops}")
            assert page.title() != "pwned"
            page.fill("input[name=reason]", "person: that was a mistake")
            page.locator("form[action$='/revert'] button").click()
            page.wait_for_load_state()
        finally:
            browser.close()
    log = git("log", "-2", "--format=%s|%an", "main", cwd=bare).stdout.split("\n")
    assert log[0] == "person: that was a mistake|pat" and log[1].startswith("agent: oops|"), log
    git("pull", "-q", "--ff-only", cwd=work, env=bearer(agent))
    assert not (work / "notes/oops.md").exists()
    git("fsck", "--strict", "--no-dangling", cwd=bare)


def test_a_proposal_made_over_mcp_is_accepted_on_the_page_and_lands(served: Served, tmp_path: Path) -> None:
    pytest.importorskip("starlette", reason="the [review] extra is not installed")
    agent = served.key("agent-q")
    seeded(served, tmp_path, "agent-q", agent, "Ann: owns a boat\n")

    async def propose(c: Any) -> Any:  # kept for a person, in the server's work tree of agent-q
        return await c.call_tool("str_replace", {"path": "system/people.md", "old_string": "a boat",
                                                 "new_string": "two boats", "reason": "agent: ask first",
                                                 "propose": True})

    made = session(served.url, agent, propose)
    assert not made.is_error, text(made)
    ident = made.structured_content["proposed"]
    bare = served.bare("agent-q")
    tip = git("rev-parse", "main", cwd=bare).stdout.strip()
    assert "two boats" not in git("show", "main:system/people.md", cwd=bare).stdout  # nothing landed yet
    person = served.key("pat", "--kind", "person", "--write", "agent-q")
    auth = {"Authorization": f"Bearer {person}"}
    status, _, page = get(f"{served.url}/a/agent-q/pending", auth)
    assert status == 200 and ident.encode() in page, page[-2000:]
    form_token = re.search(rb'name="form_token" value="([0-9a-f]+)"', page)
    shown = re.search(rb'name="expect" value="([0-9a-f]+)"', page)  # the commit the page showed
    assert form_token and shown
    status, _, body = get(f"{served.url}/a/agent-q/pending/proposal/{ident}/accept",
                          {**auth, "Origin": served.url, "Content-Type": "application/x-www-form-urlencoded"},
                          f"form_token={form_token[1].decode()}&expect={shown[1].decode()}".encode())
    assert status == 200, body
    assert git("rev-parse", "main~1", cwd=bare).stdout.strip() == tip
    assert "Ann: owns two boats" in git("show", "main:system/people.md", cwd=bare).stdout
    assert "Memory-Proposal" in git("log", "-1", "--format=%B", "main", cwd=bare).stdout
    git("fsck", "--strict", "--no-dangling", cwd=bare)


def test_a_change_over_mcp_that_loses_a_race_to_a_push_is_made_again_on_top(served: Served, tmp_path: Path) -> None:
    key = served.key("agent-x")
    work = seeded(served, tmp_path, "agent-x", key, "Ann: owns a boat\n")
    bare = served.bare("agent-x")
    commit(work, "notes/git.md", note("From git", "pushed while the server's push was in the gate\n"), "git: racer")
    # The race, made certain: the first push the gate sees (the server's) lets a git client's
    # push land first, from inside the operator's pre-receive.local, so the server's loses.
    marker = tmp_path / "race-once"
    marker.write_text("")
    local = bare / "hooks" / "pre-receive.local"
    local.write_text(f"#!/bin/sh\ncat >/dev/null\n[ -f {marker} ] || exit 0\nrm -f {marker}\n"
                     f"env -i PATH=\"$PATH\" HOME=\"$HOME\" git -C {work} push -q {bare} HEAD:main >&2\n")
    local.chmod(0o755)

    async def write(c: Any) -> Any:
        return await c.call_tool("create", {"path": "notes/mcp.md", "description": "From MCP",
                                            "file_text": "made over mcp\n", "reason": "mcp: after the race"})

    made = session(served.url, key, write)
    assert not made.is_error, text(made)
    assert not marker.exists()  # the race ran
    log = git("log", "--format=%s", "main", cwd=bare).stdout.split("\n")
    assert log[:2] == ["mcp: after the race", "git: racer"], log
    assert git("rev-list", "--count", "main", cwd=bare).stdout.strip() == "4"  # seed, people, racer, mcp
    git("fsck", "--strict", "--no-dangling", cwd=bare)


def test_a_subscription_hears_of_a_git_push_and_another_agents_is_refused(served: Served, tmp_path: Path) -> None:
    ka, kb = served.key("agent-s"), served.key("agent-t")
    work = seeded(served, tmp_path, "agent-s", ka, "Ann: owns a boat\n")
    seeded(served, tmp_path, "agent-t", kb, "Bob\n")
    uri = "memory://agent-s/system/people.md"
    # Memories only git has touched get no work tree of the server's (the watcher makes none)
    assert not (served.root / ".git-memory-serve" / "work").exists()

    def push() -> None:
        commit(work, "system/people.md", note("People I know", "Ann: owns two boats\n"), "git: a second boat")
        git("push", "-q", "origin", "HEAD", cwd=work, env=bearer(ka))

    async def listen(c: Any) -> Any:
        async with c.listen(resource_subscriptions=[uri]) as sub:
            await anyio.to_thread.run_sync(push)
            async for event in sub:
                if event.uri == uri:
                    break
        return (await c.read_resource(uri)).contents[0].text

    assert "two boats" in session(served.url, ka, listen)

    async def steal(c: Any) -> Any:
        try:
            async with c.listen(resource_subscriptions=[uri]):
                return None
        except Exception as exc:  # noqa: BLE001 - the server's JSON-RPC error
            return str(exc)

    refused = session(served.url, kb, steal)
    assert refused and "key agent-t may not read memory agent-s" in refused


def test_behind_a_proxy_the_origin_it_names_is_taken_and_no_other(tmp_path: Path) -> None:
    root = tmp_path / "srv"
    root.mkdir()
    proc = subprocess.Popen(["git", "memory", "serve", "--root", str(root), "--json"], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            env={**os.environ, "GIT_MEMORY_SERVE_ORIGINS": "https://memory.example.org"})
    try:
        assert proc.stdout is not None
        url = json.loads(proc.stdout.readline())["url"]
        key = Served(root, proc, url).key("agent-y")
        status, _, body = post(url, {"Authorization": f"Bearer {key}", "Origin": "https://memory.example.org"},
                               INITIALIZE)
        assert status == 200 and b'"serverInfo"' in body, (status, body)
        status, _, _ = post(url, {"Authorization": f"Bearer {key}", "Origin": "https://evil.example"}, INITIALIZE)
        assert status == 403
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_an_http_1_0_client_gets_an_unchunked_stream(served: Served) -> None:
    import socket

    key = served.key("agent-h")
    host, port = served.url.removeprefix("http://").split(":")
    body = json.dumps(INITIALIZE).encode()
    request = (f"POST /mcp HTTP/1.0\r\nHost: {host}:{port}\r\nAuthorization: Bearer {key}\r\n"
               f"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
               f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    with socket.create_connection((host, int(port)), timeout=LIMIT) as conn:
        conn.sendall(request)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    head, _, rest = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.") and b" 200 " in head.split(b"\r\n")[0], head
    assert b"transfer-encoding" not in head.lower()
    assert rest.startswith(b"event: message") and b'"serverInfo"' in rest, rest[:200]
