"""Sending a redacted history: the one force push this toolkit makes (`redact --push`).

Where: the branch's upstream remote (or, without one, the only remote that has the
branch: a remote made with a plain `git push origin main`), and the mirror. Each
target is asked what its branch really is (`ls-remote`) right before the push, and
the push carries exactly that as its lease (`--force-with-lease`), so nothing that
lands after the question is overwritten. When the server has commits the local
history lacks (someone pushed after your last fetch, or you redacted first and push
later), they are fetched, paired with the redaction as a clone pairs them
(remote/redaction_sync.py), replayed onto the redacted history with the same
strings replaced and paths removed, and the record is made again on top: one record
per redaction, however many tries. Then what was fetched is forgotten again (reflogs
expired, objects pruned). The remote-tracking ref ends where the server is.
"""
from __future__ import annotations

import os

from gitmemfs.core import git, purge
from gitmemfs.core.errors import MemfsError
from gitmemfs.core.git import BlobReader
from gitmemfs.core.redact import redact
from gitmemfs.core.repo import Repo
from gitmemfs.gate import redaction
from gitmemfs.remote import auth, network

INCOMING = "refs/memory/redact-incoming"  # what the server had, while it is replayed
TRIES = 5  # leases lost to other pushes before giving up
LEASES = "memory-redact-push.json"  # written by earlier versions; the lease is now asked each time


class Target:
    def __init__(self, label: str, url: str, branch: str):
        self.label = label  # the remote's name, or "mirror"
        self.url = url
        self.branch = branch


def targets(repo: Repo) -> list[Target]:
    """Where `--push` sends the redacted branch; refuses (before anything is rewritten)
    when there is nowhere to send it."""
    branch = repo.git("symbolic-ref", "-q", "--short", "HEAD", check=False).out.strip()
    if not branch:
        raise MemfsError("redact --push: HEAD is detached; check out the memory's branch (git switch main) first")
    out = []
    remote = repo.cfg(f"branch.{branch}.remote")
    if not remote:
        having = [r for r in repo.git("remote").lines()
                  if repo.git("rev-parse", "-q", "--verify", f"refs/remotes/{r}/{branch}", check=False).code == 0]
        if len(having) == 1:
            remote = having[0]
    mirror = repo.cfg("memory.mirrorUrl") or repo.cfg("letta.memoryRepository.url")
    if remote:
        url = repo.git("remote", "get-url", "--end-of-options", remote, check=False).out.strip()
        if url:
            out.append(Target(remote, url, branch))
    if not out and not mirror:
        raise MemfsError(f"redact --push: branch {branch} has no upstream, so there is nowhere to push; set it "
                         f"(git branch --set-upstream-to origin/{branch}) and run again; nothing was changed")
    if mirror:
        out.append(Target("mirror", mirror, branch))
    return out


def push(repo: Repo, where: list[Target]) -> list[str]:
    """Push the redacted branch to each target with a lease on what it really has."""
    said = []
    fetched: list[str] = []  # the targets whose old history came back with a fetch
    with repo.lock(timeout=10):  # catching up moves the branch, as the rewrite did
        try:
            for t in where:
                _push_one(repo, t, fetched)
                said.append(f"pushed the redacted history to {t.label}")
        finally:
            repo.git("update-ref", "-d", INCOMING, check=False)
            if fetched:  # refused or not, what the fetch brought is forgotten again
                purge.forget_old_history(repo)
    try:
        os.unlink(os.path.join(repo.git_dir, LEASES))
    except FileNotFoundError:
        pass
    return said


