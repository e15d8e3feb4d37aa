"""Forgetting what a rewritten history held: after `git memory redact` rewrites the
refs (admin/redact.py), or a clone moves onto a redacted history (remote/
redaction_sync.py), everything that may still hold the old text goes: the memory's
caches (core/cachedir.py: the search index, compile's descriptions, the compiled
memory), git's pointers to old commits, finished dream runs' private repositories,
reflogs, and then every unreachable object."""
from __future__ import annotations

import os
import shutil

from gitmemfs.core import cachedir
from gitmemfs.core.errors import BusyError
from gitmemfs.core.repo import FileLock, Repo


def dream_running(repo: Repo) -> bool:
    """Whether a dream holds its lock (dream/lifecycle.py holds it for the whole run):
    its worktree and its merge would bring the old history back, so forgetting waits."""
    path = os.path.join(repo.common_dir, "dream", "lock")
    if not os.path.exists(path):
        return False
    try:
        with FileLock(path, repo.root, 0.05):
            return False
    except BusyError:
        return True


def forget_old_history(repo: Repo) -> None:
    cachedir.forget(repo.common_dir)  # the search index, descriptions and compiled text
    # filter-repo's own notes, and where earlier versions kept the caches
    for name in ("filter-repo", "memory-search"):
        shutil.rmtree(os.path.join(repo.common_dir, name), ignore_errors=True)
    for name in ("memory-descriptions.cache", "memory-projection.cache"):
        try:
            os.unlink(os.path.join(repo.common_dir, name))
        except OSError:
            pass
    for name in ("ORIG_HEAD", "FETCH_HEAD"):
        try:
            os.unlink(os.path.join(repo.git_dir, name))
        except FileNotFoundError:
            pass
    runs = os.path.join(repo.common_dir, "dream", "runs")
    if os.path.isdir(runs):
        for run in os.listdir(runs):
            shutil.rmtree(os.path.join(runs, run, "git"), ignore_errors=True)
    repo.git("reflog", "expire", "--expire=now", "--expire-unreachable=now", "--all")
    # No commit-graph: a kill while gc wrote one leaves its lock, and every later gc
    # would fail on it; the graph is only a speed-up, rebuilt by git's own maintenance.
    repo.git("-c", "gc.reflogExpire=now", "-c", "gc.reflogExpireUnreachable=now", "-c", "gc.writeCommitGraph=false",
             "gc", "--prune=now", "--quiet", timeout=3600)
