"""The server gate and a fleet: what the pre-receive gate costs per pushed commit (pushes
of 1 and of 100 commits), and how long 20 agents take to push at once to one server
over ssh (sshd + gitolite, as in tests/test_ssh_gitolite.py).

The gate's cost is the difference between the same push into two bare repositories,
one with the gate installed and one without, divided by the commits pushed: the git
transfer itself is not the gate's. Between samples the server's branch is moved back,
so every sample pushes the same commits again (the gate checks commits no ref holds).
`fleet_20_push_ms` is left out, with a note, where sshd or gitolite is not installed.
"""
from __future__ import annotations

import os
import sys
import threading

from common import ROOT, make_files, median_ms, sh

FIGURES = {
    "gate_push_1_ms": (150, "ms", "server pre-receive gate per pushed commit, 1 commit per push"),
    "gate_push_100_ms": (15, "ms", "server pre-receive gate per pushed commit, 100 commits per push"),
    "fleet_20_push_ms": (15000, "ms", "20 agents pushing 1 commit each at once, one ssh+gitolite server"),
}


def _commits(path: str, n: int, tag: str) -> str:
    for i in range(n):
        make_files(path, 1, folder=f"reference/{tag}{i:03d}")
        sh("git", "add", "-A", cwd=path)
        sh("git", "commit", "-q", "--no-verify", "-m", f"{tag} {i}", cwd=path)
    return sh("git", "rev-parse", "HEAD", cwd=path).stdout.strip()


def _push_ms(local: str, bare: str, base: str, tip: str, repeat: int) -> float:
    def once(_: int) -> None:
        sh("git", "update-ref", "refs/heads/main", base, cwd=bare)
        sh("git", "push", "-q", bare, f"{tip}:refs/heads/main", cwd=local)
    return median_ms(once, repeat)


def gate(workdir: str, repeat: int) -> dict[str, float]:
    local = os.path.join(workdir, "agent")
    sh("git", "memory", "init", local, cwd=workdir)
    sh("git", "config", "gc.auto", "0", cwd=local)
    base = sh("git", "rev-parse", "HEAD", cwd=local).stdout.strip()
    gated, plain = os.path.join(workdir, "gated.git"), os.path.join(workdir, "plain.git")
    for bare in (gated, plain):
        sh("git", "init", "-q", "--bare", bare, cwd=workdir)
        sh("git", "config", "gc.auto", "0", cwd=bare)
        sh("git", "push", "-q", bare, "main", cwd=local)
    sh("git", "memory", "hooks", "install", cwd=gated)
    sh("git", "config", "memory.checkScope", "all", cwd=gated)
    out = {}
    for n, key in ((1, "gate_push_1_ms"), (100, "gate_push_100_ms")):
        sh("git", "reset", "-q", "--hard", base, cwd=local)
        tip = _commits(local, n, f"p{n}-")
        with_gate = _push_ms(local, gated, base, tip, repeat)
        without = _push_ms(local, plain, base, tip, repeat)
        out[key] = max(0.0, with_gate - without) / n
    return out


def fleet(workdir: str, repeat: int) -> dict[str, float]:
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from sshserver import SshGitolite

    why = SshGitolite.available()
    if why:
        print(f"bench_fleet: fleet_20_push_ms skipped: {why}", file=sys.stderr)
        return {}
    with SshGitolite(os.path.join(workdir, "ssh")) as server:
        owners = {f"fleet{n}": f"agent{n}" for n in range(20)}
        for user in owners.values():
            server.add_user(user)
        server.add_repos(owners)
        agents = []
        for name, user in owners.items():
            local = os.path.join(workdir, name)
            sh("git", "memory", "init", local, cwd=workdir)
            sh("git", "config", "core.sshCommand", server.ssh_command(user), cwd=local)
            sh("git", "remote", "add", "origin", server.url(name), cwd=local)
            sh("git", "push", "-q", "origin", "main", cwd=local)
            base = sh("git", "rev-parse", "HEAD", cwd=local).stdout.strip()
            agents.append((local, str(server.bare(name)), base, _commits(local, 1, "fleet")))

        def once(_: int) -> None:
            for _local, bare, base, _tip in agents:
                sh("git", "update-ref", "refs/heads/main", base, cwd=bare)
            start = threading.Barrier(len(agents))
            failed: list[str] = []

            def push(local: str) -> None:
                start.wait()
                proc = sh("git", "push", "-q", "origin", "main", cwd=local, check=False)
                if proc.returncode != 0:
                    failed.append(proc.stderr)

            threads = [threading.Thread(target=push, args=(a[0],)) for a in agents]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            if failed:
                raise RuntimeError(f"{len(failed)} fleet pushes failed: {failed[0]}")

        return {"fleet_20_push_ms": median_ms(once, max(3, repeat // 3))}


def run(workdir: str, repeat: int) -> dict[str, float]:
    os.makedirs(os.path.join(workdir, "gate"))
    os.makedirs(os.path.join(workdir, "fleet"))
    return {**gate(os.path.join(workdir, "gate"), repeat), **fleet(os.path.join(workdir, "fleet"), repeat)}
