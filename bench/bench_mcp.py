"""`git memory mcp` through the official SDK client, 1,000-file repo, hooks installed.

- Start-up: spawn `git memory mcp` to the answer of `initialize` over a raw pipe,
  median of 5, and how much of it is importing the MCP SDK and what it brings
  (pydantic, starlette, uvicorn, httpx2, anyio): measured in the server process itself
  with PYTHONPROFILEIMPORTTIME, as a share of that run's start-up, median of 5.
- Per call: view and search over stdio, and view over streamable HTTP on a
  kept-alive connection, in the same run (the HTTP/stdio ratio is the bar).
- The edit ratio: a str_replace through the server against a plain `git commit -a`
  of the same kind of change with the same installed hooks.
- Bytes the model reads per call (view, search, log of 20 commits, tree, compile):
  the text content now, against the JSON the server used to send as structured
  content (the `--json` object of the same command, which clients hand the model).
"""
from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import time

from common import memory_repo, sh

FIGURES = {
    "mcp_startup_ms": (1000, "ms", "spawn `git memory mcp` to the answer of initialize (raw pipe), median of 5"),
    "mcp_sdk_import_share": (None, "x", "of which: importing the MCP SDK and its dependencies, median of 5"),
    "mcp_sdk_import_ms": (None, "ms", "that share of mcp_startup_ms"),
    "mcp_view_ms": (5, "ms", "view tool call over stdio, 1,000-file repo"),
    "mcp_search_ms": (5, "ms", "search tool call over stdio, 1,000-file repo"),
    "mcp_http_view_ms": (5, "ms", "view tool call over streamable HTTP, kept-alive connection"),
    "mcp_http_over_stdio": (2, "x", "view over HTTP / view over stdio"),
    "mcp_edit_ms": (None, "ms", "str_replace tool call (one commit, hooks installed)"),
    "mcp_plain_commit_ms": (None, "ms", "plain `git commit -a` of the same change, same hooks"),
    "mcp_edit_over_plain_commit": (0.5, "x", "str_replace through MCP / plain git commit -a"),
    **{f"mcp_bytes_{tool}": (None, "B", f"{tool}: bytes the model reads (text content)")
       for tool in ("view", "search", "log", "tree", "compile")},
    **{f"mcp_bytes_{tool}_before": (None, "B", f"{tool}: bytes of the JSON structured content sent before")
       for tool in ("view", "search", "log", "tree", "compile")},
}
INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}}) + "\n"


SDK = ("mcp", "mcp_types", "pydantic", "pydantic_core", "starlette", "uvicorn", "httpx2", "anyio", "sse_starlette")


def startup_ms(repo: str, profile: bool = False) -> tuple[float, float]:
    """(ms from spawn to the initialize answer, through the launcher a client's entry
    names; with `profile`, the share of it spent importing the SDK and its dependencies)."""
    env = dict(os.environ, PYTHONPROFILEIMPORTTIME="1") if profile else None
    start = time.perf_counter()
    proc = subprocess.Popen(["git-memory", "mcp"], cwd=repo, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE if profile else subprocess.DEVNULL, text=True, env=env)
    proc.stdin.write(INITIALIZE)
    proc.stdin.flush()
    line = proc.stdout.readline()
    took = (time.perf_counter() - start) * 1000
    proc.stdin.close()
    err = proc.stderr.read() if profile else ""
    proc.wait(timeout=60)
    if '"serverInfo"' not in line:
        raise RuntimeError(f"git memory mcp did not answer initialize: {line!r}")
    sdk_us = 0
    for row in err.splitlines():  # "import time: self | cumulative | name"; top level: no indent
        parts = row.split("|")
        if len(parts) == 3 and parts[2].startswith(" ") and not parts[2].startswith("  "):
            if parts[2].strip().split(".")[0] in SDK and parts[1].strip().isdigit():
                sdk_us += int(parts[1])
    return took, sdk_us / 1000 / took


