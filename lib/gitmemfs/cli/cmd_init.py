"""`git memory init`."""
from __future__ import annotations

import argparse

from gitmemfs.core.layout import NAMES as LAYOUTS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from gitmemfs.core.outcome import Outcome


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("init", parents=[common], help="create a memory repository (or adopt a repo)",
                       description="Create a memory repository on branch main with seed files "
                                   "system/persona.md and system/human.md, mark it (memory.repo, "
                                   "memory.checkScope=all) and install the hooks. An existing "
                                   "repository is marked and gets hooks, but is never re-seeded.")
    p.add_argument("directory", metavar="DIR", nargs="?",
                   help="where to create it (default: the memory dir, else the current directory)")
    p.add_argument("--agent-id", metavar="ID", help="record memory.agentId (the commit author)")
    p.add_argument("--agent-name", metavar="NAME", help="record memory.agentName")
    p.add_argument("--remote", metavar="URL", help="add URL as remote origin")
    p.add_argument("--layout", choices=LAYOUTS,
                   help="repository layout: letta (system/ folder, the default), letta-root (a root "
                        "MEMORY.md index, current Letta) or plain (files as named, no required "
                        "frontmatter; recorded as memory.layout)")
    p.add_argument("--personality", metavar="ID",
                   help="seed the persona and human files from a personality (git memory personality list)")
    p.set_defaults(func=do_init)


def do_init(args: argparse.Namespace, ctx: Any) -> Outcome:
    from gitmemfs.admin.init import init

    return init(args.directory, memory_dir=ctx.memory_dir, agent_id=args.agent_id,
                agent_name=args.agent_name, remote=args.remote, layout=args.layout,
                personality=args.personality)
