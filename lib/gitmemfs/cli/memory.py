"""`git memory`: the memory command. Subcommands live in cmd_*.py modules."""
from __future__ import annotations

import sys

from gitmemfs.cli.common import PAYLOAD_COMMANDS, boundary, check_utf8_argv, emit
from gitmemfs.core.errors import UsageError
from gitmemfs.core.repo import Repo, choice_note, open_repo

TYPE_CHECKING = False  # `typing` costs ~7 ms of every command's start-up
if TYPE_CHECKING:
    import argparse
    from types import ModuleType
    from typing import Any, Sequence

    # The modules MODULES names, for readers and for the import contract (which then
    # sees these edges and would flag a cycle back to this module).
    from gitmemfs.cli import (  # noqa: F401
        cmd_admin,
        cmd_check,
        cmd_compile,
        cmd_config,
        cmd_edit,
        cmd_help,
        cmd_history,
        cmd_init,
        cmd_install,
        cmd_mcp,
        cmd_proposals,
        cmd_remote,
        cmd_review,
        cmd_serve,
        cmd_view,
    )
    from gitmemfs.cli.parser import Parser

# Each module adds its subcommands; order is the order of `git memory -h`. They are
# imported as the parser is built, so an edit loads cmd_edit alone (the others pull in
# `typing`, `re` and friends: ~15 ms of every edit otherwise). cmd_help comes last:
# `help` is built up to its own module, and must know every command before it.
MODULES = ("cmd_edit", "cmd_view", "cmd_init", "cmd_check", "cmd_remote", "cmd_compile", "cmd_config",
           "cmd_admin", "cmd_proposals", "cmd_mcp", "cmd_review", "cmd_serve", "cmd_install", "cmd_history",
           "cmd_help")
# Commands whose module is built alone: a harness runs `hook` on every turn.
ALONE = {"hook": "cmd_install"}


def module(name: str) -> ModuleType:
    return __import__(f"gitmemfs.cli.{name}", fromlist=["register"])

DESCRIPTION = """\
Git-native long-term memory for agents. A memory repository holds Markdown files
with YAML frontmatter; every edit is one validated commit whose subject is the
reason given with -m. system/*.md are pinned in the agent's prompt, other files
are external memory, skills/<name>/SKILL.md are skills."""

EPILOG = """\
exit status: 0 done, 1 refused or failed, 2 usage, 3 busy (retry), 4 environment
(not a memory repository, git missing, sandbox unavailable).
See git memory help COMMAND, or man git-memory."""


class Context:
    """What handlers need besides their own arguments."""

    def __init__(self, args: Any, parser: argparse.ArgumentParser | None = None):
        self.args = args
        self._parser = parser
        self.json: bool = bool(getattr(args, "json", False))
        self.quiet: bool = bool(getattr(args, "quiet", False))
        self.memory_dir: str | None = getattr(args, "memory_dir", None)
        self.opened: list[Repo] = []

    @property
    def parser(self) -> argparse.ArgumentParser:
        """The whole parser, for `help`, which prints any command's help."""
        if self._parser is None:
            self._parser = build_parser()
        return self._parser

    def repo(self, *, require_memory: bool = True) -> Repo:
        repo = open_repo(self.memory_dir, require_memory=require_memory)
        note = None if self.quiet or self.json else choice_note(self.memory_dir)
        if note:
            sys.stderr.write(note + "\n")
        self.opened.append(repo)
        return repo

    def close(self) -> None:
        """Let go of a head start no write session took (a refusal before one)."""
        for repo in self.opened:
            repo.stop_writing()


def build_parser(command: str | None = None) -> Parser:
    """The whole parser; with `command`, only up to the module that registers it (an
    edit pays for its own subcommands, not for all of them). Unknown: all of them."""
    import argparse

    from gitmemfs import __version__
    from gitmemfs.cli.parser import Parser, add_global_options

    parser = Parser(prog="git memory", description=DESCRIPTION, epilog=EPILOG,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    add_global_options(parser, suppress=False)
    parser.add_argument("--version", action="version", version=f"git-memfs {__version__}")
    # The same options after the subcommand (`git memory view x --json`).
    common = Parser(add_help=False)
    add_global_options(common, suppress=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser,
                                title="commands")
    for name in (ALONE[command],) if command in ALONE else MODULES:
        module(name).register(sub, common)
        if command is not None and command in sub.choices:
            break
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    return boundary(list(sys.argv[1:] if argv is None else argv), _main)


_EDIT_LINE: list[bool] = []  # set when cli/fastargs.py read the line: an edit or a hook, done once it answered


def run() -> None:
    """The console script: main(), then exit. After a line read by cli/fastargs.py it
    leaves at once (`os._exit`, output flushed): no thread, log or atexit work is
    pending there, and Python's tear-down of ~40 modules costs ~2 ms of every edit."""
    code = main()
    if _EDIT_LINE:
        import os

        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # a closed pipe: nothing more can be said
                pass
        os._exit(code)
    sys.exit(code)


def _main(argv: Sequence[str]) -> int:
    from gitmemfs.cli import fastargs

    if fastargs.command_word(argv) not in ("init", "clone"):  # those take folders and URLs only
        check_utf8_argv(argv)

    args: argparse.Namespace | fastargs.Args | None
    args = fastargs.parse(argv, lambda name: getattr(module("cmd_edit"), name)) or \
        fastargs.parse_hook(argv, lambda: module("cmd_install").do_hook)
    parser: Parser | None = None  # None: an edit's or a hook's usual line, read without argparse (cli/fastargs.py)
    if args is None:
        args, parser = _parse(argv)
    else:
        _EDIT_LINE.append(True)
    ctx = Context(args, parser)
    try:
        outcome = args.func(args, ctx)
    finally:
        ctx.close()
    return emit(outcome, as_json=ctx.json, quiet=ctx.quiet, payload=args.command in PAYLOAD_COMMANDS)


def _parse(argv: Sequence[str]) -> tuple[argparse.Namespace, Parser]:
    import argparse

    from gitmemfs.cli.fastargs import command_word

    command = command_word(argv)
    parser = build_parser(command)
    if command is not None and not any(command in a.choices for a in parser._actions
                                       if isinstance(a, argparse._SubParsersAction)):
        parser = build_parser()  # unknown: suggestions need every command
    args, extra = parser.parse_known_args(argv)
    if extra and args.command == "search" and not any(e.startswith("-") for e in extra):
        args.paths += extra  # `search QUERY --regex notes/`: a PATH after the options
    elif extra:
        parser.parse_args(argv)  # argparse's own error for what it did not know
    if not args.command:
        raise UsageError("a command is required, e.g. git memory view system/persona.md",
                         details={"usage": parser.format_usage().strip()})
    return args, parser


if __name__ == "__main__":
    sys.exit(main())
