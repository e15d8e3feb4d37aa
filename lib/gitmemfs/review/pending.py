"""What waits for the person: one list, whatever kind each item is.

A kind is a `Source`: `items(repo)` lists its pending items, `accept`, `reject` take
one back out through that kind's own operation. Today's kind is the kept dream run
(`git dream finish ID --merge` to accept, `git dream drop ID --note` to reject);
the second, what agents proposed (refs/memory/proposals/: `git memory proposals`).

A preview (a scratch merge, the gate's checks, two prompt compiles) costs far more
than the page around it, and the Pending list is on every overview: an item is kept
by what decides its preview (the item's commit, today's main, the run's base, the
memory's config), so an unchanged item is previewed once, whatever reloads it. The
whole list is kept too, by one `git for-each-ref` of every kind's refs, the stat of
each run record, main and the config: while none changed, a reload lists nothing.
"""
from __future__ import annotations

import functools
import os
import threading
from collections import OrderedDict
from typing import Any, Callable, Hashable, Protocol

from gitmemfs.core import hookless, ownconfig, proposal
from gitmemfs.core.errors import MemfsError
from gitmemfs.core.repo import Repo
from gitmemfs.dream import manage, state
from gitmemfs.view.history import tree_diff
from gitmemfs.view.tokens import prompt_tokens


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
        self._diff: list[Any] | None = None
        self._tokens: tuple[int, int] | None = None

    @property
    def verdict(self) -> str:
        if self.conflicts:
            return "conflicts with today's main"
        return "passes the memory rules" if not self.problems else f"breaks {len(self.problems)} rule(s)"

    def diff(self, repo: Repo) -> list[Any]:
        if self._diff is None:
            self._diff = tree_diff(repo, self.head, self.merge) if self.merge and self.head else []
        return self._diff

    def tokens(self, repo: Repo) -> tuple[int, int] | None:
        """The compiled prompt's tokens today and after accepting."""
        if not self.merge or not self.head:
            return None
        if self._tokens is None:
            self._tokens = prompt_tokens(repo, self.head), prompt_tokens(repo, self.merge)
        return self._tokens


# Items as previewed, by what decides the preview; a few dozen at most (requests run in threads).
_ITEMS: OrderedDict[Hashable, Item] = OrderedDict()
_ITEMS_KEPT = 64
_ITEMS_LOCK = threading.Lock()


def _settings(repo: Repo) -> Hashable:
    """The config a preview reads (the rules' settings, the layout, the signers)."""
    return tuple(sorted((k, tuple(v)) for k, v in repo.config.items()))


def _kept(key: Hashable, make: Callable[[], Item]) -> Item:
    with _ITEMS_LOCK:
        found = _ITEMS.get(key)
        if found is not None:
            _ITEMS.move_to_end(key)
            return found
    item = make()
    with _ITEMS_LOCK:
        _ITEMS[key] = item
        while len(_ITEMS) > _ITEMS_KEPT:
            _ITEMS.popitem(last=False)
    return item


class Source(Protocol):
    kind: str
    prefixes: tuple[str, ...]  # the refs its items live under

    def records(self, repo: Repo) -> list[str]: ...

    def items(self, repo: Repo) -> list[Item]: ...

    def accept(self, repo: Repo, ident: str, expect: str) -> Any: ...

    def reject(self, repo: Repo, ident: str, note: str) -> Any: ...


class Dreams:
    """Kept dream runs: the work a dream left for a person."""

    kind = "dream"
    prefixes: tuple[str, ...] = ("refs/dreams/", "refs/heads/" + state.BRANCH_PREFIX)  # kept, extra; branches

    def records(self, repo: Repo) -> list[str]:
        dirs = state.Dirs(repo.common_dir)
        return [os.path.join(dirs.run_dir(i), "run.json") for i in state.record_ids(dirs)]

    def items(self, repo: Repo) -> list[Item]:
        found = []
        head, settings = repo.head(), _settings(repo)
        for run in manage.list_runs(repo).extra["runs"]:
            if not run.get("head") or run.get("status") == "running":
                continue
            key = (repo.common_dir, "dream", run["id"], run["head"], run.get("base"), head, settings,
                   run.get("why"), bool(run.get("merge_command")), run.get("commits"))
            found.append(_kept(key, functools.partial(self.item, repo, run)))
        return found

    def item(self, repo: Repo, run: dict[str, Any]) -> Item:
        look = manage.preview(repo, run["id"])
        return Item("dream", run["id"], f"dream {run['id']}", run.get("why") or "",
                    head=look["head"], work=look["work"], merge=look["merge"],
                    conflicts=look["conflicts"], problems=look["problems"],
                    can_accept=bool(run.get("merge_command")), commits=int(run.get("commits") or 0))

    def accept(self, repo: Repo, ident: str, expect: str) -> Any:
        return manage.finish(repo, ident, merge=True, expect=expect)

    def reject(self, repo: Repo, ident: str, note: str) -> Any:
        return manage.drop(repo, ident, note=note)


