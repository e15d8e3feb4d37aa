"""`git memory`: the memory command. Subcommands live in cmd_*.py modules."""
from __future__ import annotations

import argparse
import sys
from typing import Sequence

from gitmemfs import __version__
from gitmemfs.cli import cmd_check, cmd_compile, cmd_edit, cmd_help, cmd_init, cmd_remote, cmd_view
from gitmemfs.cli.common import PAYLOAD_COMMANDS, Parser, add_global_options, boundary, emit
from gitmemfs.core.errors import UsageError
from gitmemfs.core.repo import Repo, open_repo

# Each module adds its subcommands; order is the order of `git memory -h`.
MODULES = (cmd_edit, cmd_view, cmd_init, cmd_check, cmd_remote, cmd_compile, cmd_help)
from gitmemfs.cli import cmd_mcp  # noqa: E402 - its own lines, so parallel branches merge cleanly

MODULES += (cmd_mcp,)  # git memory mcp; the SDK is imported only when it runs
from gitmemfs.cli import cmd_history  # noqa: E402 - its own lines, so parallel branches merge cleanly

MODULES += (cmd_history,)  # search, log, show, diff, undo, restore

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

    def __init__(self, args: argparse.Namespace, parser: argparse.ArgumentParser):
        self.args = args
        self.parser = parser  # for `help`, which prints any command's help
        self.json: bool = bool(getattr(args, "json", False))
        self.quiet: bool = bool(getattr(args, "quiet", False))
        self.memory_dir: str | None = getattr(args, "memory_dir", None)

    def repo(self, *, require_memory: bool = True) -> Repo:
        return open_repo(self.memory_dir, require_memory=require_memory)


def build_parser() -> Parser:
    parser = Parser(prog="git memory", description=DESCRIPTION, epilog=EPILOG,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    add_global_options(parser, suppress=False)
    parser.add_argument("--version", action="version", version=f"git-memfs {__version__}")
    # The same options after the subcommand (`git memory view x --json`).
    common = Parser(add_help=False)
    add_global_options(common, suppress=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser,
                                title="commands")
    for module in MODULES:
        module.register(sub, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    return boundary(list(sys.argv[1:] if argv is None else argv), _main)


def _main(argv: Sequence[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        raise UsageError("a command is required, e.g. git memory view system/persona.md",
                         details={"usage": parser.format_usage().strip()})
    ctx = Context(args, parser)
    return emit(args.func(args, ctx), as_json=ctx.json, quiet=ctx.quiet,
                payload=args.command in PAYLOAD_COMMANDS)


if __name__ == "__main__":
    sys.exit(main())
