"""HEAD's commit read from git's ref files, when that is certain: what `git rev-parse
HEAD` says after a commit, without starting it. Only a symbolic HEAD pointing at a
branch whose loose ref file holds an object id; anything else (a detached HEAD, a
packed ref, the reftable backend) is None, and the caller asks git."""
from __future__ import annotations

import os

_HEX = frozenset("0123456789abcdef")


def head_commit(git_dir: str, common_dir: str) -> str | None:
    """HEAD's commit in the repository at `git_dir` (its shared folder `common_dir`),
    or None when only git can tell."""
    try:
        with open(os.path.join(git_dir, "HEAD"), encoding="utf-8") as fh:
            head = fh.read().strip()
        if not head.startswith("ref: refs/heads/"):
            return None
        with open(os.path.join(common_dir, *head[5:].split("/")), encoding="utf-8") as fh:
            sha = fh.read().strip()
    except OSError:
        return None
    return sha if len(sha) in (40, 64) and _HEX.issuperset(sha) else None
