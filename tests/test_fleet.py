"""The fleet soak: 20 agents share one memory server, all at once.

Each agent is its own process in its own clone (tests/fleet.py) and makes 10 edits,
each followed by `git memory sync`. Against (a) a bare repository over ssh behind
gitolite, and (b) smart HTTP (`git http-backend`), both with our pre-receive gate:
every sync lands, all 200 commits are on the server's main exactly once, the gate
passed every update of main that landed, `git fsck` is clean, and a final sync leaves
every clone at the server's commit. Loopback only; every process is bounded in time.

Against `git memory serve` (its merge queue, serve/land.py), each agent with a key of
its own: 20 agents on one memory land every commit with one push per sync (no push
loses a race), replayed through the gate, `git fsck` clean; and 50 agents pushing
their own memories at the same moment all land.
"""
from __future__ import annotations

import json
import os
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable

import pytest
from fleet import SUBJECT, Serve, gated_updates, landed_updates, landing_figures, log_gate, run_fleet
from gitserver import GitServer, token_env
from sshserver import SshGitolite

from conftest import git, head, memory

AGENTS = 20
EDITS = 10
# A shared branch lands one push at a time: a sync waits about AGENTS pushes under this
# load, several times that on a machine busy with other work; the fleet's setting says so
# (docs/remotes-and-fleets.md). The test is bounded all the same: every agent is killed
# past FLEET_TIMEOUT, and pytest-timeout ends the test past its mark.
DEADLINE = "600"
FLEET_TIMEOUT = 1500.0

pytestmark = [pytest.mark.timeout(1800), pytest.mark.soak]


def clone_fleet(url: str, workdir: Path, env: dict[str, str] | None = None,
                ssh: SshGitolite | None = None) -> list[Path]:
    """`git memory clone` for every agent (a few at a time), each with its own key."""
    def one(n: int) -> Path:
        dest = workdir / f"a{n:02d}"
        extra = dict(env or {})
        if ssh is not None:
            extra["GIT_SSH_COMMAND"] = ssh.ssh_command(f"agent{n:02d}")
        proc = memory("clone", "-q", url, str(dest), cwd=workdir, env=extra)
        assert proc.returncode == 0, proc.stderr
        if ssh is not None:
            git("config", "core.sshCommand", ssh.ssh_command(f"agent{n:02d}"), cwd=dest)
        git("config", "memory.syncDeadline", DEADLINE, cwd=dest)
        return dest

    with ThreadPoolExecutor(4) as pool:
        clones = list(pool.map(one, range(AGENTS)))
    if ssh is not None:  # each clone's own key in its config, allowed by the person
        for n in range(AGENTS):
            allowed = f"core.sshCommand={ssh.ssh_command(f'agent{n:02d}')}"
            git("config", "--global", "--add", "memory.allowConfig", allowed, cwd=workdir)
    return clones


