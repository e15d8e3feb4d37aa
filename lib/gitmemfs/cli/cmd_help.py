"""`git memory help [COMMAND]`: the manual text without man.

`git memory --help` is turned into `man git-memory` by git itself; that needs man
and the installed page (and fails on Git for Windows, which wants HTML). This prints
the same parser-generated text the man page is built from, anywhere.
"""
from __future__ import annotations

import argparse

from gitmemfs.cli.common import Report
from gitmemfs.core.errors import UsageError

TYPE_CHECKING = False  # `typing` costs ~7 ms of every command's start-up
if TYPE_CHECKING:
    from typing import Any


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("help", parents=[common], help="show help for git memory or one of its commands",
                       description="Print the help of git memory or of COMMAND (the text the man "
                                   "page is generated from). Works where man or the page is missing.")
    p.add_argument("topic", metavar="COMMAND", nargs="?", help="a git memory subcommand")
    p.set_defaults(func=do_help)


def do_help(args: argparse.Namespace, ctx: Any) -> Report:
    parser = ctx.parser  # the full parser, handed over by the console script
    if not args.topic:
        return Report(parser.format_help(), {"command": None})
    choices = _subcommands(parser)
    if args.topic not in choices:
        raise UsageError(f"no such command '{args.topic}'; commands: {', '.join(sorted(choices))}")
    return Report(choices[args.topic].format_help(), {"command": args.topic})


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:  # argparse has no public accessor for subparsers
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}
