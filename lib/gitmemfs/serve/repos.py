"""The memories a server holds: bare repositories DIR/<name>.git, each with the gate.

Every repository gets the same receive settings (`configure`): the pre-receive gate,
`receive.fsckObjects` (no corrupt object lands), `receive.denyDeletes` (a branch is
never deleted over the wire), and the merge queue (land.py): push options advertised,
the post-receive hook that lands pushes made to refs/land/, and refs/memory/landing,
which tells clients so. `receive.denyNonFastForwards` stays off on purpose: git would
refuse a verified redaction before the gate could judge it, and the gate already
refuses every other rewind (gate/check.py). A memory made on first use is
seeded as `git memory init` seeds it, in the operator's layout, and moved into place
with one rename, so two first pushes at once make one memory.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import threading

from gitmemfs.admin.init import init
from gitmemfs.core import git
from gitmemfs.core import layout as layouts
from gitmemfs.core.errors import MemfsError
from gitmemfs.gate import hooks
from gitmemfs.web.keys import state_dir

SETTINGS = (("receive.fsckObjects", "true"), ("receive.denyDeletes", "true"),
            ("receive.denyNonFastForwards", "false"), ("http.receivepack", "true"),
            ("http.uploadpack", "true"), ("core.logAllRefUpdates", "true"),
            ("memory.repo", "true"), ("memory.checkScope", "all"),
            ("receive.advertisePushOptions", "true"))
HOOKS = (*hooks.SERVER_HOOKS, "post-receive")  # the gate, then the lander
LAND_MARKER = "refs/memory/landing"
SEED_AUTHOR = (("user.name", "git memory serve"), ("user.email", "serve@localhost"))


def path(root: str, name: str) -> str:
    return os.path.join(root, name + ".git")


def exists(root: str, name: str) -> bool:
    return os.path.isfile(os.path.join(path(root, name), "HEAD"))


def existing(root: str) -> list[str]:
    """The memories under `root` (bare repositories named <name>.git)."""
    try:
        entries = sorted(os.listdir(root))
    except OSError:
        return []
    return [e[:-4] for e in entries if e.endswith(".git") and not e.startswith(".") and exists(root, e[:-4])]


def configure(bare: str, layout: str | None = None) -> None:
    """The gate and the receive settings on one bare repository (idempotent)."""
    for key, value in SETTINGS:
        git.run(["config", "--local", key, value], cwd=bare)
    where = hooks.place(bare)
    hooks.install(where, names=HOOKS)
    # What tells a client this server lands (remote/sync.py asks once a day): a symbolic
    # ref, so it pins no object of its own.
    branch = git.run(["symbolic-ref", "-q", "HEAD"], cwd=bare, check=False).out.strip() or "refs/heads/main"
    git.run(["symbolic-ref", LAND_MARKER, branch], cwd=bare)
    if layout in (layouts.PLAIN, layouts.ROOT):
        hooks.record_layout(where, layout)


class Maker:
    """Creates memories on first use, one at a time per name."""

    def __init__(self, root: str, layout: str):
        self.root = root
        self.layout = layout
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def ensure(self, name: str) -> bool:
        """Make memory `name` if it is missing; True if this call made it."""
        with self._guard:
            lock = self._locks.setdefault(name, threading.Lock())
        with lock:
            if exists(self.root, name):
                return False
            scratch = os.path.join(state_dir(self.root), "tmp")
            os.makedirs(scratch, mode=0o700, exist_ok=True)
            tmp = tempfile.mkdtemp(prefix=f"{name}-", dir=scratch)
            try:
                bare = self._seeded(tmp)
                try:
                    os.rename(bare, path(self.root, name))
                except OSError as exc:
                    if exists(self.root, name):
                        return False  # another process made it first: theirs stands
                    raise MemfsError(f"serve: cannot create memory {name} under {self.root}: {exc.strerror}") from None
                return True
            finally:
                shutil.rmtree(tmp, ignore_errors=True)

    def _seeded(self, tmp: str) -> str:
        work, bare = os.path.join(tmp, "work"), os.path.join(tmp, "memory.git")
        git.run(["init", "-q", work], cwd=tmp)
        git.run(["symbolic-ref", "HEAD", "refs/heads/main"], cwd=work)
        for key, value in SEED_AUTHOR:  # the seed commit's author, whoever runs the server
            git.run(["config", "--local", key, value], cwd=work)
        init(work, install_hooks=False, layout=self.layout)
        git.run(["init", "-q", "--bare", bare], cwd=tmp)
        git.run(["symbolic-ref", "HEAD", "refs/heads/main"], cwd=bare)
        git.run(["push", "-q", bare, "main"], cwd=work)
        configure(bare, self.layout)
        return bare
