"""Read-only inspection: `git memory view`."""
from __future__ import annotations

import argparse

from gitmemfs.core.errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from gitmemfs.core.outcome import Outcome


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("view", parents=[common], help="print a memory file, or list a folder",
                       description="Print a memory file as stored, or list a folder's files with "
                                   "their descriptions. --range and -n number the body lines, the "
                                   "same numbers insert uses.")
    p.add_argument("path", metavar="PATH")
    p.add_argument("--range", metavar="A:B", type=_range, help="body lines A to B (B = -1: to the end)")
    p.add_argument("-n", "--line-numbers", action="store_true", help="number the body lines")
    p.set_defaults(func=do_view)


def _range(text: str) -> tuple[int, int]:
    try:
        a, b = text.split(":")
        return int(a), int(b)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--range takes A:B, e.g. 1:20 or 5:-1, got {text!r}") from None


def do_view(args: argparse.Namespace, ctx: Any) -> Outcome:
    if args.range and args.range[0] < 1:
        raise UsageError("--range starts at line 1")
    from gitmemfs.edit.editor import Editor

    # A read: no writer lock, no clean check (it works behind a writer and on a
    # read-only mount, as show and search do).
    return Editor(ctx.repo()).view(args.path, view_range=args.range, numbered=args.line_numbers)
