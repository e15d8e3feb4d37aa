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

The serve fleet: 20 agents, each with a key of its own, make 5 edits each with `sync`
after every one, all at once, on one memory of `git memory serve` (the package as
users install it), twice on the same server: through its merge queue (the default:
each sync pushes to a landing ref the server lands, serve/land.py) and, as the peer,
with `memory.syncLanding false` (each sync pushes to main and races the others).
Reported for each: pushes tried per commit landed, the 50th and 95th percentile of
one sync's wait, the wall time of the server's hooks (the pre-receive gate, and the
post-receive landing with its own run of the validator and its wait in the queue)
per push and per commit landed, timed by git itself (trace2 events of the server's
git, hook by hook), and the CPU the server used per commit landed (its rusage,
everything it ran included: what lost races cost).
`BENCH_FLEET_ONLY=serve make bench BENCH_ARGS=fleet` runs only these two.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable

from common import ROOT, installed, make_files, median_ms, sh

FIGURES = {
    "gate_push_1_ms": (150, "ms", "server pre-receive gate per pushed commit, 1 commit per push"),
    "gate_push_100_ms": (15, "ms", "server pre-receive gate per pushed commit, 100 commits per push"),
    "fleet_wall_s": (240, "s", "20 agents x 10 edits, sync after each, all at once, one gated server"),
    "fleet_pushes_per_commit": (4.0, "x", "pushes tried per commit landed on main, in that fleet"),
    "fleet_sync_p95_s": (60, "s", "95th percentile of one sync's wait, in that fleet (default deadline)"),
    "serve_pushes_per_commit": (1.5, "x", "serve, 20 agents x 5 edits on one memory: pushes per commit landed"),
    "serve_sync_p50_s": (None, "s", "serve, that fleet: median of one sync's wait"),
    "serve_sync_p95_s": (60, "s", "serve, that fleet: 95th percentile of one sync's wait"),
    "serve_gate_ms_per_push": (None, "ms", "serve, that fleet: the pre-receive gate per push"),
    "serve_land_ms_per_push": (None, "ms", "serve, that fleet: the post-receive landing per push (queue wait too)"),
    "serve_gate_ms_per_commit": (None, "ms", "serve, that fleet: both hooks per commit landed"),
    "serve_server_cpu_ms_per_commit": (None, "ms", "serve, that fleet: server CPU per commit landed (clones too)"),
    "serve_direct_pushes_per_commit": (None, "x", "peer: the same fleet pushing to main (syncLanding false)"),
    "serve_direct_sync_p50_s": (None, "s", "peer: median of one sync's wait"),
    "serve_direct_sync_p95_s": (None, "s", "peer: 95th percentile of one sync's wait"),
    "serve_direct_gate_ms_per_push": (None, "ms", "peer: the pre-receive gate per push"),
    "serve_direct_gate_ms_per_commit": (None, "ms", "peer: both hooks per commit landed (lost races included)"),
    "serve_direct_server_cpu_ms_per_commit": (None, "ms", "peer: the server's CPU per commit landed (clones too)"),
}
AGENTS = 20
EDITS = 10
SERVE_EDITS = 5


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


def _hook_seconds(trace: str) -> tuple[dict[str, float], int]:
    """Seconds spent in each server hook, and how many pre-receive runs (pushes that
    reached the gate), from the trace2 event files of the server's git processes."""
    started: dict[tuple[str, int], str] = {}
    spent: dict[str, float] = {}
    runs = 0
    for name in os.listdir(trace):
        with open(os.path.join(trace, name), encoding="utf-8", errors="replace") as fh:
            for line in fh:
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                key = (event.get("sid", ""), event.get("child_id", -1))
                if event.get("event") == "child_start" and event.get("child_class") == "hook":
                    started[key] = event.get("hook_name", "?")
                    runs += event.get("hook_name") == "pre-receive"
                elif event.get("event") == "child_exit" and key in started:
                    hook = started.pop(key)
                    spent[hook] = spent.get(hook, 0.0) + float(event.get("t_rel", 0.0))
    return spent, runs


def _serve_fleet(workdir: str, env: dict[str, str], landing: bool) -> dict[str, float]:
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from fleet import Serve, landing_figures, run_fleet

    trace = os.path.join(workdir, "trace2")
    config = os.path.join(workdir, "server.gitconfig")
    with open(config, "w", encoding="utf-8") as fh:  # trace2 is read from the global config only
        fh.write(f"[user]\n\tname = Serve\n\temail = serve@example.com\n[trace2]\n\teventTarget = {trace}\n")
    names = [f"agent-{n:02d}" for n in range(AGENTS)]
    os.makedirs(trace)  # a directory: a file per git process
    with Serve(Path(workdir) / "srv", env={**env, "GIT_CONFIG_GLOBAL": config}) as server:
        envs = {n: {**env, "GIT_MEMORY_TOKEN": server.key(n, "--create", "team")} for n in names}

        def clone(name: str) -> Path:
            dest = os.path.join(workdir, name)
            sh("git", "memory", "clone", "-q", f"{server.url}/team.git", dest, cwd=workdir, env=envs[name])
            sh("git", "config", "memory.syncDeadline", "600", cwd=dest)
            sh("git", "config", "memory.syncLanding", "true" if landing else "false", cwd=dest)
            return Path(dest)

        with ThreadPoolExecutor(4) as pool:
            clones = list(pool.map(clone, names))
        shutil.rmtree(trace)  # from here on, the fleet's pushes only
        os.makedirs(trace)
        records, _wall, failures = run_fleet(clones, SERVE_EDITS, timeout=1800, env_of=lambda c: envs[c.name])
    cpu = server.cpu_seconds
    if failures or len(records) != AGENTS * SERVE_EDITS or {r["state"] for r in records} != {"pushed"}:
        raise RuntimeError(f"the serve fleet did not land every commit: {failures[:1] or records[:1]}")
    spent, pushes = _hook_seconds(trace)
    gate_ms, land_ms = 1000 * spent.get("pre-receive", 0.0), 1000 * spent.get("post-receive", 0.0)
    return {**landing_figures(records), "gate_ms_per_push": gate_ms / max(1, pushes),
            "land_ms_per_push": land_ms / max(1, pushes), "gate_ms_per_commit": (gate_ms + land_ms) / len(records),
            "server_cpu_ms_per_commit": 1000 * cpu / len(records)}


def serve(workdir: str) -> dict[str, float]:
    env = dict(installed(workdir))
    out: dict[str, float] = {}
    for landing, prefix in ((True, "serve_"), (False, "serve_direct_")):
        part = os.path.join(workdir, prefix.strip("_"))
        os.makedirs(part)
        for key, value in _serve_fleet(part, env, landing).items():
            if prefix + key in FIGURES:
                out[prefix + key] = value
    return out


def run(workdir: str, repeat: int) -> dict[str, float]:
    for part in ("gate", "fleet", "serve"):
        os.makedirs(os.path.join(workdir, part))
    if os.environ.get("BENCH_FLEET_ONLY") == "serve":  # the serve figures alone: minutes, not half an hour
        return serve(os.path.join(workdir, "serve"))
    return {**gate(os.path.join(workdir, "gate"), repeat), **fleet(os.path.join(workdir, "fleet")),
            **serve(os.path.join(workdir, "serve"))}
