"""`git memory proposals list|show|accept|reject`: a person's decision on what an agent
proposed (core/proposal.py keeps them).

`accept` is the person's approval (core/approval.py): the proposal's change is
re-validated against today's main and committed onto it through the write path, with
exactly the approvals the change needs (`Memory-Approved: …`, found again here: the
proposal's own trailers are an agent's text) and `Memory-Proposal: <id>`, signed where
the memory has allowed signers or the person signs commits. A proposal made on an
older main is replayed onto today's (a three-way merge); a conflict is shown and
refused, never resolved silently. `reject` drops the ref and keeps the person's note
in the record. Nothing an agent drives reaches this module: it is the CLI's and the
review page's only.
"""
from __future__ import annotations

import time
from typing import Any

from gitmemfs.core import approval, proposal
from gitmemfs.core.errors import MemfsError, NeedsPerson
from gitmemfs.core.outcome import Outcome
from gitmemfs.core.repo import Repo
from gitmemfs.core.writer import Change, WriteSession
from gitmemfs.gate import approved, check
from gitmemfs.view import history, tokens

_FORMAT = "%H%x1f%P%x1f%an%x1f%ae%x1f%ct%x1f%s%x1f%(trailers:only,unfold)%x1e"
PREVIEW_ENV = {"GIT_AUTHOR_NAME": "git-memfs", "GIT_AUTHOR_EMAIL": "git-memfs@localhost",
               "GIT_COMMITTER_NAME": "git-memfs", "GIT_COMMITTER_EMAIL": "git-memfs@localhost"}


def printable(text: str) -> str:
    """Agent-written text for a terminal: control characters (escape sequences) shown, not run."""
    return "".join(c if c.isprintable() or c in "\n\t" else f"\\x{ord(c):02x}" for c in text)


class Proposal:
    """One pending proposal, from its commit (every field but `id` is the agent's text)."""

    def __init__(self, ident: str, sha: str, parent: str | None, author: str, email: str, when: int,
                 reason: str, trailers: dict[str, list[str]], head: str | None):
        self.id = ident
        self.commit = sha
        self.parent = parent
        self.author = author
        self.email = email
        self.time = when
        self.reason = reason
        self.op = (trailers.get("Memory-Op") or ["?"])[0]
        self.paths = trailers.get("Memory-Path") or []
        self.needs = (trailers.get(proposal.NEEDS_TRAILER) or [""])[0]
        self.stale = parent != head

    def age(self, now: float | None = None) -> str:
        seconds = max(0, int((time.time() if now is None else now) - self.time))
        for size, unit in ((86400, "d"), (3600, "h"), (60, "m")):
            if seconds >= size:
                return f"{seconds // size}{unit}"
        return f"{seconds}s"

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "commit": self.commit, "parent": self.parent, "author": self.author,
                "email": self.email, "time": self.time, "age": self.age(), "reason": self.reason,
                "op": self.op, "paths": self.paths, "needs": self.needs.split(), "stale": self.stale}


def pending(repo: Repo) -> list[Proposal]:
    found = proposal.refs(repo)
    if not found:
        return []
    head = repo.head()
    res = repo.git("log", "--no-walk=unsorted", "--stdin", f"--format={_FORMAT}",
                   input="".join(sha + "\n" for sha in found.values()))
    out: list[Proposal] = []
    ids: dict[str, list[str]] = {}
    for ident, sha in found.items():  # two refs may name one commit (a ref moved by hand)
        ids.setdefault(sha, []).append(ident)
    for record in res.out.split("\x1e"):
        fields = record.strip("\n").split("\x1f")
        if len(fields) < 7 or fields[0] not in ids:
            continue
        sha, parents, author, email, when, subject, text = fields[:7]
        trailers: dict[str, list[str]] = {}
        for line in text.splitlines():
            key, sep, value = line.partition(":")
            if sep:
                trailers.setdefault(key.strip(), []).append(value.strip())
        out += [Proposal(ident, sha, next(iter(parents.split()), None), author, email, int(when or 0), subject,
                         trailers, head) for ident in ids.pop(sha)]
    return sorted(out, key=lambda p: p.id)


def get(repo: Repo, ident: str) -> Proposal:
    proposal.ref(ident)  # refuses what is not an id
    for p in pending(repo):
        if p.id == ident:
            return p
    raise MemfsError(f"proposals: no pending proposal {ident}; see git memory proposals list")


def preview(repo: Repo, p: Proposal) -> dict[str, Any]:
    """What accepting `p` would do to today's main, changing nothing: {head, merge: a
    scratch commit no ref names (None when it conflicts), conflicts, problems: the
    validator's verdict on it, person-only rules aside, needs: what a person approves}."""
    head = repo.head()
    out: dict[str, Any] = {"head": head, "merge": None, "conflicts": [], "problems": [], "needs": []}
    if not p.stale:
        merge = p.commit
    else:
        # Its parent is where main was: git finds it as the merge base (--merge-base needs git 2.40).
        res = repo.git("merge-tree", "--write-tree", "--name-only", "--no-messages", "-z",
                       head or p.commit, p.commit, check=False, ok=(0, 1))
        fields = res.out.split("\0")
        if res.code != 0:
            out["conflicts"] = sorted({f for f in fields[1:] if f}) or ["(merge failed)"]
            return out
        merge = repo.git("commit-tree", fields[0].strip(), *(["-p", head] if head else []), "-m",
                         "proposal: preview", env=PREVIEW_ENV).out.strip()
    out["merge"] = merge
    everything = frozenset(approval.WORDS)
    report = check.commit_range(repo.root, f"{merge}^!", approvals=everything)
    out["problems"] = [pr.as_dict() for pr in report.problems]
    plain = check.commit_range(repo.root, f"{merge}^!", approvals=approval.NONE)
    if plain.problems and not report.problems:
        needs = set(everything)
        for word in reversed(approval.WORDS):  # as the write path finds it: a smallest set that passes
            if not check.commit_range(repo.root, f"{merge}^!", approvals=frozenset(needs - {word})).problems:
                needs.discard(word)
        out["needs"] = sorted(needs)
    return out


