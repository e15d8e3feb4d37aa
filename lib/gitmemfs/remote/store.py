"""A hosted memory store as a remote: `git memory clone anthropic-store:<id>` (issue 41).

The mapping (docs/remotes-and-fleets.md, "Hosted stores"):

- a memory is a file at its path without the leading `/`;
- a store version is a commit on refs/memory/store/tip: author is its actor
  (`api_actor apikey_…`, `session_actor …`), date its created_at, trailers
  `Memory-Op: <created|modified|deleted>`, `Memory-Version: memver_…`, `Memory-Id: mem_…`;
- a local commit is pushed file by file as create / update with
  `precondition.content_sha256` / delete with `expected_content_sha256`, the hash
  of the parent commit's content: a 409 (the store moved) or a lost answer is a
  replay, as a refused push is for git remotes: fetch the new versions, rebase,
  retry, until the sync deadline. A version we caused and whose answer was lost
  comes back as a store commit, and the rebase drops the now-empty local change, so
  nothing is applied twice.

The SDK (`[anthropic]` extra) is imported here only. The key is read from
$ANTHROPIC_API_KEY by this process and given to the SDK in memory; it is never on a
command line, in .git/config or in any output. $ANTHROPIC_BASE_URL picks the endpoint.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
import unicodedata
from typing import Any, Iterator

from gitmemfs.core import git, oserrors
from gitmemfs.core.errors import MemfsError, UsageError
from gitmemfs.core.outcome import Outcome
from gitmemfs.core.redact import redact
from gitmemfs.core.repo import Repo, describe_git_dir, read_config
from gitmemfs.gate import check, hooks
from gitmemfs.remote.backoff import Backoff
from gitmemfs.remote.clone import _check_destination, _make_parent
from gitmemfs.remote.sync import SyncResult, backup_ref, deadline_of

PREFIX = "anthropic-store:"
TIP = "refs/memory/store/tip"
STATE = "memory-store.json"
MAX_BYTES = 102_400            # the store's cap per memory (the SDK's docstrings)
MAX_SEGMENTS = 20
MAX_PATH_BYTES = 1024


def store_id_of(target: str | None) -> str | None:
    """The store id when `target` names a hosted store, else None."""
    if not target or not target.startswith(PREFIX):
        return None
    sid = target[len(PREFIX):]
    if not sid or not all(c.isalnum() or c in "_-" for c in sid):
        raise UsageError(f"git memory clone: {target!r} is not anthropic-store:<store id> (memstore_…)")
    return sid


def _client() -> Any:
    key = os.environ.get("ANTHROPIC_API_KEY")
    if not key:
        raise MemfsError("git memory: $ANTHROPIC_API_KEY is not set; export it (it is never read from "
                         "argv or config)", code=4)
    try:
        import anthropic
    except ImportError:
        raise MemfsError("git memory: a hosted store needs the SDK: pip install 'git-memfs[anthropic]'",
                         code=4) from None
    return anthropic.Anthropic(api_key=key, base_url=os.environ.get("ANTHROPIC_BASE_URL") or None,
                               max_retries=2)


def _api_error(err: Exception, what: str) -> MemfsError:
    status = getattr(err, "status_code", None)
    said = f"HTTP {status}" if status else type(err).__name__
    return MemfsError(f"git memory: {what} failed ({said}): {redact(str(err))[:300]}", code=1)


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


# -- state ------------------------------------------------------------------

def _load(repo: Repo) -> dict[str, Any]:
    try:
        with open(os.path.join(repo.git_dir, STATE), encoding="utf-8") as f:
            state: dict[str, Any] = json.load(f)
    except FileNotFoundError:
        state = {}
    state.setdefault("seen", [])
    state.setdefault("since", "")
    state.setdefault("ids", {})       # path -> memory id
    state.setdefault("blobs", {})     # version id -> the git blob of its content
    state.setdefault("redacted", [])  # version ids whose redaction was followed
    return state


def _save(repo: Repo, state: dict[str, Any]) -> None:
    path = os.path.join(repo.git_dir, STATE)
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(state, f)
    os.replace(path + ".tmp", path)


def _tip(repo: Repo) -> str | None:
    res = repo.git("rev-parse", "-q", "--verify", TIP + "^{commit}", check=False)
    return res.out.strip() if res.code == 0 else None


# -- pulling: versions become commits ------------------------------------------

def _versions(client: Any, sid: str, since: str) -> Iterator[Any]:
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
        fresh = [v for v in _versions(client, sid, state["since"]) if v.id not in state["seen"]]
    except Exception as err:  # the SDK's errors are its own classes, imported lazily
        raise _api_error(err, "listing the store's versions") from err
    fresh.sort(key=lambda v: (v.created_at, v.id))
    tip = _tip(repo)
    fd, index = tempfile.mkstemp(prefix="store-index.", dir=repo.git_dir)
    os.close(fd)
    os.unlink(index)
    env = {"GIT_INDEX_FILE": index}
    try:
        if tip:
            repo.git("read-tree", tip, env=env)
        for v in fresh:
            tip = _commit_version(repo, v, tip, env, state)
            state["seen"].append(v.id)
            state["since"] = max(state["since"], v.created_at.strftime("%Y-%m-%dT%H:%M:%S.%fZ"))
    finally:
        if os.path.exists(index):
            os.unlink(index)
    if tip:
        repo.git("update-ref", TIP, tip)
    _save(repo, state)
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
        if op != "deleted":
            blob = repo.git("hash-object", "-w", "--stdin", input=(v.content or "").encode("utf-8")).out.strip()
            state["blobs"][v.id] = blob
            res = repo.git("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env, check=False)
            if res.code:
                raise MemfsError(f"git memory: the store's memory at {redact('/' + path)!r} cannot be a file "
                                 "here (a git path rule or a file/folder clash); rename it through the API")
            ids[path] = v.memory_id
        note = f"{op} /{path}"
    tree = repo.git("write-tree", env=env).out.strip()
    name, email = _actor(v)
    when = v.created_at.strftime("%Y-%m-%dT%H:%M:%SZ")
    who = {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_AUTHOR_DATE": when,
           "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email, "GIT_COMMITTER_DATE": when}
    message = (f"store: {note}\n\nMemory-Op: {op}\nMemory-Version: {v.id}\nMemory-Id: {v.memory_id}\n")
    args = ["commit-tree", tree, *(["-p", parent] if parent else []), "-F", "-"]
    return repo.git(*args, input=message, env=who).out.strip()


# -- clone ----------------------------------------------------------------------

def clone(sid: str, directory: str | None, *, layout: str | None = None) -> Outcome:
    dest = os.path.abspath(os.path.expanduser(directory or sid))
    client = _client()
    existed = _check_destination(dest)
    try:
        info = client.beta.memory_stores.retrieve(sid)
    except Exception as err:
        raise _api_error(err, f"reading memory store {sid}") from err
    created = _make_parent(dest)
    try:
        oserrors.make_folders(dest, "git memory clone")
        git.run(["init", "-q", "-b", "main", dest])
        found = describe_git_dir(dest)
        assert found is not None
        repo = Repo(root=found[0], git_dir=found[1], common_dir=found[2], config=read_config(dest))
        repo.git("config", "--local", "memory.repo", "true")
        repo.git("config", "--local", "memory.store", PREFIX + sid)
        if layout:
            repo.git("config", "--local", "memory.layout", layout)
        state = _load(repo)
        count = fetch(repo, client, sid, state)
        tip = _tip(repo)
        if tip:
            repo.git("reset", "-q", "--hard", tip)
        repo.reload_config()
        note = hooks.install_for_init(repo)
    except BaseException:
        if existed:
            for name in os.listdir(dest):
                p = os.path.join(dest, name)
                shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.unlink(p)
        else:
            shutil.rmtree(dest, ignore_errors=True)
        if created:
            shutil.rmtree(created, ignore_errors=True)
        raise
    return Outcome(f"Cloned memory store {sid} ({info.name}) into {dest}: {count} versions as commits{note}",
                   extra={"path": dest, "store": sid, "versions": count, "head": tip, "branch": "main"})


# -- sync -----------------------------------------------------------------------

class _Moved(Exception):
    """The store moved under a write (409) or the answer was lost: replay."""


def sync(repo: Repo, *, deadline: float | None = None) -> SyncResult:
    sid = (repo.cfg("memory.store") or "")[len(PREFIX):]
    client = _client()
    limit = time.monotonic() + deadline_of(repo, deadline)
    with repo.lock():
        if repo.git("status", "--porcelain", "--untracked-files=no").out.strip():
            return SyncResult("dirty", "Cannot sync: the work tree has uncommitted changes; commit them first")
        state = _load(repo)
        pulled = pushed = attempts = 0
        backup = None
        backoff = Backoff()
        while True:
            pulled += fetch(repo, client, sid, state)
            tip = _tip(repo)
            head = repo.head()
            if tip is None and head is None:
                return SyncResult("clean", "Nothing to sync: the store and the memory are empty")
            if tip and (head is None or _is_ancestor(repo, head, tip)):
                if head != tip:
                    repo.git("reset", "-q", "--keep", tip)
                    return SyncResult("pulled", f"Pulled {pulled} store versions", pulled=pulled)
                state_name = "pushed" if pushed else "clean"
                return SyncResult(state_name, f"Pushed {pushed} commits to store {sid}" if pushed
                                  else "Up to date with the store", pushed=pushed, pulled=pulled,
                                  backup_ref=backup, push_attempts=attempts)
            if tip and not _is_ancestor(repo, tip, head):
                backup = backup or backup_ref(repo, head)  # type: ignore[arg-type]
                res = repo.git("rebase", "-q", tip, check=False)
                if res.code:
                    repo.git("rebase", "--abort", check=False)
                    return SyncResult("conflict", f"Cannot sync: local commits conflict with the store's "
                                      f"versions; they stay as they were (backup {backup})",
                                      backup_ref=backup, pulled=pulled)
                continue
            commits = repo.git("rev-list", "--reverse", f"{tip}..HEAD" if tip else "HEAD").lines()
            problems = _limits(repo, commits) or _rules(repo, tip)
            if problems:
                return SyncResult("check_failed", "Refused, nothing sent: " + "; ".join(problems[:5]),
                                  problems=problems)
            try:
                for sha in commits:
                    attempts += 1
                    _push_commit(repo, client, sid, sha, state)
                    repo.git("update-ref", TIP, sha)
                    _save(repo, state)
                    pushed += 1
            except _Moved:
                _save(repo, state)
                if time.monotonic() > limit:
                    return SyncResult("push_failed", f"The store kept moving; gave up after the deadline "
                                      f"({pushed} commits pushed); sync again", pushed=pushed,
                                      push_attempts=attempts)
                # A jittered, growing wait, as a refused push to a git remote gets.
                time.sleep(min(backoff.refused(), max(0.0, limit - time.monotonic())))
                continue


def _is_ancestor(repo: Repo, a: str, b: str | None) -> bool:
    return b is not None and repo.git("merge-base", "--is-ancestor", a, b, check=False).code == 0


def _changes(repo: Repo, sha: str) -> list[tuple[str, str]]:
    parent = repo.git("rev-parse", "-q", "--verify", sha + "^", check=False).out.strip()
    args = ["diff-tree", "-r", "--no-renames", "-z", "--name-status", parent, sha] if parent else \
        ["diff-tree", "-r", "--root", "--no-renames", "-z", "--name-status", sha]
    out = repo.git(*args).out.split("\0")
    if not parent:
        out = out[1:]      # --root prints the commit first
    return [(out[i], out[i + 1]) for i in range(0, len(out) - 1, 2) if out[i]]


def _limits(repo: Repo, commits: list[str]) -> list[str]:
    problems = []
    for sha in commits:
        for status, path in _changes(repo, sha):
            if status != "D":
                data = repo.git("cat-file", "blob", f"{sha}:{path}").raw
                problem = limit_problem(path, data)
                if problem and problem not in problems:
                    problems.append(problem)
    return problems


def _rules(repo: Repo, tip: str | None) -> list[str]:
    """The memory rules over what is to be sent, as sync checks a push to a git remote
    (a commit made past the hooks is judged here)."""
    report = check.commit_range(repo.root, f"{tip}..HEAD") if tip else check.tree(repo.root, "HEAD")
    return [] if report.ok else report.lines()


def _push_commit(repo: Repo, client: Any, sid: str, sha: str, state: dict[str, Any]) -> None:
    import anthropic

    api = client.with_options(max_retries=0).beta.memory_stores
    ids: dict[str, str] = state["ids"]
    for status, path in _changes(repo, sha):
        try:
            if status == "D":
                old = repo.git("cat-file", "blob", f"{sha}^:{path}").raw
                mid = ids[path]
                api.memories.delete(mid, memory_store_id=sid,
                                    expected_content_sha256=hashlib.sha256(old).hexdigest())
                ids.pop(path)
                gone = api.memory_versions.list(sid, memory_id=mid, operation="deleted")
                state["seen"].extend(v.id for v in gone)
                continue
            content = repo.git("cat-file", "blob", f"{sha}:{path}").raw.decode("utf-8")
            blob = repo.git("rev-parse", f"{sha}:{path}").out.strip()
            if path in ids:
                old = repo.git("cat-file", "blob", f"{sha}^:{path}").raw
                got = api.memories.update(ids[path], memory_store_id=sid, content=content, precondition={
                    "type": "content_sha256", "content_sha256": hashlib.sha256(old).hexdigest()})
            else:
                got = api.memories.create(sid, path="/" + path, content=content)
                ids[path] = got.id
            state["seen"].append(got.memory_version_id)
            state["blobs"][got.memory_version_id] = blob
        except (anthropic.ConflictError, anthropic.APIConnectionError) as err:
            raise _Moved() from err
        except anthropic.APIError as err:
            raise _api_error(err, f"writing /{path} to store {sid}") from err


# -- redaction ------------------------------------------------------------------

def redactions(repo: Repo) -> tuple[list[str], list[str]]:
    """Versions redacted in the store since we fetched them: (their ids, the lines
    to take out of the local history). A line is taken only if no version the store
    still shows holds it, so the files as they stand stay what the store has."""
    sid = (repo.cfg("memory.store") or "")[len(PREFIX):]
    client = _client()
    state = _load(repo)
    try:
        versions = list(_versions(client, sid, ""))
    except Exception as err:
        raise _api_error(err, "listing the store's versions") from err
    gone = [v.id for v in versions if v.redacted_at is not None and v.id in state["blobs"]
            and v.id not in state["redacted"]]
    kept = {line for v in versions if v.redacted_at is None and v.content for line in v.content.split("\n")}
    texts: list[str] = []
    for vid in gone:
        data = repo.git("cat-file", "blob", state["blobs"][vid], check=False).raw.decode("utf-8", "replace")
        texts += [line for line in data.split("\n") if len(line.strip()) >= 4 and line not in kept
                  and "[REDACTED]" not in line]
    return gone, list(dict.fromkeys(texts))


def followed(repo: Repo, version_ids: list[str]) -> None:
    state = _load(repo)
    state["redacted"] += version_ids
    for vid in version_ids:
        state["blobs"].pop(vid, None)     # the old content is gone from git too
    _save(repo, state)


def status(repo: Repo) -> Outcome:
    tip = _tip(repo)
    ahead = int(repo.git("rev-list", "--count", f"{tip}..HEAD").out) if tip and repo.head() else 0
    behind = int(repo.git("rev-list", "--count", f"HEAD..{tip}").out) if tip and repo.head() else 0
    dirty = repo.git("status", "--porcelain").lines()
    store = repo.cfg("memory.store")
    return Outcome(f"{'dirty' if dirty else 'clean'}; {store}: {ahead} ahead, {behind} behind "
                   "(as of the last sync)",
                   extra={"store": store, "ahead": ahead, "behind": behind, "dirty": dirty})
