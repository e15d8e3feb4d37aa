"""A hosted memory store as a remote: `git memory clone anthropic-store:<id>` (issue 41).

The mapping (docs/remotes-and-fleets.md, "Hosted stores", has it in full):

- a memory is a file at its path without the leading `/`;
- a store version is a commit on refs/memory/store/tip (store_map.py);
- a local commit is sent file by file with the SHA-256 each write expects
  (store_push.py); a rename keeps the memory's id;
- a 409 (the store moved), a 5xx or a lost answer is a replay, as a refused push is
  for git remotes: fetch the new versions, rebase, send again, until the sync
  deadline. A version we caused whose answer was lost comes back as a store commit,
  and the rebase drops the local change it already holds: nothing is applied twice;
- a redaction, either way (store_redact.py);
- the store's description is `memory.storeDescription`, shown by `compile`.

The key is read from $ANTHROPIC_API_KEY by this process and given to the SDK in
memory; it is never on a command line, in .git/config or in any output.
$ANTHROPIC_BASE_URL picks the endpoint.
"""
from __future__ import annotations

import os
import shutil
import time
from typing import Any

from gitmemfs.core import git, oserrors
from gitmemfs.core.errors import UsageError
from gitmemfs.core.outcome import Outcome
from gitmemfs.core.repo import Repo, describe_git_dir, read_config
from gitmemfs.gate import check, hooks
from gitmemfs.remote import store_push, store_redact
from gitmemfs.remote import store_state as st
from gitmemfs.remote.backoff import Backoff
from gitmemfs.remote.clone import _check_destination, _make_parent
from gitmemfs.remote.store_map import fetch
from gitmemfs.remote.sync import SyncResult, backup_ref, deadline_of

DESCRIPTION = "memory.storeDescription"
NAME = "memory.storeName"


def store_id_of(target: str | None) -> str | None:
    """The store id when `target` names a hosted store, else None."""
    if not target or not target.startswith(st.PREFIX):
        return None
    sid = target[len(st.PREFIX):]
    if not sid or not all(c.isalnum() or c in "_-" for c in sid):
        raise UsageError(f"git memory clone: {target!r} is not anthropic-store:<store id> (memstore_…)")
    return sid


# -- clone ----------------------------------------------------------------------

def clone(sid: str, directory: str | None, *, layout: str | None = None) -> Outcome:
    dest = os.path.abspath(os.path.expanduser(directory or sid))
    client = st.client()
    existed = _check_destination(dest)
    try:
        info = client.beta.memory_stores.retrieve(sid)
    except Exception as err:
        raise st.api_error(err, f"reading memory store {sid}") from err
    created = _make_parent(dest)
    try:
        oserrors.make_folders(dest, "git memory clone")
        git.run(["init", "-q", "-b", "main", dest])
        found = describe_git_dir(dest)
        assert found is not None
        repo = Repo(root=found[0], git_dir=found[1], common_dir=found[2], config=read_config(dest))
        repo.git("config", "--local", "memory.repo", "true")
        repo.git("config", "--local", "memory.store", st.PREFIX + sid)
        if layout:
            repo.git("config", "--local", "memory.layout", layout)
        state = st.load(repo)
        _take_description(repo, state, info)
        count = fetch(repo, client, sid, state)
        top = st.tip(repo)
        if top:
            repo.git("reset", "-q", "--hard", top)
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
                   extra={"path": dest, "store": sid, "versions": count, "head": top, "branch": "main"})


# -- the store's description ------------------------------------------------------

def _take_description(repo: Repo, state: dict[str, Any], info: Any) -> None:
    repo.git("config", "--local", NAME, info.name or "")
    repo.git("config", "--local", DESCRIPTION, info.description or "")
    state["description"] = info.description or ""
    st.save(repo, state)


def _sync_description(repo: Repo, client: Any, sid: str, state: dict[str, Any]) -> str | None:
    """The description both ways, against the value last agreed: changed only here
    (`git config memory.storeDescription …`) it is sent; else the store's is taken
    (the store wins when both changed). Which way it went, or None."""
    try:
        info = client.beta.memory_stores.retrieve(sid)
    except Exception as err:
        raise st.api_error(err, f"reading memory store {sid}") from err
    theirs, mine = info.description or "", repo.cfg(DESCRIPTION) or ""
    if "description" not in state:  # a clone made before descriptions were kept: the store's
        _take_description(repo, state, info)
        return "taken"
    last = state["description"]
    if mine != last and theirs == last:
        try:
            st.writer(client).update(sid, description=mine)
        except Exception as err:
            raise st.api_error(err, f"updating the description of store {sid}") from err
        state["description"] = mine
        st.save(repo, state)
        return "sent"
    if theirs != mine or repo.cfg(NAME) != (info.name or ""):
        _take_description(repo, state, info)
        return "taken"
    if last != mine:
        state["description"] = mine
        st.save(repo, state)
    return None


