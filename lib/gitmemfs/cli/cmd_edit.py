"""The edit subcommands of `git memory` and `git memory call`."""
from __future__ import annotations

import os
import stat
import sys

from gitmemfs.core.errors import MemfsError, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse  # only register() needs it at run time: an edit's usual line never does
    from typing import Any

    from gitmemfs.core.outcome import Outcome
    from gitmemfs.edit.editor import Editor


# Operations are imported by the handlers: a command pays only for what it runs.
SCHEMAS = ("letta", "anthropic")  # toolcall.SCHEMAS (tests check they agree)

REASON_HELP = "why this change is made; becomes the commit subject (required)"
PROPOSE_HELP = ("do not apply the change: keep it as a proposal for a person to accept or reject "
                "(git memory proposals); for what only a person may change, such as a read_only file")


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    def add(name: str, help_text: str, aliases: tuple[str, ...] = ()) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = sub.add_parser(name, aliases=list(aliases), parents=[common],
                                                    help=help_text, description=help_text)
        if name != "call":
            p.add_argument("--propose", action="store_true", help=PROPOSE_HELP)
        return p

    p = add("create", "create a memory file (fails if it exists)")
    p.add_argument("path", metavar="PATH", help="memory path, e.g. system/contacts.md")
    p.add_argument("file_text", metavar="FILE_TEXT", nargs="?",
                   help="the body; '-' or omitted with a pipe reads stdin")
    p.add_argument("-d", "--description", help="one-line description (frontmatter); required but for a "
                   "letta-root MEMORY.md index, which has none")
    p.add_argument("-m", "--reason", required=True, help=REASON_HELP)
    p.set_defaults(func=do_create)

    p = add("str_replace", "replace text in a file's body (must match once unless --all)",
            ("str-replace",))
    p.add_argument("path", metavar="PATH")
    p.add_argument("old", metavar="OLD", help="exact text to find in the body")
    p.add_argument("new", metavar="NEW", help="replacement text (may be empty)")
    p.add_argument("--all", action="store_true", help="replace every occurrence")
    p.add_argument("-m", "--reason", required=True, help=REASON_HELP)
    p.set_defaults(func=do_str_replace)

    p = add("insert", "insert text so it starts at body line LINE (1-indexed; past the end appends)")
    p.add_argument("path", metavar="PATH")
    p.add_argument("line", metavar="LINE", type=_integer, help="body line number, 1-indexed")
    p.add_argument("text", metavar="TEXT", help="the lines to insert (may be empty for a blank line)")
    p.add_argument("-m", "--reason", required=True, help=REASON_HELP)
    p.set_defaults(func=do_insert)

    p = add("delete", "delete a memory file, or a folder recursively (PATH/)")
    p.add_argument("path", metavar="PATH")
    p.add_argument("-m", "--reason", required=True, help=REASON_HELP)
    p.set_defaults(func=do_delete)

    p = add("rename", "move a memory file or folder (the destination must not exist)")
    p.add_argument("old_path", metavar="OLD_PATH")
    p.add_argument("new_path", metavar="NEW_PATH")
    p.add_argument("-m", "--reason", required=True, help=REASON_HELP)
    p.set_defaults(func=do_rename)

    p = add("update_description", "change a file's frontmatter description", ("update-description",))
    p.add_argument("path", metavar="PATH")
    p.add_argument("description", metavar="DESCRIPTION")
    p.add_argument("-m", "--reason", required=True, help=REASON_HELP)
    p.set_defaults(func=do_update_description)

    p = add("call", "run one memory tool call given as JSON; always answers in JSON")
    p.add_argument("payload", metavar="JSON", nargs="?",
                   help="the tool call's arguments; '-' or omitted with a pipe reads stdin")
    p.add_argument("--schema", choices=SCHEMAS, default="letta",
                   help="letta: upstream memory / memory_apply_patch (default); "
                        "anthropic: Anthropic's memory tool under /memories")
    p.add_argument("--propose", action="store_true",
                   help="propose every write of the call instead of applying it (as \"propose\": true does)")
    p.add_argument("--adopt-outside-changes", action="store_true",
                   help="before a write, commit files changed beside the tools as their own commit "
                        "('outside change', your git identity) instead of refusing the write")
    p.set_defaults(func=do_call)


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        import argparse

        raise argparse.ArgumentTypeError(f"LINE must be an integer, got {text!r}") from None


def read_stdin_arg(value: str | None) -> str | None:
    """'-' reads stdin; None reads stdin only when it is a pipe or a file."""
    if value == "-":
        return _read_stdin()
    if value is None:
        try:
            mode = os.fstat(sys.stdin.fileno()).st_mode
        except (OSError, ValueError, AttributeError):
            return None
        if stat.S_ISFIFO(mode) or stat.S_ISREG(mode):
            return _read_stdin()
    return value


def _read_stdin() -> str:
    """stdin as UTF-8, refused with one clear line when it is not (UTF-16, NUL, bad bytes)."""
    from gitmemfs.core.memfile import EncodingProblem, decode_strict

    data = sys.stdin.buffer.read()
    try:
        text = decode_strict(data, "stdin")
    except EncodingProblem as exc:
        raise MemfsError(f"memory: {exc.args[0]} "
                         "Nothing was changed.") from None
    return text


def editor(ctx: Any, args: argparse.Namespace) -> Editor:
    repo = ctx.repo()
    repo.propose = bool(getattr(args, "propose", False))
    # The lock and the clean check's status first: git works while the editor loads.
    # After any stdin was read: the lock is never held waiting on a pipe.
    repo.start_writing()
    from gitmemfs.edit.editor import Editor

    return Editor(repo)


def do_create(args: argparse.Namespace, ctx: Any) -> Outcome:
    text = read_stdin_arg(args.file_text)
    return editor(ctx, args).create(args.path, args.description, text, args.reason, flag="-d")


def do_str_replace(args: argparse.Namespace, ctx: Any) -> Outcome:
    return editor(ctx, args).str_replace(args.path, args.old, args.new, args.reason, replace_all=args.all)


def do_insert(args: argparse.Namespace, ctx: Any) -> Outcome:
    return editor(ctx, args).insert(args.path, args.line, args.text, args.reason, strict=True)


def do_delete(args: argparse.Namespace, ctx: Any) -> Outcome:
    return editor(ctx, args).delete(args.path, args.reason)


def do_rename(args: argparse.Namespace, ctx: Any) -> Outcome:
    return editor(ctx, args).rename(args.old_path, args.new_path, args.reason)


def do_update_description(args: argparse.Namespace, ctx: Any) -> Outcome:
    return editor(ctx, args).update_description(args.path, args.description, args.reason)


def do_call(args: argparse.Namespace, ctx: Any) -> Outcome:
    from gitmemfs.tools.toolcall import call

    ctx.json = True  # the tool-call interface always answers in JSON
    payload = read_stdin_arg(args.payload)
    if payload is None or not payload.strip():
        raise UsageError("git memory call: give the tool call as a JSON argument or on stdin")
    return call(payload, ctx.repo, schema=args.schema, adopt=args.adopt_outside_changes, propose=args.propose)
