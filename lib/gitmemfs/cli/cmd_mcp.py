"""`git memory mcp`: serve the memory over MCP, and write clients' configuration."""
from __future__ import annotations

import argparse
import os
from typing import Any

from gitmemfs.cli.common import Report
from gitmemfs.core.errors import EnvironmentProblem, MemfsError

EXTRA = ".[mcp]"  # from a checkout: git-memfs is not on PyPI yet


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "mcp", parents=[common], help="serve the memory to agents over MCP (Model Context Protocol)",
        description="Serve the memory as an MCP server: tools for every memory operation (each write "
                    "needs a reason), memory:// resources with change notifications, and prompts. Over "
                    "stdio by default; --http serves streamable HTTP on 127.0.0.1. Needs the optional "
                    f"extra: pip install '{EXTRA}' in a git-memfs checkout. `git memory mcp install CLIENT` "
                    "configures a client.")
    p.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1; any other needs $GIT_MEMORY_MCP_TOKEN)")
    p.add_argument("--port", type=int, default=8765, help="port (default 8765; 0: any free port)")
    p.add_argument("--root", metavar="DIR",
                   help="serve every agent's memory under DIR (DIR/<agent>[/memory]); calls name the agent")
    p.add_argument("--adopt-outside-changes", action="store_true",
                   help="before a write, commit files changed beside the server as their own 'outside change' "
                        "commit (validated like any) instead of refusing the write (off by default)")
    p.add_argument("--tokens", metavar="FILE",
                   help="with --http --root: lines 'AGENT TOKEN' (chmod 600); a client sees and touches only "
                        "the agents its bearer token is listed for ('*': every agent)")
    inner = p.add_subparsers(dest="mcp_command", metavar="install")
    q = inner.add_parser("install", parents=[common], help="write an MCP client's configuration",
                         description="Add this memory as an MCP server to a client's configuration and "
                                     "print what was written: claude-code (.mcp.json, or ~/.claude.json "
                                     "with --scope user), codex (~/.codex/config.toml, or "
                                     ".codex/config.toml with --scope project), json (print a snippet).")
    q.add_argument("client", choices=("claude-code", "codex", "json"), metavar="CLIENT",
                   help="claude-code, codex or json")
    q.add_argument("--scope", choices=("user", "project"), help="where to write (default: project for "
                                                                "claude-code, user for codex)")
    q.add_argument("--name", default="memory", help="the server's name in the client (default memory)")
    q.add_argument("--root", metavar="DIR", dest="install_root", help="configure a --root DIR server")
    q.add_argument("--http", metavar="URL", dest="install_url",
                   help="configure a running `git memory mcp --http` server at URL (e.g. "
                        "http://127.0.0.1:8765/mcp) instead of starting one per client")
    q.add_argument("--token-env", metavar="VAR",
                   help="with --http: the environment variable the client reads the bearer token from "
                        "(default GIT_MEMORY_MCP_TOKEN; '' for none); the token itself is never written")
    q.add_argument("--dry-run", action="store_true", help="print what would be written; write nothing")
    p.set_defaults(func=do_mcp)


def _require_sdk() -> None:
    try:
        import mcp.server.mcpserver  # noqa: F401
    except ImportError:
        raise EnvironmentProblem(f"mcp: the MCP SDK is not installed; pip install '{EXTRA}' in your "
                                 "git-memfs checkout") from None


def do_mcp(args: argparse.Namespace, ctx: Any) -> Report:
    if args.mcp_command == "install":
        return do_install(args, ctx)
    _require_sdk()
    from gitmemfs.mcp import server

    server.run(ctx.memory_dir, args.root, http=args.http, host=args.host, port=args.port,
               tokens_file=args.tokens, adopt=args.adopt_outside_changes)
    return Report("")


def do_install(args: argparse.Namespace, ctx: Any) -> Report:
    from gitmemfs.mcp import install

    root = args.install_root
    url = args.install_url
    memory_dir = None if root or url else ctx.repo().root
    trees = [os.path.abspath(root)] if root else [memory_dir] if memory_dir else []
    if url and not root:
        try:  # the memory the server serves, if this is one: never write into it
            trees = [ctx.repo().root]
        except MemfsError:  # not in a memory: nothing to keep clear of
            trees = []
    command = install.server_command(memory_dir, root)
    scope = args.scope or ("project" if args.client == "claude-code" else "user")
    token_env = install.TOKEN_ENV if args.token_env is None else (args.token_env or None)
    plan = install.plan(args.client, scope, args.name, command, cwd=os.getcwd(),
                        home=os.path.expanduser("~"), url=url, token_env=token_env if url else None,
                        memory_trees=trees)
    if not args.dry_run:
        install.write(plan)
    verb = "would write" if args.dry_run else "wrote"
    head = f"{verb} {plan.path}:\n" if plan.path else ""
    note = f"\n({plan.note})" if plan.note else ""
    return Report(head + plan.text.rstrip("\n") + note,
                  {"client": args.client, "scope": scope, "path": plan.path, "written": bool(plan.path) and
                   not args.dry_run, "content": plan.text, "command": command})
