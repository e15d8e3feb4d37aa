"""`git memory help [COMMAND]`: the manual text without man.

`git memory --help` is turned into `man git-memory` by git itself; that needs man
and the installed page (and fails on Git for Windows, which wants HTML). This prints
the same parser-generated text the man page is built from, anywhere.
"""
from __future__ import annotations

import argparse
import os

import gitmemfs
from gitmemfs.cli.common import Report
from gitmemfs.core.errors import UsageError

TYPE_CHECKING = False  # `typing` costs ~7 ms of every command's start-up
if TYPE_CHECKING:
    from typing import Any


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("help", parents=[common], help="show help for git memory or one of its commands",
                       description="Print the help of git memory or of COMMAND, or of one of its own "
                                   "subcommands (git memory help mcp install): the text the man page "
                                   "is generated from. Works where man or the page is missing.")
    p.add_argument("topic", metavar="COMMAND", nargs="*", help="a git memory subcommand, and its subcommand")
    p.add_argument("--example", metavar="NAME", nargs="?", const="",
                   help="print the path of an example file shipped with git-memfs (the docs' "
                        "session.jsonl, the dream agent recipes); without NAME, list them")
    p.set_defaults(func=do_help)


# The example files ship inside the package (setup.cfg package_data), so the docs'
# tours work from a pip install, where the checkout's examples/ folder is absent.
EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(gitmemfs.__file__)), "examples")


def examples() -> list[str]:
    """The shipped example files, as paths relative to EXAMPLES, sorted."""
    found = []
    for folder, dirs, files in os.walk(EXAMPLES):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        found += [os.path.relpath(os.path.join(folder, name), EXAMPLES) for name in files]
    return sorted(found)


def do_help(args: argparse.Namespace, ctx: Any) -> Report:
    if args.example is not None:
        return _example(args.example)
    parser = ctx.parser  # the full parser, handed over by the console script
    for depth, word in enumerate(args.topic):
        choices = _subcommands(parser)
        if word not in choices:
            known = ", ".join(sorted(choices))
            if depth == 0:
                raise UsageError(f"no such command '{word}'; commands: {known}")
            before = " ".join(args.topic[:depth])
            raise UsageError(f"no such command '{before} {word}'; "
                             + (f"{before} has: {known}" if known else f"{before} has no subcommands"))
        parser = choices[word]
    return Report(parser.format_help(), {"command": " ".join(args.topic) or None})


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:  # argparse has no public accessor for subparsers
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _example(name: str) -> Report:
    names = examples()
    if not name:
        lines = [f"Example files shipped with git-memfs, in {EXAMPLES}:"] + [f"  {n}" for n in names]
        return Report("\n".join(lines), {"folder": EXAMPLES, "examples": names})
    if name not in names:
        raise UsageError(f"no example named '{name}'; examples: {', '.join(names)}")
    path = os.path.join(EXAMPLES, name)
    return Report(path, {"example": name, "path": path})
