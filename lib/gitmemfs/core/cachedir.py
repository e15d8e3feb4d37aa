"""Where what the toolkit derives from a memory for speed is kept: the person's cache
folder, one folder per memory, never the memory's git directory.

An agent's shell may write the memory's work tree and its git dir (docs/threat-model.md),
and what is kept for speed is read back as written: the search index, compile's
descriptions by blob id, the compiled memory a session starts with. Kept in the git dir,
an agent could plant text there that a person's `compile` or next session shows with
nothing in history to say so. `$XDG_CACHE_HOME/git-memfs` (`~/.cache/git-memfs`) is the
person's: a harness's sandbox (Claude Code's, Codex's, the dream's) writes the project,
not the home folder. A memory's folder is named by its git dir's real path, so its
worktrees share it and a clone elsewhere has its own
(`~/.cache/git-memfs/memories/home/me/notes/.git/`); `rm -r ~/.cache/git-memfs` only
costs the next command its speed.
"""
from __future__ import annotations

import os

ROOT_NAME = "git-memfs"
DESCRIPTIONS = "descriptions"  # core/snapshot.DescriptionCache
PROJECTION = "projection"  # harness/context.py
SEARCH = "search"  # view/searchindex.py: a folder (SQLite keeps its WAL beside the file)


def root() -> str:
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # the XDG rule: a relative value is ignored
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, ROOT_NAME)


def folder(common_dir: str) -> str:
    """The memory's cache folder (not created: see `path`): its git dir's real path
    below the root, so a person can tell whose it is (and no hash to import)."""
    return os.path.join(root(), "memories", os.path.realpath(common_dir).lstrip(os.sep))


def path(common_dir: str, name: str) -> str:
    """`name` in the memory's cache folder; `prepare` it before writing."""
    return os.path.join(folder(common_dir), name)


def prepare(target: str) -> None:
    """Make the folders `target` (a path from `path`) needs: the root 0700, since the
    folders below it get the umask's mode. One that can't be made (a read-only home, a
    sandbox) is left to the caller's write to fail: every cache takes that as a miss."""
    try:
        os.makedirs(root(), mode=0o700, exist_ok=True)
        os.makedirs(os.path.dirname(target), mode=0o700, exist_ok=True)
    except OSError:
        pass


def forget(common_dir: str) -> None:
    """Remove everything kept for this memory (a redaction: the caches hold old text)."""
    import shutil

    shutil.rmtree(folder(common_dir), ignore_errors=True)
