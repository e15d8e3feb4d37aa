"""`git memory-patch`: apply one apply_patch document as one commit."""
from __future__ import annotations

import argparse
import os
import stat
import sys
from typing import Sequence

from gitmemfs import __version__
from gitmemfs.cli.common import boundary, emit
from gitmemfs.cli.parser import Parser, add_global_options
from gitmemfs.core import memfile
from gitmemfs.core.errors import UsageError
from gitmemfs.core.outcome import Outcome
from gitmemfs.core.repo import open_repo
from gitmemfs.edit.patch import apply as patch_engine

DESCRIPTION = """\
Apply one patch in the apply_patch format (the memory_apply_patch tool's input)
to the memory repository as a single commit whose subject is REASON. Every file
is planned and validated before anything is written; if any part fails, nothing
changes."""

EPILOG = """\
format:
  *** Begin Patch
  *** Add File: reference/projects/garden.md
  +Tomatoes go in after the last frost.
  *** Update File: system/human.md
  *** Move to: system/people.md          (optional: rename while updating)
  @@ ## Preferences                       (optional anchor: a line before the change)
   Likes tea.
  -Works late.
  +Works early since May 2025.
  *** Delete File: reference/old.md
  *** End Patch

  Hunk lines start with ' ' (context), '-' (remove) or '+' (add) and must match
  whole lines of the file exactly, once. End a hunk with '*** End of File' to
  pin it to the end of the file (a hunk of only '+' lines then appends).
  An added file without frontmatter gets "description: Memory block <path>".

exit status: 0 done, 1 refused or failed, 2 usage, 3 busy (retry), 4 environment.
See man git-memory-patch."""


def build_parser() -> Parser:
    parser = Parser(prog="git memory-patch", description=DESCRIPTION, epilog=EPILOG,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    add_global_options(parser, suppress=False)
    parser.add_argument("--version", action="version", version=f"git-memfs {__version__}")
    parser.add_argument("-m", "--reason", required=True,
                        help="why this change is made; becomes the commit subject (required)")
    parser.add_argument("--propose", action="store_true",
                        help="do not apply the patch: keep it as a proposal for a person to accept or "
                             "reject (git memory proposals); for what only a person may change")
    parser.add_argument("patch_file", metavar="PATCH_FILE", nargs="?",
                        help="the patch; '-' or omitted with a pipe reads stdin")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    return boundary(list(sys.argv[1:] if argv is None else argv), _main, json_commands=())


def _main(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(argv)
    text = read_patch(args.patch_file)
    repo = open_repo(args.memory_dir)
    repo.propose = bool(args.propose)
    result: Outcome = patch_engine.apply(repo, text, args.reason)
    return emit(result, as_json=bool(args.json), quiet=bool(args.quiet))


def read_patch(name: str | None) -> str:
    """The patch text from a file, or stdin for '-' (or no name and a pipe)."""
    if name is None:
        try:
            mode = os.fstat(sys.stdin.fileno()).st_mode
        except (OSError, ValueError, AttributeError):
            mode = 0
        if not (stat.S_ISFIFO(mode) or stat.S_ISREG(mode)):
            raise UsageError("git memory-patch: give the patch as PATCH_FILE, or on stdin "
                             "(git memory-patch -m REASON - < change.patch)")
        name = "-"
    if name == "-":
        data = sys.stdin.buffer.read()
        where = "<stdin>"
    else:
        try:
            with open(name, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise UsageError(f"git memory-patch: cannot read patch file {name}: "
                             f"{exc.strerror or exc}") from None
        where = os.path.abspath(name)
    try:
        return memfile.decode_strict(data, where)
    except memfile.EncodingProblem as exc:
        raise UsageError(f"git memory-patch: {exc}") from None


if __name__ == "__main__":
    sys.exit(main())
