"""`git memory proposals list | show | accept | reject`: a person's decisions on what
an agent proposed with `--propose` (admin/proposals.py)."""
from __future__ import annotations

import argparse
from typing import Any

TYPE_CHECKING = False
if TYPE_CHECKING:
    from gitmemfs.core.outcome import Outcome


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("proposals", parents=[common], help="list, show, accept or reject what agents proposed "
                       "(a person's command)",
                       description="An agent's edit that only a person may make (a read_only file, "
                                   ".memfs.config.json, protection, a layout change) can be proposed with "
                                   "--propose: it is kept under refs/memory/proposals/ID and never applied. "
                                   "accept is the person's approval: the change is re-validated against today's "
                                   "main and committed onto it with Memory-Approved (signed where the memory "
                                   "has allowed signers); reject drops it and keeps the note. No tool an agent "
                                   "is given (call, MCP, the SDK class, dreams) runs this command.")
    psub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    q = psub.add_parser("list", parents=[common], help="every pending proposal: id, op, paths, age, stale, needs")
    q.set_defaults(func=do_list)
    q = psub.add_parser("show", parents=[common], help="one proposal: its diff against today's main, the "
                        "validator's verdict, the change in prompt size")
    q.add_argument("id", metavar="ID")
    q.set_defaults(func=do_show)
    q = psub.add_parser("accept", parents=[common], help="apply it onto today's main as your approved commit")
    q.add_argument("id", metavar="ID")
    q.add_argument("--note", default="", help="kept in the record with the decision")
    q.add_argument("-S", "--sign", action="store_true",
                   help="sign the commit with your key (it is signed anyway where allowed signers are set)")
    q.set_defaults(func=do_accept)
    q = psub.add_parser("reject", parents=[common], help="drop it; the note is kept in the record")
    q.add_argument("id", metavar="ID")
    q.add_argument("--note", default="", help="why (kept in the record)")
    q.set_defaults(func=do_reject)


def do_list(args: argparse.Namespace, ctx: Any) -> Outcome:
    from gitmemfs.admin import proposals

    return proposals.list_all(ctx.repo())


def do_show(args: argparse.Namespace, ctx: Any) -> Outcome:
    from gitmemfs.admin import proposals

    return proposals.show(ctx.repo(), args.id)


def do_accept(args: argparse.Namespace, ctx: Any) -> Outcome:
    from gitmemfs.admin import proposals
    from gitmemfs.core import hookless

    repo = ctx.repo()
    hookless.only_ours(repo)  # a person's command, maybe signing: no hook or program an agent planted runs
    return proposals.accept(repo, args.id, note=args.note, sign=args.sign)


def do_reject(args: argparse.Namespace, ctx: Any) -> Outcome:
    from gitmemfs.admin import proposals

    return proposals.reject(ctx.repo(), args.id, note=args.note)
