"""Store versions become commits (the pull half of the mapping, store.py).

Each unseen version of the store, oldest first, is a commit on refs/memory/store/tip:
the file at the memory's path (without its leading `/`) as that version left it,
author and committer its actor at its `created_at`, and the trailers `Memory-Op:`,
`Memory-Version:` and `Memory-Id:`. A version with the id of a memory we hold at
another path is a rename (the same memory id, a new path); a `deleted` version takes
the file away. The store's limits are checked here too, before anything is sent.
"""
from __future__ import annotations

import os
import tempfile
import unicodedata
from typing import Any, Iterator

from gitmemfs.core.errors import MemfsError
from gitmemfs.core.redact import redact
from gitmemfs.core.repo import Repo
from gitmemfs.remote import store_state as st

MAX_BYTES = 102_400            # the store's cap per memory (the SDK's docstrings)
MAX_MEMORIES = 2_000           # and per store
MAX_SEGMENTS = 20
MAX_PATH_BYTES = 1024


def limit_problem(path: str, data: bytes) -> str | None:
    """Why the store would refuse this file, checked before anything is sent."""
    wire = "/" + path
    if len(data) > MAX_BYTES:
        return f"{path}: {len(data)} bytes, over the store's {MAX_BYTES}-byte limit per memory"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return f"{path}: not UTF-8 text; a store memory holds text only"
    if len(path.split("/")) > MAX_SEGMENTS:
        return f"{path}: more than {MAX_SEGMENTS} path segments"
    if len(wire.encode("utf-8")) > MAX_PATH_BYTES:
        return f"{path}: path over {MAX_PATH_BYTES} bytes"
    if unicodedata.normalize("NFC", wire) != wire:
        return f"{path}: path is not in Unicode NFC"
    if any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in wire):
        return f"{path!r}: path has control or format characters"
    return None


def versions(client: Any, sid: str, since: str) -> Iterator[Any]:
    kw: dict[str, Any] = {"view": "full", "limit": 20}
    if since:
        kw["created_at_gte"] = since
    yield from client.beta.memory_stores.memory_versions.list(sid, **kw)


def _actor(v: Any) -> tuple[str, str]:
    who = getattr(v, "created_by", None)
    if who is None:
        return "unknown actor", "unknown@memory-store"
    kind = getattr(who, "type", "actor")
    ident = (getattr(who, "api_key_id", None) or getattr(who, "session_id", None) or
             getattr(who, "user_id", None) or getattr(who, "service_account_id", None) or "unknown")
    return f"{kind} {ident}", f"{ident}@memory-store"


def fetch(repo: Repo, client: Any, sid: str, state: dict[str, Any]) -> int:
    """Turn the store's unseen versions into commits on TIP; how many."""
    try:
        fresh = [v for v in versions(client, sid, state["since"]) if v.id not in state["seen"]]
    except Exception as err:  # the SDK's errors are its own classes, imported lazily
        raise st.api_error(err, "listing the store's versions") from err
    fresh.sort(key=lambda v: (v.created_at, v.id))
    top = st.tip(repo)
    fd, index = tempfile.mkstemp(prefix="store-index.", dir=repo.git_dir)
    os.close(fd)
    os.unlink(index)
    env = {"GIT_INDEX_FILE": index}
    try:
        if top:
            repo.git("read-tree", top, env=env)
        for v in fresh:
            top = _commit_version(repo, v, top, env, state)
            state["seen"].append(v.id)
            state["since"] = max(state["since"], v.created_at.strftime("%Y-%m-%dT%H:%M:%S.%fZ"))
    finally:
        if os.path.exists(index):
            os.unlink(index)
    if top:
        repo.git("update-ref", st.TIP, top)
    st.save(repo, state)
    return len(fresh)


def _commit_version(repo: Repo, v: Any, parent: str | None, env: dict[str, str],
                    state: dict[str, Any]) -> str:
    ids: dict[str, str] = state["ids"]
    old = next((p for p, i in ids.items() if i == v.memory_id), None)
    op = v.operation
    if v.redacted_at is not None:
        note = "content redacted in the store before it was fetched"
    else:
        path = (v.path or "/").lstrip("/")
        if old and (old != path or op == "deleted"):
            repo.git("update-index", "--force-remove", "--", old, env=env)
            ids.pop(old, None)
        elif op == "deleted":  # a memory we hold no id for (written by a write whose answer was lost)
            repo.git("update-index", "--force-remove", "--", path, env=env)
        if op != "deleted":
            blob = repo.git("hash-object", "-w", "--stdin", input=(v.content or "").encode("utf-8")).out.strip()
            state["blobs"][v.id] = blob
            res = repo.git("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env, check=False)
            if res.code:
                raise MemfsError(f"git memory: the store's memory at {redact('/' + path)!r} cannot be a file "
                                 "here (a git path rule or a file/folder clash); rename it through the API")
            ids[path] = v.memory_id
        note = f"{op} /{path}" if not old or old == path else f"{op} /{path} (was /{old})"
    tree = repo.git("write-tree", env=env).out.strip()
    name, email = _actor(v)
    when = v.created_at.strftime("%Y-%m-%dT%H:%M:%SZ")
    who = {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_AUTHOR_DATE": when,
           "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email, "GIT_COMMITTER_DATE": when}
    message = (f"store: {note}\n\nMemory-Op: {op}\nMemory-Version: {v.id}\nMemory-Id: {v.memory_id}\n")
    args = ["commit-tree", tree, *(["-p", parent] if parent else []), "-F", "-"]
    return repo.git(*args, input=message, env=who).out.strip()
