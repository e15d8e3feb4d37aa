"""Sending a redacted history: the one force push this toolkit makes (`redact --push`).

Before the rewrite, `leases` notes where each target's `main` stood: the upstream
remote's tracking ref (what was fetched), the mirror's tip (`ls-remote`). After it,
`push` sends the new `main` with `--force-with-lease` against exactly that: if someone
pushed meanwhile, the push is refused and nothing of theirs is overwritten; fetch,
sync and redact again. Credentials as for every network call (remote.auth, in env).
"""
from __future__ import annotations

import json
import os

from gitmemfs.core import git
from gitmemfs.core.errors import MemfsError
from gitmemfs.core.redact import redact
from gitmemfs.core.repo import Repo
from gitmemfs.remote import auth, network

BRANCH = "main"


class Target:
    def __init__(self, label: str, url: str, old: str | None):
        self.label = label  # the remote's name, or "mirror"
        self.url = url
        self.old = old  # where its main stood before the rewrite (None: it had none)


LEASES = "memory-redact-push.json"  # in the git dir until every push landed: a rerun uses it


def leases(repo: Repo) -> list[Target]:
    """Where each target stood before the rewrite: noted once, kept until pushed."""
    path = os.path.join(repo.git_dir, LEASES)
    try:
        with open(path, encoding="utf-8") as fh:
            return [Target(t["label"], t["url"], t["old"]) for t in json.load(fh)]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    out = _current(repo)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump([{"label": t.label, "url": t.url, "old": t.old} for t in out], fh)
    os.replace(tmp, path)
    return out


def _current(repo: Repo) -> list[Target]:
    out = []
    remote = repo.cfg(f"branch.{BRANCH}.remote")
    if remote:
        url = repo.git("remote", "get-url", "--end-of-options", remote, check=False).out.strip()
        old = repo.git("rev-parse", "-q", "--verify", f"refs/remotes/{remote}/{BRANCH}", check=False).out.strip()
        if url:
            out.append(Target(remote, url, old or None))
    mirror = repo.cfg("memory.mirrorUrl") or repo.cfg("letta.memoryRepository.url")
    if mirror:
        res = _network(repo, mirror, ["ls-remote", mirror, f"refs/heads/{BRANCH}"])
        out.append(Target("mirror", mirror, res.out.split()[0] if res.out.split() else None))
    return out


def push(repo: Repo, targets: list[Target]) -> list[str]:
    """Push the redacted main to each target with a lease; the lines to report."""
    said = []
    for t in targets:
        lease = f"--force-with-lease=refs/heads/{BRANCH}:{t.old or ''}"
        res = _network(repo, t.url, ["push", "--porcelain", lease, t.url, f"HEAD:refs/heads/{BRANCH}"])
        if res.code != 0:
            lines = [ln for ln in redact((res.err + res.out).strip()).splitlines() if ln.strip()]
            raise MemfsError(f"redact: the push to {t.label} was refused ({lines[-1] if lines else res.code}); "
                             "the local history is redacted: fetch, look, and run git memory redact --push again")
        if t.label != "mirror":
            repo.git("update-ref", f"refs/remotes/{t.label}/{BRANCH}", "HEAD")
        said.append(f"pushed the redacted history to {t.label}")
    try:
        os.unlink(os.path.join(repo.git_dir, LEASES))
    except FileNotFoundError:
        pass
    return said


def _network(repo: Repo, url: str, args: list[str]) -> git.Result:
    creds = auth.for_remote(url, repo.cfg("memory.authScheme"))
    return git.run(args, cwd=repo.root, config=[*creds.config(), *network.stall_config(120)],
                   timeout=300, check=False, env=git.ssh_default(repo.root))
