"""A proposal: a change only a person may make, kept as a commit for that person.

An agent's edit that is refused only for want of a person's approval (a read_only
file, `.memfs.config.json`, protection, a layout change: `errors.NeedsPerson`) can be
proposed instead (`--propose`). The write path validates it as the person's commit
would be validated (every rule but the person-only ones must pass) and records it
here: a commit on top of today's main, built with a private index and
`commit-tree`, named by `refs/memory/proposals/<id>`. Main, the index and the work
tree are never touched. `admin/proposals.py` lists, shows, accepts and rejects them;
the record of what was decided is a log of JSON lines in the git dir.
"""
from __future__ import annotations

import json
import os
import secrets
import time

from gitmemfs.core.errors import MemfsError
from gitmemfs.core.repo import Repo

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Mapping, Sequence

PREFIX = "refs/memory/proposals/"
NEEDS_TRAILER = "Memory-Proposal-Needs"  # the approvals the proposal lacks
ACCEPTED_TRAILER = "Memory-Proposal"  # on the person's commit that accepts one
LOG = "memory-proposals.log"  # one JSON object a line: every accept and reject, with its note


def new_id(now: float | None = None) -> str:
    """`YYYYMMDDHHMMSS-<8 hex>` in UTC, as dream ids are."""
    stamp = time.strftime("%Y%m%d%H%M%S", time.gmtime(time.time() if now is None else now))
    return f"{stamp}-{secrets.token_hex(4)}"


def is_id(text: str) -> bool:
    stamp, _, suffix = text.partition("-")
    return (len(stamp) == 14 and stamp.isdigit() and len(suffix) == 8
            and all(c in "0123456789abcdef" for c in suffix))


def ref(ident: str) -> str:
    if not is_id(ident):
        raise MemfsError(f"proposals: {ident!r} is not a proposal id (YYYYMMDDHHMMSS-xxxxxxxx); "
                         "see git memory proposals list")
    return PREFIX + ident


def make(repo: Repo, head: str | None, changes: Mapping[str, bytes | None], message: str,
         author: Sequence[str]) -> tuple[str, str]:
    """Record `changes` on top of `head` as a new proposal: (its id, its commit)."""
    modes: dict[str, str] = {}
    if head:
        listing = repo.git("ls-tree", "-r", "-z", "--full-tree", head, "--",
                           *[f":(literal){p}" for p in changes]).zsplit()
        for line in listing:
            meta, _, path = line.partition("\t")
            modes[path] = meta.split(" ")[0]
    feed = b""
    for path, data in changes.items():
        name = os.fsencode(path)
        if data is None:
            feed += b"0 " + b"0" * 40 + b"\t" + name + b"\0"
            continue
        blob = repo.git("hash-object", "-w", "--stdin", input=data).out.strip()
        feed += f"{modes.get(path, '100644')} {blob}\t".encode() + name + b"\0"
    index = os.path.join(repo.git_dir, f"proposal-index-{secrets.token_hex(8)}")  # git creates it
    try:
        env = {"GIT_INDEX_FILE": index}
        if head:
            repo.git("read-tree", head, env=env)
        repo.git("update-index", "-z", "--index-info", input=feed, env=env)
        tree = repo.git("write-tree", env=env).out.strip()
    finally:
        for leftover in (index, index + ".lock"):
            if os.path.exists(leftover):
                os.unlink(leftover)
    sha = repo.git(*author, "commit-tree", tree, *(["-p", head] if head else []), "-F", "-",
                   input=message).out.strip()
    ident = new_id()
    # The empty old value: the ref must not exist yet (an id is never reused).
    repo.git("update-ref", "-m", "proposed", ref(ident), sha, "")
    return ident, sha


def refs(repo: Repo) -> dict[str, str]:
    """Every pending proposal: id -> commit."""
    out = repo.git("for-each-ref", "--format=%(refname) %(objectname)", PREFIX).out
    found = {}
    for line in out.splitlines():
        name, _, sha = line.partition(" ")
        ident = name[len(PREFIX):]
        if is_id(ident):
            found[ident] = sha
    return found


def log(repo: Repo, entry: dict[str, Any]) -> None:
    """Append one decision to the record (the git dir's LOG)."""
    line = json.dumps({**entry, "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, sort_keys=True)
    with open(os.path.join(repo.common_dir, LOG), "a", encoding="utf-8") as fh:
        fh.write(line + "\n")


def decisions(repo: Repo) -> list[dict[str, Any]]:
    try:
        with open(os.path.join(repo.common_dir, LOG), encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except FileNotFoundError:
        return []
    out = []
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            out.append(entry)
    return out

