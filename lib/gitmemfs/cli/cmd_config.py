"""`git memory config`: the settings in effect here, and where each one comes from."""
from __future__ import annotations

import argparse
import os

from gitmemfs.cli.common import Report

TYPE_CHECKING = False  # `typing` costs ~7 ms of every command's start-up
if TYPE_CHECKING:
    from typing import Any

# (what, git config key, environment variables that win over it, default, meaning)
SETTINGS: tuple[tuple[str, str | None, tuple[str, ...], str | None, str], ...] = (
    ("check scope", "memory.checkScope", (), "letta",
     "which Markdown files need frontmatter: letta = system/ and reference/, all = every .md"),
    ("durable", "memory.durable", (), "true",
     "true: an answer of committed is on stable storage (fsync); false: as durable as plain git"),
    ("git fsync", "core.fsync", (), "committed,index (passed to git by every writer)",
     "what git itself fsyncs; memory.durable adds it where this is weaker"),
    ("git fsync method", "core.fsyncMethod", (), "fsync (passed to git by every writer)",
     "fsync: git syncs each object and ref it writes (batch trusts the filesystem more)"),
    ("mirror", "memory.mirrorUrl", (), None, "pushed to after every commit on main"),
    ("mirror (Letta)", "letta.memoryRepository.url", (), None, "the same, under Letta's key"),
    ("mirror timeout", "memory.mirrorTimeout", (), "60", "seconds a mirror push may take"),
    ("dream agent", "dream.agent", ("GIT_DREAM_AGENT",), None, "the command git dream runs"),
    ("dream timeout", "dream.timeout", (), "1500", "seconds before the agent is killed"),
    ("dream merge", "dream.merge", (), "auto", "auto: merge validated work; explicit: leave it for review"),
    ("dream trigger", "dream.trigger", (), "off",
     "steps, compaction, commits (a list) or off: what starts an automatic dream"),
    ("dream every", "dream.every", (), "25", "steps (harness turns) or memory commits between dreams"),
    ("sandbox", None, ("GIT_DREAM_SANDBOX",), "on", "the dream agent's confinement (0/off: none)"),
    ("sandbox allowWrite", "dream.sandbox.allowWrite", (), None, "extra folders the agent may write"),
    ("sandbox allowRead", "dream.sandbox.allowRead", (), None, "extra folders the agent may read (any: all)"),
    ("sandbox allowChmod", "dream.sandbox.allowChmod", (), "false", "whether the agent may chmod"),
    ("sandbox passEnv", "dream.passEnv", (), None, "withheld variables the agent gets anyway"),
)


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("config", parents=[common], help="the settings in effect here, and where each comes from",
                       description="List the effective settings: the repository and why it was chosen, "
                                   "the commit author, the check scope, the mirror, the dream policy and "
                                   "the sandbox, each with its source (flag, environment, git config "
                                   "and its scope, or default).")
    p.set_defaults(func=do_config)


def _scopes(root: str) -> dict[str, tuple[str, str]]:
    """{lower-case key: (last value, its scope)} from one `git config --list --show-scope`."""
    from gitmemfs.core import git

    res = git.run(["config", "-z", "--list", "--show-scope"], cwd=root, check=False)
    out: dict[str, tuple[str, str]] = {}
    items = res.out.split("\0")
    for scope, item in zip(items[0::2], items[1::2]):
        key, _, value = item.partition("\n")
        out[key.lower()] = (value, scope)
    return out


def do_config(args: argparse.Namespace, ctx: Any) -> Report:
    from gitmemfs.core.redact import redact
    from gitmemfs.core.repo import locate_why

    repo = ctx.repo()
    _, why = locate_why(ctx.memory_dir)
    rows: list[dict[str, Any]] = [
        {"name": "repository", "value": repo.root, "source": why if why != "the current directory"
         else "the current directory (its git work tree)",
         "meaning": "the memory repository every command uses (--memory-dir, MEMORY_DIR, AGENT_ID pick another)"},
    ]
    scopes = _scopes(repo.root)
    from gitmemfs.dream import trigger

    dream = trigger.resolve(repo.root, os.getcwd())  # global -> project (here) -> agent

    def config_source(key: str) -> str:
        return f"git config {key} ({scopes[key.lower()][1]})"

    author = repo.author()
    if author is not None:
        agent_src = next((f"{n}={os.environ[n]}" for n in ("AGENT_ID", "LETTA_AGENT_ID")
                          if os.environ.get(n, "").strip()), None) or config_source("memory.agentId")
        email_src = (config_source("memory.agentEmail") if repo.cfg("memory.agentEmail")
                     else "default for " + ("Letta's LETTA_AGENT_ID" if author.email.endswith("@letta.com")
                                            else "an agent id"))
        rows.append({"name": "author", "value": f"{author.name} <{author.email}>",
                     "source": f"agent {agent_src}; email: {email_src}", "meaning": "who memory commits are by"})
    else:
        name, email = repo.cfg("user.name"), repo.cfg("user.email")
        rows.append({"name": "author", "value": f"{name} <{email}>" if name or email else None,
                     "source": config_source("user.name") if "user.name" in scopes else "git's default identity",
                     "meaning": "who memory commits are by (set AGENT_ID or memory.agentId for an agent)"})
    value: str | None
    for what, key, envs, default, meaning in SETTINGS:
        env = next((n for n in envs if os.environ.get(n, "").strip()), None)
        if env is not None:
            value, source = os.environ[env].strip(), f"environment {env}"
        elif key is not None and key.lower() in trigger.KEYS:
            value, source = dream.get(key.lower(), (default, "default"))
        elif key is not None and key.lower() in scopes:
            values = repo.cfg_all(key)
            value = ", ".join(values) if len(values) > 1 else values[-1]
            source = config_source(key)
        else:
            value, source = default, "default" if default is not None else "not set"
        rows.append({"name": what, "key": key, "value": None if value is None else redact(value),
                     "source": source, "meaning": meaning})
    width = max(len(r["name"]) for r in rows)
    lines = [f"{r['name']:<{width}}  {r['value'] if r['value'] is not None else '-'}   ({r['source']})"
             for r in rows]
    return Report("\n".join(lines), {"ok": True, "settings": rows})