class Proposals:
    """What agents proposed with --propose (admin/proposals.py): accepted as the person's
    approved commit, rejected with the note kept in the record."""

    kind = "proposal"
    prefixes: tuple[str, ...] = (proposal.PREFIX,)

    def records(self, repo: Repo) -> list[str]:
        return []  # a proposal is its commit

    def items(self, repo: Repo) -> list[Item]:
        from gitmemfs.admin import proposals

        head, settings = repo.head(), _settings(repo)
        return [_kept((repo.common_dir, "proposal", p.id, p.commit, head, settings),
                      functools.partial(self.item, repo, p)) for p in proposals.pending(repo)]

    def item(self, repo: Repo, p: Any) -> Item:
        from gitmemfs.admin import proposals

        look = proposals.preview(repo, p)
        needs = " ".join(look["needs"]) or "nothing"
        return Item("proposal", p.id, f"proposal {p.id}: {p.op} {', '.join(p.paths)}",
                    f"{p.reason} (by {p.author}; needs a person's approval of {needs})",
                    head=look["head"], work=p.commit, merge=look["merge"], conflicts=look["conflicts"],
                    problems=look["problems"], can_accept=not look["conflicts"], commits=1)

    def accept(self, repo: Repo, ident: str, expect: str) -> Any:
        from gitmemfs.admin import proposals

        return proposals.accept(repo, ident, expect=expect)

    def reject(self, repo: Repo, ident: str, note: str) -> Any:
        from gitmemfs.admin import proposals

        return proposals.reject(repo, ident, note=note)


SOURCES: list[Source] = [Dreams(), Proposals()]


_LISTS: dict[str, tuple[Hashable, list[Item]]] = {}


def _stamp(repo: Repo, head: str | None) -> Hashable:
    """What every kind's list is read from: their refs, the run records, main, the config."""
    prefixes = sorted({p for s in SOURCES for p in s.prefixes})
    refs = repo.git("for-each-ref", "--format=%(refname) %(objectname) %(symref)", *prefixes, check=False).out
    stats = []
    for path in (p for s in SOURCES for p in s.records(repo)):
        try:
            st = os.stat(path)
            stats.append((path, st.st_mtime_ns, st.st_size, st.st_ino))
        except OSError:
            stats.append((path, 0, 0, 0))
    return refs, tuple(stats), head, _settings(repo)


def every(repo: Repo, head: str | None = None) -> list[Item]:
    """Every pending item; `head`: today's main when the caller has read it already."""
    stamp = _stamp(repo, head or repo.head())
    with _ITEMS_LOCK:
        kept = _LISTS.get(repo.common_dir)
    if kept is not None and kept[0] == stamp:
        return list(kept[1])
    items = [item for source in SOURCES for item in source.items(repo)]
    with _ITEMS_LOCK:
        _LISTS[repo.common_dir] = (stamp, items)
    return list(items)


def source(kind: str) -> Source:
    for s in SOURCES:
        if s.kind == kind:
            return s
    raise MemfsError(f"review: no pending kind {kind!r}")


def accept(repo: Repo, kind: str, ident: str, expect: str) -> Any:
    """The person's accept of the item as the page showed it: `expect` is the item's
    commit then (another is refused, so no text the person did not see goes in). It
    may sign with the person's key: no program the memory's own config names runs
    (a person's command, as protect is: core/ownconfig.py)."""
    if not expect:
        raise MemfsError("review: the accept names no commit it was shown; reload the page and accept again")
    which = source(kind)
    _persons_command(repo)
    return which.accept(repo, ident, expect)


_OWN_ONLY = threading.Lock()
_own_only: list[bool] = []


def _persons_command(repo: Repo) -> None:
    """As `protect` does (core/hookless.only_ours): a program the memory's config names
    refuses the accept, and from the first accept on, no hook file an agent could plant
    runs in any git this server starts (the hooks folder is off, our own post-commit
    work runs from this install). Process-wide, so set once; the refusal is checked
    for each accept, on the memory it is about."""
    with _OWN_ONLY:
        if not _own_only:
            hookless.only_ours(repo)
            _own_only.append(True)
            return
    ownconfig.refuse_planted(ownconfig.entries(repo.root))


def reject(repo: Repo, kind: str, ident: str, note: str = "") -> Any:
    return source(kind).reject(repo, ident, note)
