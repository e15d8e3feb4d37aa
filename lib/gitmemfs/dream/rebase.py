"""Replaying a dream's commits on top of a memory that moved during the run.

When merging the dream conflicts, its commits are replayed one by one onto the new
HEAD, as `git rebase` would, but without a worktree or an index: nothing of the parent
is touched, and no hook, filter or checkout runs. Commits whose change main already
has (same patch id: `rev-list --cherry-pick`) are dropped, as rebase drops them; a
commit that comes out empty is dropped too. Each remaining commit is cherry-picked
with `merge-tree --write-tree`, its merge base forced to the commit's parent: on git
without `merge-tree --merge-base` (before 2.40) a scratch commit with the new tip's
tree and the picked commit's parent as its only parent makes that parent the one
merge base. The replayed commits keep their author, message and trailers.
"""
from __future__ import annotations

from typing import Mapping

from gitmemfs.core import git
from gitmemfs.core.repo import Repo


class Replay:
    def __init__(self, tip: str | None, conflicts: list[str], dropped: int = 0, why: str = ""):
        self.tip = tip              # the replayed head, None when it did not apply
        self.conflicts = conflicts  # paths of the commit that did not apply
        self.dropped = dropped      # commits main already had, or that came out empty
        self.why = why


def _git(repo: Repo, *args: str, env: Mapping[str, str] | None = None, input: str | None = None,
         ok: tuple[int, ...] = (0,)) -> git.Result:
    return git.run(list(args), cwd=repo.root, env=dict(env or {}), input=input, check=False, ok=ok)


def replay(repo: Repo, base: str, head: str, onto: str, ident: Mapping[str, str]) -> Replay:
    """Replay base..head onto `onto`; the dream's identity (`ident`) commits."""
    listed = _git(repo, "rev-list", "--reverse", "--topo-order", "--parents", "--right-only", "--cherry-pick",
                  f"{onto}...{head}", "--not", base)
    if listed.code != 0:
        return Replay(None, [], why=f"cannot list the dream's commits ({listed.err.strip()})")
    every = _git(repo, "rev-list", "--count", f"{base}..{head}")
    total = int(every.out.strip() or 0) if every.code == 0 else 0
    picks = [line.split() for line in listed.out.splitlines() if line.strip()]
    dropped = total - len(picks)
    tip = onto
    for fields in picks:
        commit, parents = fields[0], fields[1:]
        if len(parents) != 1:
            return Replay(None, [], dropped, why=f"{commit[:12]} is a merge; merges are not replayed")
        parent = parents[0]
        tip_tree = _git(repo, "rev-parse", f"{tip}^{{tree}}").out.strip()
        scratch = _git(repo, "commit-tree", tip_tree, "-p", parent, "-m", "git dream: replay scratch",
                       env=ident)
        if scratch.code != 0:
            return Replay(None, [], dropped, why=f"cannot replay {commit[:12]} ({scratch.err.strip()})")
        merged = _git(repo, "merge-tree", "--write-tree", "--name-only", "--no-messages", "-z",
                      scratch.out.strip(), commit, ok=(0, 1))
        if merged.code not in (0, 1):
            return Replay(None, [], dropped, why=f"cannot replay {commit[:12]} ({merged.err.strip()})")
        fields_out = merged.out.split("\0")
        if merged.code == 1:
            return Replay(None, sorted({f for f in fields_out[1:] if f}), dropped,
                          why=f"{commit[:12]} still conflicts")
        tree = fields_out[0].strip()
        if tree == tip_tree:
            dropped += 1  # its change is already there
            continue
        info = _git(repo, "log", "-1", "--format=%an%x00%ae%x00%ad%x00%B", "--date=raw", commit).out
        name, email, date, message = (info.split("\0", 3) + ["", "", "", ""])[:4]
        env = {**ident, "GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_AUTHOR_DATE": date}
        made = _git(repo, "commit-tree", tree, "-p", tip, "-F", "-", env=env, input=message)
        if made.code != 0:
            return Replay(None, [], dropped, why=f"cannot replay {commit[:12]} ({made.err.strip()})")
        tip = made.out.strip()
    return Replay(tip, [], dropped)
