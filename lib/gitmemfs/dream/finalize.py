"""Deciding how a dream ended, and merging or keeping its work (DESIGN §9.6).

Checks run in this order; the first that matches decides:

    the agent tampered with git's files, or its branch
    no longer descends from the base              -> failed
    worktree dirty (or HEAD left off the branch) -> dirty_uncommitted
    agent failed or timed out                     -> failed
    no commits                                    -> no_changes
    parent dirty (under its writer lock)          -> parent_dirty
    `check` of base..dream/<id> finds problems    -> check_failed
    explicit merge mode                           -> pending
    merge-tree conflict, main moved: the dream's
    commits replayed onto it apply and pass       -> merged_after_rebase
    merge-tree conflict                           -> merge_conflict
    the merge result breaks a rule against HEAD   -> check_failed
    otherwise                                     -> merged

The merge never touches the parent before it is known to be clean: the merge
commit is built with `merge-tree --write-tree` and `commit-tree`, validated
against the parent's HEAD, and only then fast-forwarded in (`merge --ff-only`),
so a conflict leaves the parent exactly as it was. Anything not merged that holds
work is kept at `refs/dreams/kept/<id>` before the worktree is removed. A merge a
person asks for (`git dream finish ID --merge`, the review page's accept) is signed
where the person signs (`sign`); a dream's own merge never is.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from gitmemfs.core import git
from gitmemfs.core.errors import BusyError, MemfsError
from gitmemfs.core.repo import Repo
from gitmemfs.core.writer import WriteSession
from gitmemfs.dream import rebase
from gitmemfs.dream import worktree as wtmod
from gitmemfs.dream.runner import AgentRun
from gitmemfs.dream.state import KEPT_PREFIX
from gitmemfs.gate import check

EXIT = {"merged": 0, "merged_after_rebase": 0, "merged_after_resolve": 0,
        "no_changes": 0, "pending": 0, "no_payload": 0, "not_due": 0, "started": 0,
        "failed": 1, "check_failed": 1, "not_merged": 1, "merge_conflict": 1, "dirty_uncommitted": 1,
        "busy": 3, "parent_dirty": 3, "sandbox_unavailable": 4}
CONSUMING = ("merged", "merged_after_rebase", "merged_after_resolve", "no_changes")
# Outcomes after which an automatic dream should wait before trying again.
RETRY_LATER = ("failed", "check_failed", "merge_conflict", "dirty_uncommitted", "parent_dirty",
               "sandbox_unavailable")
FALLBACK_IDENTITY = ("git dream", "dream@localhost")
_PREFIX = re.compile(r"^[a-z]+(\([^)]*\))?!?:\s*", re.IGNORECASE)


@dataclass
class Result:
    status: str
    id: str | None = None
    branch: str | None = None
    base: str | None = None
    head: str | None = None
    commits: int = 0
    merged: bool = False
    kept_ref: str | None = None
    message: str = ""
    log: str | None = None
    duration_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def code(self) -> int:
        if self.extra.get("target_error"):  # merged, but the --to copy the user asked for failed
            return 1
        return EXIT.get(self.status, 1)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ok": self.code == 0, "status": self.status, "id": self.id,
                               "branch": self.branch, "base": self.base, "head": self.head,
                               "commits": self.commits, "merged": self.merged, "kept_ref": self.kept_ref,
                               "message": self.message, "log": self.log, "duration_s": round(self.duration_s, 3)}
        out.update(self.extra)
        return out


class SigningError(MemfsError):
    """The person's merge was to be signed and git could not sign it: said as it is,
    never recorded as the run's outcome (the run is as it was)."""


