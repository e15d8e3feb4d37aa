"""Telling a new memory from a damaged one, when HEAD names no commit.

A repository whose HEAD names nothing is either new (no commit yet: every reader says
so and exits 0) or damaged: a ref naming an object that is missing or unreadable (a lost
pack, a crash on a filesystem without fsync), or an unborn branch in a repository that
has history elsewhere (other refs, a reflog, packs). A damaged memory is never "healthy":
each case is its own error (exit 4, the environment's) with the next step. Readers call
`unborn` only on their unborn path, so a healthy memory pays nothing.
"""
from __future__ import annotations

import os

from gitmemfs.core import git
from gitmemfs.core.errors import RESTORE, EnvironmentProblem, is_oid, missing_object

__all__ = ["unborn", "missing_object", "is_oid"]


def unborn(cwd: str, env: dict[str, str] | None = None) -> None:
    """HEAD names no commit here: return when the repository is simply new; raise
    EnvironmentProblem when it is damaged."""
    branch = git.run(["symbolic-ref", "-q", "--short", "HEAD"], cwd=cwd, env=env, check=False).out.strip()
    named = git.run(["rev-parse", "-q", "--verify", "HEAD"], cwd=cwd, env=env, check=False)
    where = f"HEAD ({branch})" if branch else "HEAD"
    if named.code == 0 and named.out.strip():
        sha = named.out.strip()
        kind = git.run(["cat-file", "--batch-check"], cwd=cwd, env=env, input=sha + "\n", check=False)
        words = kind.out.split()
        if kind.code == 0 and words[1:2] == ["commit"]:
            return  # it is there (made meanwhile): not damage
        if kind.code == 0 and len(words) == 3:
            raise EnvironmentProblem(f"memory: {where} names {sha[:12]}, a {words[1]} and not a commit; "
                                     f"the memory is damaged; {RESTORE}")
        state = "missing from" if words[1:2] == ["missing"] else "unreadable (corrupt) in"
        raise EnvironmentProblem(f"memory: {where} names commit {sha[:12]}, which is {state} the object "
                                 f"store: the memory is damaged (a lost pack, or a crash); {RESTORE}")
    found = _history(cwd, env)
    if found:
        raise EnvironmentProblem(
            f"memory: branch {branch or 'HEAD'} has no commit, but this repository has history ({found}): "
            f"the memory is damaged, or HEAD names the wrong branch; see git branch -a and switch to the "
            f"right one (git switch NAME), or {RESTORE}")


def _history(cwd: str, env: dict[str, str] | None) -> str:
    """What shows this repository had commits: refs (named, or naming nothing), a
    reflog, packs. Empty for a new repository."""
    refs = git.run(["for-each-ref", "--count=3", "--format=%(refname)"], cwd=cwd, env=env, check=False)
    if refs.code != 0 or "missing object" in refs.err or "does not point to a valid object" in refs.err:
        return "refs that name missing objects"
    if refs.out.strip():
        return "refs " + ", ".join(refs.out.split())
    dirs = git.run(["rev-parse", "--absolute-git-dir", "--git-common-dir"], cwd=cwd, env=env, check=False)
    lines = dirs.out.splitlines()
    if dirs.code != 0 or len(lines) != 2:
        return ""
    git_dir, common = lines[0], os.path.join(cwd, lines[1])
    try:
        if os.path.getsize(os.path.join(git_dir, "logs", "HEAD")) > 0:
            return "a reflog of HEAD"
    except OSError:
        pass
    try:
        if any(name.endswith(".pack") for name in os.listdir(os.path.join(common, "objects", "pack"))):
            return "packed objects"
    except OSError:
        pass
    return ""