def list_all(repo: Repo) -> Outcome:
    items = pending(repo)
    if not items:
        return Outcome("No pending proposals.", extra={"proposals": []})
    lines = [f"{p.id}  {p.op:<18} {', '.join(p.paths)[:60]:<60} {p.age():>4}"
             f"{'  stale' if p.stale else ''}  needs {p.needs or '?'}  by {p.author}\n"
             f"    {p.reason}" for p in items]
    return Outcome(printable("\n".join(lines)), extra={"proposals": [p.as_dict() for p in items]})


def show(repo: Repo, ident: str) -> Outcome:
    p = get(repo, ident)
    look = preview(repo, p)
    info = p.as_dict()
    info.update(head=look["head"], merge=look["merge"], conflicts=look["conflicts"], problems=look["problems"],
                needs=look["needs"])
    lines = [f"proposal {p.id} by {p.author} <{p.email}>, {p.age()} ago"
             f"{' (made on an older main: replayed onto today' + chr(39) + 's)' if p.stale else ''}",
             f"reason: {p.reason}", f"op: {p.op}  paths: {', '.join(p.paths)}"]
    if look["conflicts"]:
        lines.append("conflicts with today's main at: " + ", ".join(look["conflicts"])
                     + " (accept is refused; reject it, or have it proposed again)")
    else:
        before = tokens.prompt_tokens(repo, look["head"]) if look["head"] else 0
        after = tokens.prompt_tokens(repo, look["merge"])
        info.update(tokens_before=before, tokens_after=after)
        lines.append(f"prompt: {before} -> {after} tokens ({after - before:+d})")
        verdict = ("passes the memory rules" if not look["problems"] else
                   "breaks the memory rules: " + "; ".join(f"{x['path']}: {x['message']}" for x in look["problems"]))
        lines.append(f"verdict on today's main: {verdict}")
        lines.append("needs a person's approval of: " + (" ".join(look["needs"]) or "nothing"))
        diff = history.DiffResult(look["head"], look["merge"], history.tree_diff(repo, look["head"], look["merge"]))
        info["files"] = [f.as_dict() for f in diff.files]
        lines += ["", diff.message]
    return Outcome(printable("\n".join(lines)), extra={"proposal": info})


def _changes(repo: Repo, head: str | None, merge: str) -> list[Change]:
    """The files `merge` changes against `head`, as the write path takes them."""
    res = repo.git("diff-tree", "-r", "-z", "--no-renames", "--name-status", head or history.EMPTY_TREE, merge)
    fields = res.zsplit()
    out = []
    for status, path in zip(fields[::2], fields[1::2]):
        data = None if status == "D" else repo.git("cat-file", "blob", f"{merge}:{path}").raw
        out.append(Change(path, data))
    return out


def accept(repo: Repo, ident: str, *, note: str = "", sign: bool = False, expect: str | None = None) -> Outcome:
    """The person's approval of proposal `ident`: one commit on today's main. `expect`:
    the proposal commit the person looked at (the page sends it): another is refused."""
    p = get(repo, ident)
    if expect and expect != p.commit:
        raise MemfsError(f"proposals: {ident} changed since it was shown; look at it again "
                         f"(git memory proposals show {ident})")
    with WriteSession(repo, tool="proposals accept") as session:
        look = preview(repo, p)
        if look["conflicts"]:
            raise MemfsError(f"proposals: {ident} was made on an older main and conflicts with today's at "
                             f"{', '.join(look['conflicts'])}; nothing was changed (reject it, or have it "
                             "proposed again on today's main)", details={"conflicts": look["conflicts"]})
        changes = _changes(repo, look["head"], look["merge"])
        if not changes:
            raise MemfsError(f"proposals: {ident} changes nothing on today's main; reject it")
        olds = {ch.path: session.read(ch.path) for ch in changes}
        try:
            session.validate(changes, olds)
            needs = approval.NONE
        except NeedsPerson as exc:
            needs = exc.needs  # what this change needs, found here, not read from the agent's trailer
        signers = approved.signers_configured(repo.root)
        sha = session.commit(changes, op=p.op if p.op != "?" else "proposal", reason=p.reason,
                             paths=p.paths or [ch.path for ch in changes], label="memory proposals accept",
                             trailers=[f"{proposal.ACCEPTED_TRAILER}: {ident}"], approvals=needs,
                             sign=sign or (signers and bool(needs)))
        repo.git("update-ref", "-d", proposal.ref(ident), p.commit)
    proposal.log(repo, {"id": ident, "action": "accepted", "proposal": p.commit, "commit": sha, "note": note,
                        "approved": sorted(needs)})
    return Outcome(f"Proposal {ident} accepted as {sha[:7]}"
                   f"{' (Memory-Approved: ' + ' '.join(sorted(needs)) + ')' if needs else ''}.", sha,
                   [ch.path for ch in changes], extra={"accepted": ident})


def reject(repo: Repo, ident: str, *, note: str = "") -> Outcome:
    p = get(repo, ident)
    repo.git("update-ref", "-d", proposal.ref(ident), p.commit)
    proposal.log(repo, {"id": ident, "action": "rejected", "proposal": p.commit, "note": note,
                        "reason": p.reason, "author": p.email})
    return Outcome(f"Proposal {ident} rejected; its note is kept in {proposal.LOG} in the git dir.",
                   extra={"rejected": ident, "note": note})