def _push_one(repo: Repo, t: Target, fetched: list[str]) -> None:
    """Ask, catch up, push with the lease; again while others' pushes take the lease."""
    ref = f"refs/heads/{t.branch}"
    last = ""
    for _ in range(TRIES):
        res = _network(repo, t.url, ["ls-remote", t.url, ref])
        if res.code != 0:
            raise MemfsError(f"redact: can't reach {t.label} ({_last_line(res)}); the local history is redacted: "
                             "run git memory redact --push again")
        theirs = res.out.split()[0] if res.out.split() else ""
        head = repo.git("rev-parse", "HEAD").out.strip()
        if theirs and theirs != head and not _contains(repo, head, theirs):
            got = _network(repo, t.url, ["fetch", "-q", "--no-tags", t.url, f"+{ref}:{INCOMING}"])
            if got.code != 0:
                raise MemfsError(f"redact: can't fetch from {t.label} ({_last_line(got)}); the local history is "
                                 "redacted: run git memory redact --push again")
            fetched.append(t.label)
            theirs = repo.git("rev-parse", INCOMING).out.strip()
            if not _contains(repo, head, theirs):
                _catch_up(repo, theirs, t.label)
        lease = f"--force-with-lease={ref}:{theirs}"
        res = _network(repo, t.url, ["push", "--porcelain", lease, t.url, f"HEAD:{ref}"])
        if res.code == 0:
            if t.label != "mirror":
                repo.git("update-ref", f"refs/remotes/{t.label}/{t.branch}", "HEAD")
            return
        last = network.rejection(res) or _last_line(res)
        if "stale info" not in res.out + res.err and "fetch first" not in res.out + res.err:
            said = network.remote_lines(res.err)  # the gate's own words: they say what to do
            raise MemfsError(f"redact: the push to {t.label} was refused ({last}); the local history is redacted"
                             + (". The server said: " + " | ".join(said) if said else "")
                             + "; once that is dealt with, run git memory redact --push again")
    raise MemfsError(f"redact: {t.label} kept moving ({TRIES} tries, last: {last}); the local history is "
                     "redacted: run git memory redact --push again")


def _contains(repo: Repo, head: str, sha: str) -> bool:
    return repo.git("merge-base", "--is-ancestor", sha, head, check=False).code == 0


def _catch_up(repo: Repo, theirs: str, label: str) -> None:
    """The server has commits the redacted branch lacks: replay them onto it, redacted
    as the record's own history was, and make the record again on top (local commits
    made after the record follow it)."""
    from gitmemfs.remote import redaction_sync

    record = redaction_sync.record_on(repo)
    if record is None:
        raise MemfsError("redact --push: the branch has no redaction record on it; run git memory redact first")
    found = redaction.record_of(repo.root, record)
    assert found is not None
    olds = repo.git("rev-list", theirs, "--not", "HEAD", "--").out.split()
    pairing = redaction.follow(repo.root, record, olds, [theirs], learn=True)
    if pairing is None:
        raise MemfsError(f"redact --push: what {label} has can't be paired with this redaction (its history was "
                         "rewritten another way); nothing was pushed. Fetch and look at it first")
    redaction_sync.named_by(pairing, found)
    arrived = repo.git("rev-list", "--topo-order", "--reverse", theirs, "--not", pairing.old, "--").out.split()
    with BlobReader(repo.root) as reader:
        rewriter = redaction_sync.Rewriter(repo, pairing, reader)
        for sha in arrived:
            rewriter.commit(sha)
    base = rewriter.moved.get(theirs, theirs)
    if base == found.parents[0]:
        return  # nothing arrived: the record already sits on the redacted twin of what they have
    message = found.message
    sign = ["-S"] if repo.cfg_bool("commit.gpgsign") or b"\ngpgsig " in (repo.git("cat-file", "commit", record).raw) \
        else []
    again = repo.git("commit-tree", *sign, "-p", base, "-F", "-", f"{base}^{{tree}}",
                     input=message).out.strip()
    if repo.git("rev-parse", "HEAD").out.strip() == record:
        repo.git("reset", "-q", "--keep", again)
        return
    res = repo.git("rebase", "-q", "--no-verify", "--onto", again, record, check=False)
    if res.code != 0:
        repo.git("rebase", "--abort", check=False)
        raise MemfsError(f"redact --push: the commits made after the redaction conflict with what {label} had; "
                         "nothing was pushed (your branch is as it was): sync, then run git memory redact --push")


def _last_line(res: git.Result) -> str:
    lines = [ln for ln in redact((res.err + res.out).strip()).splitlines() if ln.strip()]
    return lines[-1] if lines else str(res.code)


def _network(repo: Repo, url: str, args: list[str]) -> git.Result:
    from gitmemfs.core import ownconfig

    creds = auth.for_remote(url, repo.cfg("memory.authScheme"))
    # Checked again as it starts, and pinned (core/ownconfig.py): the person's programs only.
    argv, pins, env = ownconfig.network_git(repo.root, args, urls=[url])
    return git.run(argv, cwd=repo.root, config=[*pins, *creds.config(), *network.stall_config(120)],
                   timeout=300, check=False, env=env)