def identity_env(repo: Repo) -> dict[str, str]:
    """Author/committer for the commits the dream itself makes (merge, snapshot)."""
    author = repo.author()
    if author is None:
        probe = repo.git("var", "GIT_COMMITTER_IDENT", check=False)
        if probe.code == 0:
            return {}
        name, email = FALLBACK_IDENTITY
    else:
        name, email = author.name, author.email
    return {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email,
            "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email}


def parent_problem(exc: MemfsError) -> str:
    """Why the parent cannot take a merge, in the dream's words."""
    dirty = exc.details.get("dirty")
    if not dirty:
        return str(exc)
    shown = ", ".join(dirty[:10]) + (f" and {len(dirty) - 10} more" if len(dirty) > 10 else "")
    return f"The memory repository has uncommitted changes ({shown}); commit or discard them and dream again."


def count(repo: Repo, base: str, head: str) -> int:
    res = repo.git("rev-list", "--count", f"{base}..{head}", check=False)
    return int(res.out.strip() or 0) if res.code == 0 else 0


def descends(repo: Repo, base: str, head: str) -> bool:
    return repo.git("merge-base", "--is-ancestor", base, head, check=False, ok=(0, 1)).code == 0


def keep(repo: Repo, dream_id: str, sha: str) -> str:
    ref = KEPT_PREFIX + dream_id
    repo.git("update-ref", "-m", f"git dream: keep {dream_id}", ref, sha)
    return ref


def summary_of(repo: Repo, head: str, commits: int) -> str:
    res = repo.git("log", "-1", "--format=%s", head, check=False)
    subject = _PREFIX.sub("", res.out.strip()).strip() if res.code == 0 else ""
    subject = subject or "memory updates"
    return subject + (f" (+{commits - 1} more)" if commits > 1 else "")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _kept_clause(dream_id: str) -> str:
    return f" The work is kept at {KEPT_PREFIX}{dream_id} (git dream show {dream_id})."


class Finalizer:
    """Finalize one run. `trailers` go on the merge commit (source range, sandbox)."""

    def __init__(self, repo: Repo, wt: wtmod.Worktree, *, merge_mode: str, trailers: list[str],
                 progress: Any, sign: bool = False):
        self.repo = repo
        self.sign = sign  # the person's merge, signed with the person's key (git's user.signingKey)
        self.wt = wt
        self.merge_mode = merge_mode
        self.trailers = trailers
        self.progress = progress
        self._ident: dict[str, str] | None = None

    @property
    def ident(self) -> dict[str, str]:
        if self._ident is None:
            self._ident = identity_env(self.repo)
        return self._ident

    def result(self, status: str, head: str | None, message: str, **kw: Any) -> Result:
        base = self.wt.base
        n = count(self.repo, base, head) if head and head != base else 0
        return Result(status, self.wt.id, self.wt.branch, base, head, n, message=message, **kw)

    def run(self, agent: AgentRun, tampered: list[str], *, tip: str | None, head: str | None) -> Result:
        """`tip`: the branch's commit as read (safely) after the run, None if it is gone;
        `head`: the commit the worktree's HEAD names, None if it names nothing."""
        wt = self.wt
        tip = (tip if tip == wt.base else wtmod.rev(self.repo, tip)) if tip else None
        head = head or tip or wt.base
        off_branch = head != (tip or wt.base)
        snap, changed = wtmod.snapshot(self.repo, wt, head, lambda: self.ident,
                                       f"dream {wt.id}: files the agent left uncommitted\n\nDream-Id: {wt.id}\n")
        tamper = list(tampered)
        if head != wt.base and not descends(self.repo, wt.base, head):
            tamper.append(f"it rewrote history: {head[:12]} does not descend from the base {wt.base[:12]}")
        trouble = ([] if agent.ok else [agent.describe()])
        work = snap or head
        if tamper:  # before anything else: nothing of such a run is merged, whatever else it did
            kept = keep(self.repo, wt.id, work) if work != wt.base else None
            dirty = f"; it also left {_plural(len(changed), 'file')} uncommitted" if snap else ""
            out = self.result("failed", work, "Dream failed: the agent tampered with git's data ("
                              + "; ".join(tamper) + ")" + "".join(f"; {t}" for t in trouble) + dirty
                              + "; nothing was merged." + (_kept_clause(wt.id) if kept else ""), kept_ref=kept)
            out.extra.update(tampering=tamper, timed_out=agent.timed_out)
            if snap:
                out.extra["uncommitted"] = changed
            return out
        if snap or off_branch:
            kept = keep(self.repo, wt.id, work)
            what = (f"left {_plural(len(changed), 'file')} uncommitted" if snap
                    else f"left its HEAD off {wt.branch}")
            also = f" (also: {'; '.join(trouble)})" if trouble else ""
            out = self.result("dirty_uncommitted", work,
                              f"The agent {what}{also}; nothing was merged." + _kept_clause(wt.id), kept_ref=kept)
            out.extra.update(uncommitted=changed, timed_out=agent.timed_out)
            return out
        if trouble:
            kept = keep(self.repo, wt.id, head) if head != wt.base else None
            out = self.result("failed", head, f"Dream failed: {'; '.join(trouble)}; nothing was merged."
                              + (_kept_clause(wt.id) if kept else ""), kept_ref=kept)
            out.extra["timed_out"] = agent.timed_out
            return out
        if head == wt.base:
            return self.result("no_changes", head, "Dreamed; no durable memory changes were needed.")
        return self.integrate(head)

    def integrate(self, head: str, *, allow_pending: bool = True) -> Result:
        """Validate and merge `head` into the parent (or leave it pending)."""
        wt = self.wt
        if not descends(self.repo, wt.base, head):
            return self._not_merged("failed", head, f"{head[:12]} does not descend from the dream's base "
                                    f"{wt.base[:12]}, so it cannot be merged; nothing was merged.")
        n = count(self.repo, wt.base, head)
        try:
            with WriteSession(self.repo, tool="git dream") as session:
                return self._integrate_locked(session, head, n, allow_pending)
        except SigningError:
            raise
        except BusyError as exc:
            return self._not_merged("parent_dirty", head, f"The memory repository stayed busy ({exc}); "
                                    "nothing was merged.")
        except git.GitError as exc:
            return self._not_merged("failed", head, f"Merging failed ({exc}); nothing was merged.")
        except MemfsError as exc:
            return self._not_merged("parent_dirty", head, parent_problem(exc) + " Nothing was merged.")

    def _not_merged(self, status: str, head: str, message: str, **extra: Any) -> Result:
        kept = keep(self.repo, self.wt.id, head)
        out = self.result(status, head, message + _kept_clause(self.wt.id), kept_ref=kept)
        out.extra.update(extra)
        return out

    def _integrate_locked(self, session: WriteSession, head: str, n: int, allow_pending: bool) -> Result:
        wt = self.wt
        repo = self.repo
        self.progress(f"checking {_plural(n, 'commit')} with the memory rules")
        # a dream approves nothing: limits and protection stand as they are
        report = check.commit_range(repo.root, f"{wt.base}..{head}", approvals=frozenset())
        if not report.ok:
            lines = report.lines()
            shown = "; ".join(lines[:5]) + (f"; and {len(lines) - 5} more" if len(lines) > 5 else "")
            return self._not_merged("check_failed", head, f"The dream's commits break the memory rules: {shown}. "
                                    "Nothing was merged.", problems=[p.as_dict() for p in report.problems])
        if allow_pending and self.merge_mode == "explicit":
            repo.git("update-ref", "--no-deref", wt.ref, head, check=False)  # the branch, for review
            kept = keep(repo, wt.id, head)
            return self.result("pending", head,
                               f"The dream made {_plural(n, 'commit')} on {wt.branch}, waiting for review: "
                               f"git dream show {wt.id}, then git dream finish {wt.id} --merge (or merge it "
                               f"yourself and run git dream finish {wt.id}).", kept_ref=kept)
        target = session.head or ""
        merged_tree = repo.git("merge-tree", "--write-tree", "--name-only", "--no-messages", "-z",
                               target, head, check=False, ok=(0, 1))
        if merged_tree.code not in (0, 1):
            raise git.GitError(merged_tree.argv, merged_tree.code, merged_tree.raw, merged_tree.err_raw)
        if merged_tree.code == 1:
            fields = merged_tree.out.split("\0")
            conflicted = sorted({f for f in fields[1:] if f})
            return self._on_conflict(head, target, n, conflicted)
        tree = merged_tree.out.split("\0")[0].strip()
        self.progress(f"merging into {target[:7]}" + (" (the memory moved on since the dream began)"
                                                      if target != wt.base else ""))
        return self._merge(target, head, tree, n, "merged", head)

    def _on_conflict(self, head: str, target: str, n: int, conflicted: list[str]) -> Result:
        """The merge conflicts: if main moved, replay the dream's commits on top of it
        (`merged_after_rebase` when they apply and pass the gate), else keep the work."""
        wt = self.wt
        replayed = None
        if target != wt.base:
            self.progress(f"the merge conflicts in {', '.join(conflicted[:5])}; replaying the dream's "
                          f"commits on top of {target[:7]}")
            replayed = rebase.replay(self.repo, wt.base, head, target, self.ident)
        if replayed is None or replayed.tip is None:
            extra: dict[str, Any] = {"conflicts": conflicted}
            if replayed is not None:
                extra["rebase"] = {"conflicts": replayed.conflicts, "why": replayed.why}
                self.progress(f"the replay did not apply: {replayed.why}")
            return self._not_merged("merge_conflict", head,
                                    "The dream's changes conflict with newer memory commits in "
                                    + ", ".join(conflicted[:10]) + "; the memory repository is unchanged.", **extra)
        tip = replayed.tip
        if tip == target:  # main already has every change the dream made
            return self.result("no_changes", head, "Dreamed; the memory already had every change this dream "
                               "made (they were dropped when replayed onto it).")
        report = check.commit_range(self.repo.root, f"{target}..{tip}")
        if not report.ok:
            lines = report.lines()
            return self._not_merged("check_failed", head, "Replayed onto the newer memory, the dream's commits "
                                    "break the memory rules: " + "; ".join(lines[:5]) + ". Nothing was merged.",
                                    problems=[p.as_dict() for p in report.problems])
        tree = self.repo.git("rev-parse", f"{tip}^{{tree}}").out.strip()
        self.progress(f"replayed {_plural(count(self.repo, target, tip), 'commit')} onto {target[:7]}"
                      + (f" ({replayed.dropped} already there)" if replayed.dropped else "") + "; merging")
        return self._merge(target, tip, tree, n, "merged_after_rebase", head,
                           extra_trailers=[f"Dream-Rebased-From: {head}"])

    def _merge(self, target: str, head: str, tree: str, n: int, status: str, kept_head: str,
               extra_trailers: Sequence[str] = ()) -> Result:
        """Commit the merge of `head` into `target` with `tree`, check it, fast-forward the parent."""
        wt = self.wt
        repo = self.repo
        message = (f"merge(dream): {summary_of(repo, head, n)}\n\n" + "\n".join(
            [f"Dream-Id: {wt.id}", f"Dream-Base: {wt.base}", f"Dream-Commits: {n}", *self.trailers,
             *extra_trailers]) + "\n")
        sign = ["-S"] if self.sign else []
        made = git.run(["commit-tree", *sign, tree, "-p", target, "-p", head, "-F", "-"], cwd=repo.root,
                       input=message, env=self.ident, check=not sign)
        if made.code != 0:
            why = (made.err.strip().splitlines() or ["git could not sign"])[-1]
            raise SigningError(f"git dream: signing the merge failed ({why}); nothing was merged. This "
                               "memory signs a person's merge (commit.gpgsign, or allowed signers in "
                               "gpg.ssh.allowedSignersFile): set your key (git config --global user.signingKey "
                               "KEY, and gpg.format ssh for an ssh key) and run it again")
        merge = made.out.strip()
        head = kept_head  # what a refusal keeps: the dream's own commits
        result_check = check.commit_range(repo.root, f"{merge}^!", approvals=frozenset())
        if not result_check.ok:
            lines = result_check.lines()
            return self._not_merged("check_failed", head, "Merged with the newer memory commits, the dream's "
                                    "changes break the memory rules: " + "; ".join(lines[:5])
                                    + ". Nothing was merged.",
                                    problems=[p.as_dict() for p in result_check.problems])
        res = repo.git("merge", "-q", "--ff-only", merge, check=False)
        if res.code != 0:
            err = git.GitError(res.argv, res.code, res.raw, res.err_raw)
            return self._not_merged("merge_conflict", head, f"Updating the memory repository failed ({err}); "
                                    "it is unchanged.")
        branch = repo.git("symbolic-ref", "-q", "--short", "HEAD", check=False).out.strip() or "HEAD"
        how = " after replaying it on top of the newer memory" if status == "merged_after_rebase" else ""
        out = self.result(status, merge, f"Dreamed and merged {_plural(n, 'commit')} into {branch}{how} "
                          f"({merge[:7]}).")
        out.commits = n
        out.merged = True
        return out
