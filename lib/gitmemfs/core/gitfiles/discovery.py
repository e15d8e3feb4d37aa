"""Finding the work tree that holds a folder without starting git, when that is
certain to give what `git rev-parse --show-toplevel --absolute-git-dir` would;
None when it is not, and the caller asks git.

`rev-parse` costs ~2.5 ms of every edit. This walks up from the folder as git
does, for the plain case only: a `.git` folder that is a valid git directory,
owned by us like the work tree, on the same file system as the folder, with no
environment that moves or bounds the search. Anything else means None: a `.git`
file (linked work trees, submodules), a symbolic link, a folder that is itself a
git directory (bare, or inside `.git`), a crossed mount, another owner (git's
safe.directory rules), GIT_DIR, GIT_CEILING_DIRECTORIES and friends, no
repository at all (git words that refusal). The settings that change the answer
(core.bare, core.worktree, a newer repository format) are checked by
`settled`, once the caller has read them. tests/test_discovery.py holds it to
`git rev-parse`.
"""
from __future__ import annotations

import os
import stat

from gitmemfs.core.gitfiles import gitconfig

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping, Sequence

# Variables that move, bound or widen git's search (REPO_ENV in git.py moves the
# repository itself; these only change where the walk may go).
_SEARCH_ENV = ("GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM")
_HEX = frozenset("0123456789abcdef")


def find(path: str, moved: tuple[str, ...], env: Mapping[str, str] | None = None) -> tuple[str, str] | None:
    """(top level, git dir) of the work tree holding `path`, both physical paths as
    git prints them; None when only git can tell. `moved` names the variables that
    point git at another repository (git.REPO_ENV): any of them set means None."""
    env = os.environ if env is None else env
    if any(env.get(k) for k in (*moved, *_SEARCH_ENV)):
        return None
    if os.geteuid() == 0 and env.get("SUDO_UID"):
        return None  # git then judges ownership by the sudo caller: its rules, not ours
    try:
        here = os.path.realpath(path)
        device = os.stat(here).st_dev
        while True:
            folder = os.lstat(here)
            if folder.st_dev != device:
                return None  # git stops at a mount unless told otherwise
            dot_git = os.path.join(here, ".git")
            try:
                entry = os.lstat(dot_git)
            except FileNotFoundError:
                if _is_git_dir(here) is not False:
                    return None  # bare, or inside a .git folder
            else:
                if not stat.S_ISDIR(entry.st_mode) or _is_git_dir(dot_git) is not True:
                    return None  # a .git file or link, or a folder git would skip or doubt
                if entry.st_uid != os.geteuid() or folder.st_uid != os.geteuid():
                    return None  # safe.directory decides
                return here, dot_git
            parent = os.path.dirname(here)
            if parent == here:
                return None  # no repository: git says so in its own words
            here = parent
    except OSError:
        return None


def settled(settings: Mapping[str, Sequence[str | None]]) -> bool:
    """Whether the repository's settings leave the plain answer standing: core.bare
    false or unset, no core.worktree, format version 0 or 1, no extensions."""
    for key in settings:
        if key == "core.worktree" or key.startswith("extensions."):
            return False
    if gitconfig.any_true(settings, "core.bare"):
        return False  # (`git init` writes `bare = false`)
    versions = settings.get("core.repositoryformatversion") or ["0"]
    return (versions[-1] or "").strip() in ("0", "1")


def _is_git_dir(folder: str) -> bool | None:
    """True: git takes `folder` for a git directory; False: it does not; None: not
    sure (a HEAD that is a link, a linked work tree's own folder)."""
    head_path = os.path.join(folder, "HEAD")
    try:
        head = os.lstat(head_path)
    except FileNotFoundError:
        return False
    except OSError:
        return None
    if stat.S_ISLNK(head.st_mode) or os.path.lexists(os.path.join(folder, "commondir")):
        return None
    if not stat.S_ISREG(head.st_mode):
        return None
    try:
        with open(head_path, "rb") as fh:
            text = fh.read(256)
    except OSError:
        return None
    if not (text.startswith(b"ref: refs/") or is_oid(text)):
        return None  # git might still accept what we do not parse: ask it
    return os.path.isdir(os.path.join(folder, "objects")) and os.path.isdir(os.path.join(folder, "refs"))


def is_oid(text: bytes) -> bool:
    line = text.split(b"\n", 1)[0].decode("ascii", "replace")
    return len(line) in (40, 64) and set(line) <= _HEX
