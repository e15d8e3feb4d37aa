"""What waits for the person: one list, whatever kind each item is.

A kind is a `Source`: `items(repo)` lists its pending items, `accept`, `reject` take
one back out through that kind's own operation. Today's kind is the kept dream run
(`git dream finish ID --merge` to accept, `git dream drop ID --note` to reject);
the second, what agents proposed (refs/memory/proposals/: `git memory proposals`).
"""
from __future__ import annotations

from typing import Any, Callable, Protocol

from gitmemfs.core.errors import MemfsError
from gitmemfs.core.repo import Repo
from gitmemfs.dream import manage
from gitmemfs.view.history import tree_diff
from gitmemfs.view.tokens import prompt_tokens

CACHE_FILE = "memory-descriptions.cache"  # the one cli/cmd_compile.py keeps in the git dir


class Item:
    """One pending change, as the page shows it."""

    def __init__(self, kind: str, ident: str, title: str, why: str, *, head: str | None, work: str | None,
                 merge: str | None, conflicts: list[str], problems: list[dict[str, Any]],
                 can_accept: bool, commits: int = 0):
        self.kind = kind
        self.id = ident
        self.title = title
        self.why = why
        self.head = head  # today's main
        self.work = work  # the item's own last commit
        self.merge = merge  # a commit with the result of accepting it (None: it conflicts)
        self.conflicts = conflicts
        self.problems = problems
        self.can_accept = can_accept  # a conflict may still merge: finish replays onto main first
        self.commits = commits

    @property
    def verdict(self) -> str:
        if self.conflicts:
            return "conflicts with today's main"
        return "passes the memory rules" if not self.problems else f"breaks {len(self.problems)} rule(s)"

    def diff(self, repo: Repo) -> list[Any]:
        return tree_diff(repo, self.head, self.merge) if self.merge and self.head else []

    def tokens(self, repo: Repo) -> tuple[int, int] | None:
        """The compiled prompt's tokens today and after accepting."""
        if not self.merge or not self.head:
            return None
        return prompt_tokens(repo, self.head), prompt_tokens(repo, self.merge)


class Source(Protocol):
    kind: str

    def items(self, repo: Repo) -> list[Item]: ...

    def accept(self, repo: Repo, ident: str) -> Any: ...

    def reject(self, repo: Repo, ident: str, note: str) -> Any: ...


class Dreams:
    """Kept dream runs: the work a dream left for a person."""

    kind = "dream"

    def items(self, repo: Repo) -> list[Item]:
        found = []
        for run in manage.list_runs(repo).extra["runs"]:
            if not run.get("head") or run.get("status") == "running":
                continue
            look = manage.preview(repo, run["id"])
            found.append(Item("dream", run["id"], f"dream {run['id']}", run.get("why") or "",
                              head=look["head"], work=look["work"], merge=look["merge"],
                              conflicts=look["conflicts"], problems=look["problems"],
                              can_accept=bool(run.get("merge_command")), commits=int(run.get("commits") or 0)))
        return found

    def accept(self, repo: Repo, ident: str) -> Any:
        return manage.finish(repo, ident, merge=True)

    def reject(self, repo: Repo, ident: str, note: str) -> Any:
        return manage.drop(repo, ident, note=note)


class Proposals:
    """What agents proposed with --propose (admin/proposals.py): accepted as the person's
    approved commit, rejected with the note kept in the record."""

    kind = "proposal"

    def items(self, repo: Repo) -> list[Item]:
        from gitmemfs.admin import proposals

        found = []
        for p in proposals.pending(repo):
            look = proposals.preview(repo, p)
            needs = " ".join(look["needs"]) or "nothing"
            found.append(Item("proposal", p.id, f"proposal {p.id}: {p.op} {', '.join(p.paths)}",
                              f"{p.reason} (by {p.author}; needs a person's approval of {needs})",
                              head=look["head"], work=p.commit, merge=look["merge"], conflicts=look["conflicts"],
                              problems=look["problems"], can_accept=not look["conflicts"], commits=1))
        return found

    def accept(self, repo: Repo, ident: str) -> Any:
        from gitmemfs.admin import proposals

        return proposals.accept(repo, ident)

    def reject(self, repo: Repo, ident: str, note: str) -> Any:
        from gitmemfs.admin import proposals

        return proposals.reject(repo, ident, note=note)


SOURCES: list[Source] = [Dreams(), Proposals()]


def every(repo: Repo) -> list[Item]:
    return [item for source in SOURCES for item in source.items(repo)]


def source(kind: str) -> Source:
    for s in SOURCES:
        if s.kind == kind:
            return s
    raise MemfsError(f"review: no pending kind {kind!r}")


def act(repo: Repo, kind: str, ident: str, action: str, note: str = "") -> Any:
    how: dict[str, Callable[[], Any]] = {"accept": lambda: source(kind).accept(repo, ident),
                                         "reject": lambda: source(kind).reject(repo, ident, note)}
    return how[action]()
