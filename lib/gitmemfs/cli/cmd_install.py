"""`git memory install | uninstall claude-code | codex`, and `git memory hook`, the
entry point the installed hooks run."""
from __future__ import annotations

import os
import sys

from gitmemfs.cli.common import Report

TYPE_CHECKING = False  # a hook line is read without argparse (cli/fastargs.py): nor is it imported
if TYPE_CHECKING:
    import argparse
    from typing import Any

HARNESSES = ("claude-code", "codex")


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    import argparse

    for verb, text in (("install", "wire the memory into Claude Code's or Codex's own loop"),
                       ("uninstall", "take out what install wrote (files back as they were)")):
        p = sub.add_parser(
            verb, parents=[common], help=text,
            description=f"{text[0].upper()}{text[1:]}. claude-code: hooks in its settings (SessionStart: "
                        "the compiled memory as context; Stop: a step, a dream every dream.every steps; "
                        "PreCompact: a dream before the compaction; SessionEnd: a sync) and the MCP "
                        "server. codex: the MCP server and notify in $CODEX_HOME/config.toml, and the "
                        "compiled memory in $CODEX_HOME/AGENTS.md. Uninstall puts every file back byte for "
                        "byte when nobody changed it since, else takes out only our entries.")
        p.add_argument("harness", choices=HARNESSES, metavar="HARNESS", help="claude-code or codex")
        where = p.add_mutually_exclusive_group()
        where.add_argument("--user", dest="scope", action="store_const", const="user",
                           help="the user's settings (default)")
        where.add_argument("--project", dest="scope", action="store_const", const="project",
                           help="claude-code: this project's .claude/settings.local.json and .mcp.json")
        p.add_argument("--name", default="memory", help="the MCP server's name (default memory)")
        p.add_argument("--dry-run", action="store_true", help="print what would change; change nothing")
        p.set_defaults(func=do_install if verb == "install" else do_uninstall)
    p = sub.add_parser("hook", parents=[common], help="the entry point installed hooks run (a harness event)",
                       description="Run one harness event: claude-code session-start|stop|pre-compact|"
                                   "session-end (the event's JSON on stdin), or codex notify (its JSON as the "
                                   "last argument; the words after -- are a notify program to chain). Always "
                                   "exits 0: a busy, dirty or missing memory is said once, never an error.")
    p.add_argument("harness", choices=HARNESSES, metavar="HARNESS")
    p.add_argument("event", metavar="EVENT")
    p.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    p.set_defaults(func=do_hook)


def _scope_key(args: argparse.Namespace, project: str) -> str:
    from gitmemfs.harness import claude_code, codex

    if args.harness == "codex":
        return f"user:{codex.home()}"
    return f"{args.scope or 'user'}:{claude_code.paths(args.scope or 'user', project)[0]}"


def _files(args: argparse.Namespace, ctx: Any, compiled: bool) -> tuple[str, list[Any], dict[str, Any]]:
    from gitmemfs.core.errors import UsageError
    from gitmemfs.harness import events, installer
    from gitmemfs.mcp import install as mcp_install

    repo = ctx.repo()
    scope = args.scope or "user"
    if args.harness == "codex" and scope == "project":
        raise UsageError("install codex: Codex reads its MCP servers, notify and AGENTS.md from $CODEX_HOME; "
                         "there is no --project")
    project = os.getcwd()
    if scope == "project":
        project, _ = mcp_install.project_dir(project, [repo.root])
    key = _scope_key(args, project)
    if args.harness == "claude-code":
        return key, installer.claude_files(repo.root, scope, project, args.name, os.environ), {}
    previous = installer.previous_notify(key, os.environ)
    text = events.compiled(repo) if compiled else ""
    return key, installer.codex_files(repo.root, args.name, os.environ, text, previous), previous


def do_install(args: argparse.Namespace, ctx: Any) -> Report:
    from gitmemfs.dream import trigger
    from gitmemfs.harness import installer

    key, files, extra = _files(args, ctx, compiled=True)
    done = installer.install(args.harness, key, files, dry_run=args.dry_run, env=os.environ, extra=extra)
    repo = ctx.repo()
    on = trigger.triggers_of(trigger.settings(repo.root, os.getcwd()))
    note = "" if {"steps", "compaction"} & set(on) else (
        "dreams: dream.trigger is not steps or compaction here, so the hooks start none; "
        "git config --global dream.trigger steps,compaction turns them on")
    text = done.message()
    if args.dry_run:
        text = "\n\n".join(f"{f['action']} {f['path']}:\n{f['content'].rstrip()}" for f in done.files)
    return Report(text + (f"\n({note})" if note else ""), {**done.as_dict(), "dreams": note or "on"})


def do_uninstall(args: argparse.Namespace, ctx: Any) -> Report:
    from gitmemfs.harness import installer

    key, files, _ = _files(args, ctx, compiled=False)
    done = installer.uninstall(args.harness, key, files, dry_run=args.dry_run, env=os.environ)
    return Report(done.message(), done.as_dict())


def do_hook(args: argparse.Namespace, ctx: Any) -> Report:
    import json

    from gitmemfs.harness import events

    if args.harness == "claude-code":
        try:
            payload = json.loads(sys.stdin.read() or "{}")
        except ValueError:
            payload = {}
        answer = events.claude_code(args.event, payload if isinstance(payload, dict) else {}, ctx.memory_dir)
        return Report(answer.text(), answer.out or {})
    rest = list(args.rest)
    if rest[:1] == ["--"]:  # argparse may keep or drop the `--`
        rest.pop(0)
    raw = rest.pop() if rest else "{}"
    chain = rest  # the notify program that was set before ours
    try:
        payload = json.loads(raw)
    except ValueError:
        payload = {}
    from gitmemfs.harness import codex

    answer = events.codex_notify(payload if isinstance(payload, dict) else {}, ctx.memory_dir, codex.home())
    if chain:
        events.chain(chain, raw)
    if answer.note:
        sys.stderr.write(answer.note + "\n")
    return Report("", {})
