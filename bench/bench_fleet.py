"""The server gate and a fleet on one shared branch.

The gate: what the pre-receive gate costs per pushed commit (pushes of 1 and of 100
commits), the difference between the same push into two bare repositories, one with
the gate and one without, divided by the commits pushed (the git transfer itself is
not the gate's). Between samples the server's branch is moved back, so every sample
pushes the same commits again (the gate checks commits no ref holds).

The fleet: the soak of tests/test_fleet.py, measured. 20 agents, each its own
process in its own clone, make 10 edits each with `git memory sync` after every
one, all at once, against one repository with the gate (ssh + gitolite where sshd
and gitolite are installed, else smart HTTP through `git http-backend`). Reported:
the wall time until the last agent is done, the pushes tried per commit that
landed (1.0 would be no push ever lost a race), and the 95th percentile of one
sync's wait (the time from `sync` to its commit on the server). One run: a fleet
takes minutes, and its figures are its own (a sync's wait is a distribution).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

from common import ROOT, make_files, median_ms, sh

FIGURES = {
    "gate_push_1_ms": (150, "ms", "server pre-receive gate per pushed commit, 1 commit per push"),
    "gate_push_100_ms": (15, "ms", "server pre-receive gate per pushed commit, 100 commits per push"),
    "fleet_wall_s": (240, "s", "20 agents x 10 edits, sync after each, all at once, one gated server"),
    "fleet_pushes_per_commit": (4.0, "x", "pushes tried per commit landed on main, in that fleet"),
    "fleet_sync_p95_s": (60, "s", "95th percentile of one sync's wait, in that fleet (default deadline)"),
}
AGENTS = 20
EDITS = 10


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


def _clones(url: str, workdir: str, env: dict[str, str],
            ssh_for: Callable[[int], str] | None = None) -> list[Path]:
    clones = []
    for n in range(AGENTS):
        dest = os.path.join(workdir, f"a{n:02d}")
        extra = dict(env)
        if ssh_for is not None:
            extra["GIT_SSH_COMMAND"] = ssh_for(n)
        proc = subprocess.run(["git", "memory", "clone", "-q", url, dest], cwd=workdir, env=extra,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"clone failed: {proc.stderr}")
        if ssh_for is not None:
            sh("git", "config", "core.sshCommand", ssh_for(n), cwd=dest)
        # A fleet this size on one branch waits ~AGENTS pushes per sync at worst.
        sh("git", "config", "memory.syncDeadline", "600", cwd=dest)
        clones.append(Path(dest))
    return clones


def _figures(records: list[dict[str, Any]], wall: float, failures: list[str]) -> dict[str, float]:
    if failures or len(records) != AGENTS * EDITS or {r["state"] for r in records} != {"pushed"}:
        raise RuntimeError(f"the fleet did not land every commit: {failures[:1] or records[:1]}")
    waits = sorted(r["seconds"] for r in records)
    return {"fleet_wall_s": wall,
            "fleet_pushes_per_commit": sum(r["attempts"] for r in records) / len(records),
            "fleet_sync_p95_s": waits[min(len(waits) - 1, int(round(0.95 * len(waits))) - 1)]}


def fleet(workdir: str) -> dict[str, float]:
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from fleet import log_gate, run_fleet
    from sshserver import SshGitolite

    seed = os.path.join(workdir, "seed")
    sh("git", "memory", "init", "-q", seed, cwd=workdir)
    why = SshGitolite.available()
    if why is None:
        with SshGitolite(Path(workdir) / "ssh") as server:
            users = [f"agent{n:02d}" for n in range(AGENTS)]
            for user in users:
                server.add_user(user)
            server.add_repos({"shared": users})
            env = {**os.environ, "GIT_SSH_COMMAND": server.ssh_command(users[0])}
            subprocess.run(["git", "push", "-q", server.url("shared"), "main"], cwd=seed, env=env, check=True)
            log_gate(server.bare("shared"))
            clones = _clones(server.url("shared"), workdir, dict(os.environ),
                             lambda n: server.ssh_command(f"agent{n:02d}"))
            return _figures(*run_fleet(clones, EDITS, timeout=1800))
    print(f"bench_fleet: no ssh server ({why}); the fleet runs over smart HTTP", file=sys.stderr)
    from gitserver import TOKEN, GitServer

    with GitServer(Path(workdir) / "server") as server:
        bare = server.add_repo("shared.git")
        sh("git", "memory", "hooks", "install", "-q", cwd=str(bare))
        sh("git", "push", "-q", str(bare), "main", cwd=seed)
        log_gate(bare)
        env = {**os.environ, "GIT_MEMORY_TOKEN": TOKEN}
        clones = _clones(server.url("shared.git"), workdir, env)
        return _figures(*run_fleet(clones, EDITS, env=env, timeout=1800))


def run(workdir: str, repeat: int) -> dict[str, float]:
    os.makedirs(os.path.join(workdir, "gate"))
    os.makedirs(os.path.join(workdir, "fleet"))
    return {**gate(os.path.join(workdir, "gate"), repeat), **fleet(os.path.join(workdir, "fleet"))}