def run(workdir: str, repeat: int) -> dict[str, float]:
    try:
        import anyio
        import httpx2
        from mcp import Client, StdioServerParameters
        from mcp.client.streamable_http import streamable_http_client
    except ImportError:  # the [mcp] extra is not installed: nothing to measure
        return {}
    repo = memory_repo(os.path.join(workdir, "mem"), 1000)
    sh("git", "memory", "create", "system/counter.md", "value 0", "-d", "A counter", "-m", "counter", cwd=repo)
    sh("git", "memory", "create", "reference/plain.md", "plain 0", "-d", "Edited by plain git", "-m", "plain",
       cwd=repo)
    params = StdioServerParameters(command="git", args=["memory", "mcp"], cwd=repo, env=dict(os.environ))
    plain = os.path.join(repo, "reference", "plain.md")
    view = {"path": "reference/bulk/d004/note00420.md"}

    def plain_commit(i: int) -> None:
        with open(plain, "w") as fh:
            fh.write(f"---\ndescription: Edited by plain git\n---\nplain {i + 1}\n")
        sh("git", "commit", "-q", "-a", "-m", f"plain {i + 1}", cwd=repo)

    async def calls() -> dict[str, list[float]]:
        out: dict[str, list[float]] = {"view": [], "search": [], "edit": [], "plain": []}
        async with Client(params) as c:
            async def timed(name: str, tool: str, args: dict) -> None:
                start = time.perf_counter()
                result = await c.call_tool(tool, args)
                out[name].append((time.perf_counter() - start) * 1000)
                if result.is_error:
                    raise RuntimeError(f"{tool}: {result.content}")

            for i in range(-1, repeat):  # the first round warms up
                await timed("view", "view", view)
                await timed("search", "search", {"query": "counter"})
                await timed("edit", "str_replace", {"path": "system/counter.md", "old_string": f"value {i + 1}",
                                                    "new_string": f"value {i + 2}", "reason": f"count {i + 2}"})
                start = time.perf_counter()
                await anyio.to_thread.run_sync(plain_commit, i + 1)
                out["plain"].append((time.perf_counter() - start) * 1000)
        return {k: v[1:] for k, v in out.items()}

    async def http_views(url: str) -> list[float]:
        samples = []
        async with httpx2.AsyncClient() as http:  # one client: one kept-alive connection
            async with Client(streamable_http_client(url, http_client=http)) as c:
                for _ in range(repeat + 1):
                    start = time.perf_counter()
                    result = await c.call_tool("view", view)
                    samples.append((time.perf_counter() - start) * 1000)
                    if result.is_error:
                        raise RuntimeError(f"view over HTTP: {result.content}")
        return samples[1:]

    async def model_bytes() -> dict[str, int]:
        out = {}
        async with Client(params) as c:
            for tool, args in (("view", view), ("search", {"query": "counter"}), ("log", {"limit": 20}),
                               ("tree", {}), ("compile", {})):
                result = await c.call_tool(tool, args)
                text = "".join(getattr(b, "text", "") for b in result.content)
                structured = result.structured_content
                out[tool] = len(text.encode()) + (len(json.dumps(structured).encode()) if structured else 0)
        return out

    starts = [startup_ms(repo)[0] for _ in range(5)]
    share = statistics.median(startup_ms(repo, profile=True)[1] for _ in range(5))
    samples = anyio.run(calls)
    med = {k: statistics.median(v) for k, v in samples.items()}

    proc = subprocess.Popen(["git", "memory", "mcp", "--http", "--port", "0"], cwd=repo, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        found = re.search(r"serving (http://\S+)", proc.stderr.readline())
        if not found:
            raise RuntimeError("git memory mcp --http did not say where it listens")
        http_view = statistics.median(anyio.run(http_views, found.group(1)))
    finally:
        proc.terminate()
        proc.wait(timeout=60)

    now = anyio.run(model_bytes)
    before = {tool: len(sh("git", "memory", "--json", *argv, cwd=repo).stdout.strip().encode()) for tool, argv in (
        ("view", ["view", view["path"]]), ("search", ["search", "counter"]), ("log", ["log", "-n", "20"]),
        ("tree", ["tree"]), ("compile", ["compile"]))}
    startup = statistics.median(starts)
    return {"mcp_startup_ms": startup, "mcp_sdk_import_share": share, "mcp_sdk_import_ms": share * startup,
            "mcp_view_ms": med["view"], "mcp_search_ms": med["search"], "mcp_http_view_ms": http_view,
            "mcp_http_over_stdio": http_view / med["view"], "mcp_edit_ms": med["edit"],
            "mcp_plain_commit_ms": med["plain"], "mcp_edit_over_plain_commit": med["edit"] / med["plain"],
            **{f"mcp_bytes_{k}": v for k, v in now.items()},
            **{f"mcp_bytes_{k}_before": v for k, v in before.items()}}
