"""Local commits become store writes (the push half of the mapping, store.py).

What is sent is the first-parent line from the store's tip to HEAD, each commit as
the difference from the one before it: a dream's `merge(dream)` commit is sent as
its merged result (its branch's own commits never separately), and a commit whose
parent is not where the store stands is still diffed against what the store has.
Per changed file: `create`; `update` with `precondition.content_sha256`, the SHA-256
of the file as the store has it; a rename (git's rename detection) is an `update` of
the same memory id with its new `path` (and content, if that changed too); `delete`
with `expected_content_sha256`.

A write that fails in a way that may be retried (store_state.retryable) raises
`Moved` and records nothing of that commit: the versions its earlier files made come
back on the next fetch as store commits, the rebase drops what they already hold, and
only the rest is sent again. A write is never repeated blind: each carries the SHA-256
it expects, so one that was applied (its answer lost) fails with 409 if sent again,
and the fetch shows it was done.
"""
from __future__ import annotations

import hashlib
from typing import Any

from gitmemfs.core.repo import Repo
from gitmemfs.remote import store_map
from gitmemfs.remote import store_state as st
from gitmemfs.remote.store_map import limit_problem


class Moved(Exception):
    """The store moved under a write, or the write's answer never came: replay."""


def plan(repo: Repo, tip: str | None) -> list[tuple[str, str]]:
    """(what the store has, commit) for each commit to send, oldest first."""
    chain = repo.git("rev-list", "--first-parent", "--reverse", f"{tip}..HEAD" if tip else "HEAD").lines()
    before = tip or empty_tree(repo)
    out = []
    for sha in chain:
        out.append((before, sha))
        before = sha
    return out


def empty_tree(repo: Repo) -> str:
    return repo.git("mktree", input="").out.strip()


def changes(repo: Repo, before: str, sha: str) -> list[tuple[str, str, str]]:
    """(status letter, path, path before) for each file that changed; renames found
    as git finds them (`-M`, half the content the same)."""
    out = repo.git("diff-tree", "-r", "-M", "-z", "--name-status", before, sha).out.split("\0")
    found, i = [], 0
    while i < len(out) - 1:
        status = out[i]
        if not status:
            break
        if status[0] in "RC":
            found.append((status[0], out[i + 2], out[i + 1]))
            i += 3
        else:
            found.append((status[0], out[i + 1], out[i + 1]))
            i += 2
    # A copy is a new memory like any other.
    return [("A", p, p) if s == "C" else (s, p, o) for s, p, o in found]


def limits(repo: Repo, steps: list[tuple[str, str]]) -> list[str]:
    """Why the store would refuse what these commits send, found before any is sent:
    a file over its limits, or more memories than a store holds after any step."""
    problems = []
    for _before, sha in steps:
        count = len(repo.git("ls-tree", "-r", "-z", "--name-only", sha).out.split("\0")) - 1
        if count > store_map.MAX_MEMORIES:
            problems.append(f"{count:,} files, over the store's limit of {store_map.MAX_MEMORIES:,} memories "
                            "(remove some, or keep a part in another store)")
            break
    for before, sha in steps:
        for status, path, _ in changes(repo, before, sha):
            if status != "D":
                problem = limit_problem(path, repo.git("cat-file", "blob", f"{sha}:{path}").raw)
                if problem and problem not in problems:
                    problems.append(problem)
    return problems


def _sha(repo: Repo, rev: str, path: str) -> str:
    return hashlib.sha256(repo.git("cat-file", "blob", f"{rev}:{path}").raw).hexdigest()


def push(repo: Repo, client: Any, sid: str, before: str, sha: str, state: dict[str, Any]) -> int:
    """Send one commit; how many writes. The state learns of them only when all landed."""
    import anthropic

    api = st.writer(client)
    ids: dict[str, str] = dict(state["ids"])
    seen: list[str] = []
    blobs: dict[str, str] = {}
    writes = 0
    for status, path, was in changes(repo, before, sha):
        try:
            if status == "D":
                mid = ids.get(path)  # the store's tip holds the file, so we hold its id
                if mid is None:
                    continue         # (never sent: deleting nothing is the side that loses nothing)
                api.memories.delete(mid, memory_store_id=sid, expected_content_sha256=_sha(repo, before, path))
                ids.pop(path)
                gone = api.memory_versions.list(sid, memory_id=mid, operation="deleted")
                seen.extend(v.id for v in gone)
            else:
                content = repo.git("cat-file", "blob", f"{sha}:{path}").raw.decode("utf-8")
                if status in "MR" and was in ids:
                    mid = ids[was]
                    same = repo.git("rev-parse", f"{before}:{was}").out == repo.git("rev-parse", f"{sha}:{path}").out
                    got = api.memories.update(
                        mid, memory_store_id=sid,
                        **({} if same else {"content": content}),
                        **({"path": "/" + path} if path != was else {}),
                        precondition={"type": "content_sha256", "content_sha256": _sha(repo, before, was)})
                    ids.pop(was)
                else:
                    got = api.memories.create(sid, path="/" + path, content=content)
                ids[path] = got.id
                seen.append(got.memory_version_id)
                blobs[got.memory_version_id] = repo.git("rev-parse", f"{sha}:{path}").out.strip()
            writes += 1
        except anthropic.APIError as err:
            if st.retryable(err):
                raise Moved() from err
            raise st.api_error(err, f"writing /{path} to store {sid}") from err
    state["ids"] = ids
    state["seen"].extend(seen)
    state["blobs"].update(blobs)
    return writes
