"""`git memory mcp` through the official SDK client over stdio, 1,000-file repo, hooks installed.

The edit ratio is measured in the same run: a str_replace through the server against a
plain `git commit -a` of the same kind of change (write the file, commit) with the same
installed hooks.
"""
from __future__ import annotations

import os
import statistics
import time

from common import memory_repo, sh

FIGURES = {
    "mcp_startup_ms": (1000, "ms", "spawn `git memory mcp` to the first answered initialize (SDK client)"),
    "mcp_view_ms": (5, "ms", "view tool call through a connected client, 1,000-file repo"),
    "mcp_search_ms": (5, "ms", "search tool call through a connected client, 1,000-file repo"),
    "mcp_edit_ms": (None, "ms", "str_replace tool call (one commit, hooks installed)"),
    "mcp_plain_commit_ms": (None, "ms", "plain `git commit -a` of the same change, same hooks"),
    "mcp_edit_over_plain_commit": (0.5, "x", "str_replace through MCP / plain git commit -a"),
}


def run(workdir: str, repeat: int) -> dict[str, float]:
    try:
        import anyio
        from mcp import Client, StdioServerParameters
    except ImportError:  # the [mcp] extra is not installed: nothing to measure
        return {}
    repo = memory_repo(os.path.join(workdir, "mem"), 1000)
    sh("git", "memory", "create", "system/counter.md", "value 0", "-d", "A counter", "-m", "counter", cwd=repo)
    sh("git", "memory", "create", "reference/plain.md", "plain 0", "-d", "Edited by plain git", "-m", "plain",
       cwd=repo)
    params = StdioServerParameters(command="git", args=["memory", "mcp"], cwd=repo, env=dict(os.environ))
    plain = os.path.join(repo, "reference", "plain.md")

    def plain_commit(i: int) -> None:
        with open(plain, "w") as fh:
            fh.write(f"---\ndescription: Edited by plain git\n---\nplain {i + 1}\n")
        sh("git", "commit", "-q", "-a", "-m", f"plain {i + 1}", cwd=repo)

    async def startup() -> float:
        start = time.perf_counter()
        async with Client(params, mode="legacy"):
            return (time.perf_counter() - start) * 1000

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
                await timed("view", "view", {"path": "reference/bulk/d004/note00420.md"})
                await timed("search", "search", {"query": "counter"})
                await timed("edit", "str_replace", {"path": "system/counter.md", "old_string": f"value {i + 1}",
                                                    "new_string": f"value {i + 2}", "reason": f"count {i + 2}"})
                start = time.perf_counter()
                await anyio.to_thread.run_sync(plain_commit, i + 1)
                out["plain"].append((time.perf_counter() - start) * 1000)
        return {k: v[1:] for k, v in out.items()}

    starts = [anyio.run(startup) for _ in range(max(3, repeat // 3))]
    samples = anyio.run(calls)
    med = {k: statistics.median(v) for k, v in samples.items()}
    return {"mcp_startup_ms": statistics.median(starts), "mcp_view_ms": med["view"],
            "mcp_search_ms": med["search"], "mcp_edit_ms": med["edit"], "mcp_plain_commit_ms": med["plain"],
            "mcp_edit_over_plain_commit": med["edit"] / med["plain"]}