def check_fleet(bare: Path, clones: list[Path], records: list[dict[str, Any]], failures: list[str],
                env: dict[str, str] | None = None) -> None:
    assert not failures, failures[0]
    assert len(records) == AGENTS * EDITS
    assert {r["state"] for r in records} == {"pushed"}, [r for r in records if r["state"] != "pushed"][:3]
    # Every commit on main exactly once, in one line of history (no merges, no duplicates).
    subjects = git("log", "--format=%s", "main", cwd=bare).stdout.splitlines()
    mine = [s for s in subjects if s.startswith("fleet ")]
    expected = [SUBJECT.format(name=c.name, n=n) for c in clones for n in range(EDITS)]
    assert sorted(mine) == sorted(expected)
    assert git("rev-list", "--merges", "main", cwd=bare).stdout == ""
    # The gate passed every update of main that landed (its .local hook runs only then).
    landed = landed_updates(bare)
    assert len(landed) == AGENTS * EDITS
    assert not [u for u in landed if u not in gated_updates(bare)]
    fsck = git("fsck", "--no-progress", cwd=bare, check=False)
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr
    # A final sync brings every clone to the server's commit.
    tip = git("rev-parse", "main", cwd=bare).stdout.strip()
    for clone in clones:
        proc = memory("--json", "sync", cwd=clone, env=env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert json.loads(proc.stdout)["state"] in ("pulled", "clean")
        assert head(clone) == tip
        assert git("status", "--porcelain", cwd=clone).stdout == ""


def seed_server(url: str, workdir: Path, env: dict[str, str]) -> None:
    seed = workdir / "seed"
    assert memory("init", "-q", str(seed), cwd=workdir).returncode == 0
    git("push", "-q", url, "main", cwd=seed, env=env)


@pytest.mark.skipif(SshGitolite.available() is not None, reason=SshGitolite.available() or "")
def test_twenty_agents_share_one_gitolite_repository_over_ssh(tmp_path: Path) -> None:
    with SshGitolite(tmp_path / "ssh") as server:
        users = [f"agent{n:02d}" for n in range(AGENTS)]
        for user in users:
            server.add_user(user)
        server.add_repos({"shared": users})
        url = server.url("shared")
        bare = server.bare("shared")
        seed_server(url, tmp_path, {"GIT_SSH_COMMAND": server.ssh_command(users[0])})
        log_gate(bare)
        clones = clone_fleet(url, tmp_path, ssh=server)
        records, _, failures = run_fleet(clones, EDITS, timeout=FLEET_TIMEOUT)
        check_fleet(bare, clones, records, failures)


def test_twenty_agents_share_one_repository_over_smart_http(tmp_path: Path) -> None:
    with GitServer(tmp_path / "server") as server:
        bare = server.add_repo("shared.git")
        assert memory("hooks", "install", "-q", cwd=bare).returncode == 0
        git("config", "memory.checkScope", "all", cwd=bare)
        seed_server(str(bare), tmp_path, {})
        log_gate(bare)
        env = token_env()
        clones = clone_fleet(server.url("shared.git"), tmp_path, env=env)
        records, _, failures = run_fleet(clones, EDITS, env={**os.environ, **env}, timeout=FLEET_TIMEOUT)
        check_fleet(bare, clones, records, failures, env=env)


SERVE_AGENTS = 20
SERVE_EDITS = 4
OWN_AGENTS = 50


def serve_clones(server: Serve, memory_of: Callable[[str], str], names: list[str], workdir: Path
                 ) -> tuple[list[Path], dict[str, dict[str, str]]]:
    """Each agent's key (its own) and `git memory clone` of its memory (a few at a time)."""
    envs: dict[str, dict[str, str]] = {}

    def one(name: str) -> Path:
        dest = workdir / name
        proc = memory("clone", "-q", f"{server.url}/{memory_of(name)}.git", str(dest), cwd=workdir, env=envs[name])
        assert proc.returncode == 0, proc.stderr
        git("config", "memory.syncDeadline", DEADLINE, cwd=dest)
        return dest

    for name in names:
        shared = memory_of(name)
        grants = ("--create", shared) if shared != name else ()
        envs[name] = {"GIT_MEMORY_TOKEN": server.key(name, *grants)}
    with ThreadPoolExecutor(4) as pool:
        return list(pool.map(one, names)), envs


def test_twenty_agents_share_one_memory_on_git_memory_serve(tmp_path: Path) -> None:
    names = [f"agent-{n:02d}" for n in range(SERVE_AGENTS)]
    with Serve(tmp_path / "srv") as server:
        clones, envs = serve_clones(server, lambda _name: "team", names, tmp_path)
        bare = server.bare("team")
        log_gate(bare)
        seed = git("rev-parse", "main", cwd=bare).stdout.strip()
        records, _, failures = run_fleet(clones, SERVE_EDITS, timeout=FLEET_TIMEOUT,
                                         env_of=lambda c: {**os.environ, **envs[c.name]})
        assert not failures, failures[0]
        assert len(records) == SERVE_AGENTS * SERVE_EDITS
        assert {r["state"] for r in records} == {"pushed"}, [r for r in records if r["state"] != "pushed"][:3]
        # No push lost a race: one push per sync, each landed by the server.
        assert [r for r in records if r["attempts"] != 1] == []
        print(landing_figures(records))
        # Every commit on main exactly once, in one line of history, each update of main one landing.
        subjects = git("log", "--format=%s", "main", cwd=bare).stdout.splitlines()
        expected = [SUBJECT.format(name=c.name, n=n) for c in clones for n in range(SERVE_EDITS)]
        assert sorted(s for s in subjects if s.startswith("fleet ")) == sorted(expected)
        assert git("rev-list", "--merges", "main", cwd=bare).stdout == ""
        # Each update of main landed a batch of the pushes waiting for it, each push in one batch.
        reflog = (bare / "logs" / "refs" / "heads" / "main").read_text().splitlines()
        batches = [re.fullmatch(r".*\tland: (\d+) push\(es\)", line) for line in reflog]
        assert None not in batches, reflog
        assert sum(int(b[1]) for b in batches if b) == len(records)
        print(f"{len(records)} pushes landed in {len(batches)} batches")
        # The gate judged every push (each to a landing ref), and every landed commit passes
        # the validator where it now stands.
        gated = (bare / "gate-passed.log").read_text().split("\n")
        assert len([line for line in gated if " refs/land/main/" in line]) == len(records)
        assert git("for-each-ref", "refs/land", cwd=bare).stdout == ""  # every landing ref is gone
        fsck = git("fsck", "--no-progress", "--no-dangling", cwd=bare, check=False)
        assert fsck.returncode == 0, fsck.stdout + fsck.stderr
        # A final sync brings every clone to the server's commit, with nothing left to push.
        tip = git("rev-parse", "main", cwd=bare).stdout.strip()
        for clone in clones:
            proc = memory("--json", "sync", cwd=clone, env=envs[clone.name])
            assert proc.returncode == 0, proc.stdout + proc.stderr
            assert json.loads(proc.stdout)["state"] in ("pulled", "clean")
            assert head(clone) == tip
        checked = memory("check", f"{seed}..{tip}", cwd=clones[0])
        assert checked.returncode == 0, checked.stdout + checked.stderr


def test_fifty_agents_push_their_own_memories_at_the_same_moment(tmp_path: Path) -> None:
    names = [f"own-{n:02d}" for n in range(OWN_AGENTS)]
    with Serve(tmp_path / "srv") as server:
        clones, envs = serve_clones(server, lambda name: name, names, tmp_path)
        records, _, failures = run_fleet(clones, 1, timeout=FLEET_TIMEOUT,
                                         env_of=lambda c: {**os.environ, **envs[c.name]})
        assert not failures, failures[0]
        assert sorted(r["agent"] for r in records if r["state"] == "pushed") == names
        for clone in clones:
            bare = server.bare(clone.name)
            assert git("log", "-1", "--format=%s", "main", cwd=bare).stdout.strip() == SUBJECT.format(
                name=clone.name, n=0)
            assert git("rev-parse", "main", cwd=bare).stdout == git("rev-parse", "HEAD", cwd=clone).stdout
            fsck = git("fsck", "--no-progress", "--no-dangling", cwd=bare, check=False)
            assert fsck.returncode == 0, fsck.stdout + fsck.stderr
