"""`git dream`: reflect on a transcript and tidy memory in a sandboxed worktree."""
from __future__ import annotations

import sys
from typing import Sequence

from ..errors import UsageError
from .common import boundary


def main(argv: Sequence[str] | None = None) -> int:
    return boundary(list(sys.argv[1:] if argv is None else argv), _main)


def _main(argv: Sequence[str]) -> int:
    raise UsageError("git dream is not implemented yet")


if __name__ == "__main__":
    sys.exit(main())
