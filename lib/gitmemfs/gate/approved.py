"""Which commits of a range carry a person's approval, as a gate can tell (the server
gate, `git memory check RANGE`; core/approval.py has the whole rule).

With allowed signers configured for the memory (`gpg.ssh.allowedSignersFile`), a
commit's `Memory-Approved` trailer counts only when git verifies the commit's
signature as good by one of them (`%G?` is `G`), and the environment of the process
that checks approves nothing: a pusher's or an agent's variables are not a person's
key. Without signers, approvals are what they were: the checking process's
environment for every commit, and the trailers where `memory.approvalTrailers` is true.
"""
from __future__ import annotations

import os

from gitmemfs.core import approval, git

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, Sequence

SIGNERS = "gpg.ssh.allowedSignersFile"
TRUST_TRAILERS = "memory.approvaltrailers"
# Said when a refusal is this repository's configuration, not the pushed commits (issue 39).
UNCOUNTED = ("approves nothing here: this repository counts no approval recorded in a commit, so the "
             "fix is its configuration, not the commit: list the people's keys in "
             f"git config {SIGNERS} FILE (and sign: git memory protect --sign), or set "
             "git config memory.approvalTrailers true (then whoever can push can approve)")


class Approvals:
    """What a range's commits were approved for: `ambient` (every commit: the checking
    process's environment, only without signers) and `signed` / trailer words per commit."""

    __slots__ = ("ambient", "per_commit", "signers", "unverified", "uncounted")

    def __init__(self, ambient: frozenset[str], per_commit: dict[str, frozenset[str]], signers: bool,
                 unverified: dict[str, frozenset[str]] | None = None,
                 uncounted: Callable[[], dict[str, frozenset[str]]] | None = None):
        self.ambient = ambient
        self.per_commit = per_commit
        self.signers = signers
        self.unverified = unverified or {}  # claimed in a trailer, not signed by an allowed signer
        self.uncounted = uncounted  # claims where nothing counts them (asked only for the notes)

    def notes(self) -> list[str]:
        """One line per commit whose claimed approval did not count, saying why."""
        out = [f"note: {sha[:12]} carries {approval.trailer(words)} but is not signed by a key in "
               f"{SIGNERS}, so it approves nothing here (sign it: git commit --amend -S --no-edit)"
               for sha, words in self.unverified.items()]
        if self.uncounted is not None:
            out += [f"note: {sha[:12]} carries {approval.trailer(words)} but {UNCOUNTED}"
                    for sha, words in self.uncounted().items()]
        return out

    def of(self, commit: str | None) -> frozenset[str]:
        return self.ambient | self.per_commit.get(commit or "", approval.NONE)

    def any(self) -> frozenset[str]:
        """Everything approved anywhere in the range (for the tip-to-tip check of a push)."""
        return self.ambient.union(*self.per_commit.values())


def signers_configured(cwd: str, env: dict[str, str] | None = None) -> bool:
    res = git.run(["config", "--get", SIGNERS], cwd=cwd, env=env, check=False)
    return res.code == 0 and bool(res.out.strip())


def for_range(cwd: str, commits: Sequence[str], settings: dict[str, str],
              env: dict[str, str] | None = None) -> Approvals:
    """The approvals of `commits` (shas) in the repository at `cwd`; `settings` are
    check.settings() (for memory.approvalTrailers)."""
    signers = signers_configured(cwd, env)
    trust = settings.get(TRUST_TRAILERS, "").strip().lower() in ("true", "yes", "on", "1")
    ambient = approval.NONE if signers else approval.from_shell(os.environ)
    if not (signers or trust) or not commits:
        return Approvals(ambient, {}, signers,
                         uncounted=lambda: by_commit(cwd, commits, env, signed_only=False) if commits else {})
    claimed = by_commit(cwd, commits, env, signed_only=False)
    if not signers:
        return Approvals(ambient, claimed, signers)
    good = verified(cwd, list(claimed), env)
    return Approvals(ambient, {sha: w for sha, w in claimed.items() if sha in good}, signers,
                     {sha: w for sha, w in claimed.items() if sha not in good})


def by_commit(cwd: str, commits: Sequence[str], env: dict[str, str] | None = None, *,
              signed_only: bool = True) -> dict[str, frozenset[str]]:
    """The words of each commit's `Memory-Approved` trailers; with `signed_only`, only
    for commits whose signature git verifies as good by an allowed signer. (`git
    memory redact` asks for REDACT here, as protect does for PROTECT.)"""
    feed = "".join(c + "\n" for c in commits)
    res = git.run(["log", "--no-walk=unsorted", "--stdin", "--format=%H%x01%(trailers:key="
                         f"{approval.TRAILER},valueonly,separator=%x20)%x02"], cwd=cwd, env=env, input=feed)
    found: dict[str, frozenset[str]] = {}
    for record in res.out.split("\x02"):
        sha, _, text = record.strip().partition("\x01")
        words = approval.words(text)
        if sha and words:
            found[sha] = words
    if not signed_only or not found:
        return found
    good = verified(cwd, list(found), env)
    return {sha: words for sha, words in found.items() if sha in good}


def verified(cwd: str, commits: Sequence[str], env: dict[str, str] | None = None) -> set[str]:
    """The commits whose signature git verifies as good by an allowed signer (`%G?` = G).
    It runs the signing program once a commit: ask only for those that claim approval."""
    if not commits:
        return set()
    res = git.run(["log", "--no-walk=unsorted", "--stdin", "--format=%H %G?"], cwd=cwd, env=env,
                  input="".join(sha + "\n" for sha in commits), check=False)
    return {line.split()[0] for line in res.out.splitlines() if line.endswith(" G")}