# -- sync -----------------------------------------------------------------------

def sync(repo: Repo, *, deadline: float | None = None) -> SyncResult:
    sid = st.store_of(repo)
    client = st.client()
    limit = time.monotonic() + deadline_of(repo, deadline)
    with repo.lock():
        if repo.git("status", "--porcelain", "--untracked-files=no").out.strip():
            return SyncResult("dirty", "Cannot sync: the work tree has uncommitted changes; commit them first")
        state = st.load(repo)
        _sync_description(repo, client, sid, state)
        pulled = pushed = attempts = 0
        redacted_before = len(state["redacted"])  # counted so, as a replay may cut a pass short
        backup = None
        backoff = Backoff()
        while True:
            try:
                pulled += fetch(repo, client, sid, state)
                store_redact.send(repo, client, sid, state)
            except store_push.Moved:
                if time.monotonic() > limit:
                    return SyncResult("push_failed", "The store kept moving; gave up after the deadline; "
                                      "sync again", push_attempts=attempts)
                time.sleep(min(backoff.refused(), max(0.0, limit - time.monotonic())))
                continue
            top = st.tip(repo)
            head = repo.head()
            if top is None and head is None:
                return SyncResult("clean", "Nothing to sync: the store and the memory are empty")
            if top and (head is None or _is_ancestor(repo, head, top)):
                if head != top:
                    repo.git("reset", "-q", "--keep", top)
                    return SyncResult("pulled", f"Pulled {pulled} store versions", pulled=pulled)
                # A write whose answer was lost lands as the store's version: sent all the same.
                sent = pushed or attempts
                redacted = len(state["redacted"]) - redacted_before
                said = (f"Pushed {pushed} commits to store {sid}" if pushed else
                        "Sent to the store; its versions came back as store commits" if sent else
                        "Up to date with the store")
                if redacted:
                    said += f"; redacted {redacted} versions there"
                return SyncResult("pushed" if sent or redacted else "clean", said, pushed=pushed,
                                  pulled=pulled, backup_ref=backup, push_attempts=attempts)
            if top and not _is_ancestor(repo, top, head):
                backup = backup or backup_ref(repo, head)  # type: ignore[arg-type]
                res = repo.git("rebase", "-q", top, check=False)
                if res.code:
                    repo.git("rebase", "--abort", check=False)
                    return SyncResult("conflict", f"Cannot sync: local commits conflict with the store's "
                                      f"versions; they stay as they were (backup {backup})",
                                      backup_ref=backup, pulled=pulled)
                continue
            steps = store_push.plan(repo, top)
            problems = store_push.limits(repo, steps) or _rules(repo, top)
            if problems:
                return SyncResult("check_failed", "Refused, nothing sent: " + "; ".join(problems[:5]),
                                  problems=problems)
            try:
                for before, sha in steps:
                    attempts += 1
                    store_push.push(repo, client, sid, before, sha, state)
                    repo.git("update-ref", st.TIP, sha)
                    st.save(repo, state)
                    pushed += 1
            except store_push.Moved:
                st.save(repo, state)
                if time.monotonic() > limit:
                    return SyncResult("push_failed", f"The store kept moving; gave up after the deadline "
                                      f"({pushed} commits pushed); sync again", pushed=pushed,
                                      push_attempts=attempts)
                # A jittered, growing wait, as a refused push to a git remote gets.
                time.sleep(min(backoff.refused(), max(0.0, limit - time.monotonic())))
                continue


def _is_ancestor(repo: Repo, a: str, b: str | None) -> bool:
    return b is not None and repo.git("merge-base", "--is-ancestor", a, b, check=False).code == 0


def _rules(repo: Repo, tip: str | None) -> list[str]:
    """The memory rules over what is to be sent, as sync checks a push to a git remote
    (a commit made past the hooks is judged here)."""
    report = check.commit_range(repo.root, f"{tip}..HEAD") if tip else check.tree(repo.root, "HEAD")
    return [] if report.ok else report.lines()


def status(repo: Repo) -> Outcome:
    top = st.tip(repo)
    ahead = int(repo.git("rev-list", "--count", f"{top}..HEAD").out) if top and repo.head() else 0
    behind = int(repo.git("rev-list", "--count", f"HEAD..{top}").out) if top and repo.head() else 0
    dirty = repo.git("status", "--porcelain").lines()
    store = repo.cfg("memory.store")
    return Outcome(f"{'dirty' if dirty else 'clean'}; {store}: {ahead} ahead, {behind} behind "
                   "(as of the last sync)",
                   extra={"store": store, "ahead": ahead, "behind": behind, "dirty": dirty})
