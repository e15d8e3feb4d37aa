"""Bringing an agent's work into the memory repository, verified.

The agent never writes the memory's object store: its checkout belongs to the run's
private repository (worktree.create), whose object folder is the quarantine and
whose alternate is the memory's object store. So the agent can neither replace an
object that history points at nor delete, shadow or misdescribe one (loose files,
packs, alternates, commit-graph, multi-pack-index) in the memory.

After the run, before anything reads its work in the memory, `bring_in` imports
exactly the objects reachable from the commits we keep and not from the base, the
way receive-pack accepts a push:

    pack-objects   reads them in the quarantine's view (it may be lied to)
    index-pack --strict
                   re-hashes every object and checks every link against the
                   memory, writing into a staging folder the agent never had
    rev-list --objects
                   walks from the kept commits in the memory's own view (the
                   staged pack as an alternate): nothing may be missing

Only then is the pack moved into `objects/pack/`. Anything else fails the import
(`Tampered`): the memory is unchanged and the private repository stays where it is
for a person to look at.
"""
from __future__ import annotations

import os
import re
import shutil
from typing import Iterable

from gitmemfs.core import durable, git
from gitmemfs.core.repo import Repo

# The quarantine's own commit-graph or multi-pack-index could lie about history;
# when we read through its view, git ignores them.
_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_DISTRUST = {"core.commitGraph": "false", "core.multiPackIndex": "false", "gc.auto": "0"}


class Tampered(Exception):
    """The agent's objects do not hold up: forged, missing or not connected."""


def _view_env(quarantine: str, common_dir: str) -> dict[str, str]:
    return {"GIT_OBJECT_DIRECTORY": os.path.abspath(quarantine),
            "GIT_ALTERNATE_OBJECT_DIRECTORIES": os.path.abspath(os.path.join(common_dir, "objects"))}


def view(repo: Repo, quarantine: str, *args: str, input: str | None = None) -> git.Result:
    """Run git in the quarantine's view (never trusted: used to find, not to decide)."""
    return git.run(list(args), cwd=repo.root, input=input, check=False, config=_DISTRUST,
                   env=_view_env(quarantine, repo.common_dir))


def _present(repo: Repo, oids: Iterable[str]) -> set[str]:
    """The oids the repository itself already holds."""
    wanted = sorted(set(oids))
    if not wanted:
        return set()
    res = repo.git("cat-file", "--batch-check=%(objectname)", input="".join(o + "\n" for o in wanted),
                   check=False)
    return {line for line in res.lines() if " " not in line}


def bring_in(repo: Repo, quarantine: str, tips: Iterable[str | None], holds: Iterable[str | None],
             stage: str) -> int:
    """Import what `tips` need beyond `holds` (commits the repository holds), staging the
    pack in `stage` (a folder the agent could not write). Returns the number of tips
    that had to be imported; raises Tampered when the objects do not hold up. Tips the
    repository already holds cost nothing; None or empty names in either are skipped."""
    have = sorted({h for h in holds if h})
    missing = sorted({t for t in tips if t and _OID.fullmatch(t) and t.strip("0")} - set(have))
    missing = [t for t in missing if t not in _present(repo, missing)]
    if not missing or not os.path.isdir(quarantine):
        return 0
    # Only commits the quarantine really holds: a name the agent wrote into a ref or
    # its HEAD that names nothing is simply not work.
    known = view(repo, quarantine, "cat-file", "--batch-check=%(objectname) %(objecttype)",
                 input="".join(t + "\n" for t in missing))
    missing = [line.split(" ")[0] for line in known.lines() if line.endswith(" commit")]
    if not missing:
        return 0
    shutil.rmtree(stage, ignore_errors=True)
    os.makedirs(os.path.join(stage, "pack"))
    try:
        feed = "".join(t + "\n" for t in missing) + "".join("^" + h + "\n" for h in have)
        packed = view(repo, quarantine, "pack-objects", "--revs", "--stdout", "-q", input=feed)
        if packed.code != 0 or not packed.raw:
            raise Tampered("git pack-objects could not read the agent's objects: "
                           + _why(packed))
        pack = os.path.join(stage, "pack", "incoming.pack")
        with open(pack, "wb") as fh:
            fh.write(packed.raw)
        indexed = repo.git("index-pack", "--strict", pack, check=False)
        if indexed.code != 0:
            raise Tampered("git index-pack --strict refused the agent's objects: " + _why(indexed))
        name = indexed.out.strip().split()[-1] if indexed.out.strip() else ""
        walk = git.run(["rev-list", "--objects", "--quiet", *missing, "--not", *have], cwd=repo.root,
                       check=False, env={"GIT_ALTERNATE_OBJECT_DIRECTORIES": stage,
                                               "GIT_OBJECT_DIRECTORY": os.path.join(repo.common_dir, "objects")})
        if walk.code != 0 or not name:
            raise Tampered("the agent's commits are incomplete: " + _why(walk))
        _install(repo.common_dir, stage, name)
        if repo.durable:  # imported before the merge takes the writer lock: on disk before the ref
            durable.sync_pack(repo.common_dir, name)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return len(missing)


def _install(common_dir: str, stage: str, name: str) -> None:
    """Move the verified pack in: the .pack first, the .idx (which makes git see it) last."""
    dest = os.path.join(common_dir, "objects", "pack")
    os.makedirs(dest, exist_ok=True)
    for ext in (".pack", ".rev", ".idx"):
        src = os.path.join(stage, "pack", "incoming" + ext)
        if not os.path.exists(src):
            continue
        target = os.path.join(dest, f"pack-{name}{ext}")
        if os.path.exists(target):  # the same objects are already there
            os.unlink(src)
        else:
            os.replace(src, target)


def _why(res: git.Result) -> str:
    err = git.GitError(res.argv, res.code, res.raw if res.code else b"", res.err_raw)
    return str(err)
