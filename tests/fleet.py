"""A fleet of agents sharing one memory server: the driver the soak test
(tests/test_fleet.py) and `make bench` (bench/bench_fleet.py) both use.

Each agent is its own process, in its own clone: `python fleet.py agent DIR NAME N`
waits for a byte on stdin (so all start together), then makes N edits, each a new
memory file committed by `git memory create`, each followed by `git memory --json
sync`, and prints one JSON line per sync (its state, push attempts and seconds).
`run_fleet` starts them all, releases them at once and collects their lines. `Serve`
runs the real `git memory serve` on 127.0.0.1 and issues the agents' keys.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

SUBJECT = "fleet {name} edit {n:02d}"


def agent(directory: str, name: str, edits: int) -> int:
    """One agent's life: edit, sync, edit, sync, ... Exits 1 at the first failure."""
    sys.stdin.buffer.read(1)   # the starting gun: the driver closes the pipe
    for n in range(edits):
        path = f"reference/fleet/{name}-{n:02d}.md"
        subject = SUBJECT.format(name=name, n=n)
        made = subprocess.run(["git", "memory", "-q", "create", path, f"{subject}.\n", "-d", subject,
                               "-m", subject], cwd=directory, capture_output=True, text=True)
        if made.returncode != 0:
            print(json.dumps({"agent": name, "edit": n, "state": "edit_failed", "error": made.stderr}), flush=True)
            return 1
        started = time.monotonic()
        synced = subprocess.run(["git", "memory", "--json", "sync"], cwd=directory, capture_output=True, text=True)
        seconds = time.monotonic() - started
        try:
            result = json.loads(synced.stdout)
        except ValueError:
            result = {"state": "crashed", "error": synced.stdout + synced.stderr}
        print(json.dumps({"agent": name, "edit": n, "state": result.get("state"), "seconds": seconds,
                          "attempts": result.get("push_attempts"), "rejections": result.get("rejections"),
                          "error": result.get("error"), "message": result.get("message")}), flush=True)
        if synced.returncode != 0:
            return 1
    return 0


def run_fleet(clones: Sequence[Path], edits: int, *, env: Mapping[str, str] | None = None,
              timeout: float = 600.0, env_of: Callable[[Path], Mapping[str, str]] | None = None
              ) -> tuple[list[dict[str, Any]], float, list[str]]:
    """Start one agent process per clone, release them together, wait for all.
    `env_of(clone)`, if given, is that agent's environment (its own key).
    Returns (every agent's sync records, wall seconds from release to the last exit,
    the stderr of agents that failed). Every process is ended by the time it returns."""
    procs = []
    gun, pull = os.pipe()   # every agent reads `gun`; closing `pull` releases them all at once
    try:
        for clone in clones:
            procs.append(subprocess.Popen([sys.executable, __file__, "agent", str(clone), clone.name, str(edits)],
                                          cwd=clone, env=dict(env_of(clone)) if env_of is not None
                                          else None if env is None else dict(env), stdin=gun,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        os.close(gun)
        started = time.monotonic()
        os.close(pull)
        pull = -1
        records: list[dict[str, Any]] = []
        failures: list[str] = []
        for proc in procs:
            left = max(1.0, timeout - (time.monotonic() - started))
            out, err = proc.communicate(timeout=left)
            records += [json.loads(line) for line in out.splitlines() if line.strip()]
            if proc.returncode != 0:
                failures.append(err + out[-2000:])
        return records, time.monotonic() - started, failures
    finally:
        if pull >= 0:
            os.close(pull)
            os.close(gun)
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def git(*args: str, cwd: Path | str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} in {cwd} failed: {proc.stderr}")
    return proc.stdout


GATE_LOG = "gate-passed.log"


def log_gate(bare: Path) -> Path:
    """Record every update our pre-receive gate let through: the gate runs its
    `pre-receive.local` only after it accepted the push, with the same stdin; and
    keep a reflog of the server's branches, so each update that landed is known."""
    log = bare / GATE_LOG
    local = bare / "hooks" / "pre-receive.local"
    local.write_text(f"#!/bin/sh\ncat >> '{log}'\n")
    local.chmod(0o755)
    git("config", "core.logAllRefUpdates", "always", cwd=bare)
    return log


def landed_updates(bare: Path, ref: str = "refs/heads/main") -> list[tuple[str, str]]:
    """(old, new) of every update of `ref` on the server, from its reflog (read only)."""
    path = bare / "logs" / ref
    return [tuple(line.split()[:2]) for line in path.read_text().splitlines() if line.strip()]  # type: ignore[misc]


def gated_updates(bare: Path, ref: str = "refs/heads/main") -> set[tuple[str, str]]:
    lines = (bare / GATE_LOG).read_text().splitlines() if (bare / GATE_LOG).exists() else []
    return {(p[0], p[1]) for p in (line.split() for line in lines) if len(p) == 3 and p[2] == ref}


class Serve:
    """`git memory serve --root ROOT --port 0` on 127.0.0.1, for as long as the `with` lasts."""

    def __init__(self, root: Path, env: Mapping[str, str] | None = None):
        self.root = root
        self.env = None if env is None else dict(env)  # whose `git memory` serves, and its git config
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""
        self.cpu_seconds = 0.0

    def __enter__(self) -> Serve:
        self.root.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(["git", "memory", "serve", "--root", str(self.root), "--port", "0", "--json"],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                     text=True, env=self.env)
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline()  # the server prints its URL once it listens
        try:
            self.url = json.loads(first)["url"]
        except (ValueError, KeyError):
            self.proc.kill()
            raise AssertionError(f"serve printed {first!r}: {self.proc.communicate()[1]}") from None
        return self

    def __exit__(self, *_: object) -> None:
        """Stop the server; `cpu_seconds` is then what it and every process it waited
        for used (http-backend, receive-pack, upload-pack, the hooks)."""
        assert self.proc is not None
        self.proc.terminate()
        until = time.monotonic() + 60
        while True:
            pid, status, usage = os.wait4(self.proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > until:
                self.proc.kill()
            time.sleep(0.05)
        self.proc.returncode = os.waitstatus_to_exitcode(status)
        self.cpu_seconds = usage.ru_utime + usage.ru_stime

    def key(self, key_id: str, *grants: str) -> str:
        """A new key (`git memory serve keys add ID GRANTS...`), as printed once."""
        res = subprocess.run(["git", "memory", "serve", "keys", "add", key_id, "--root", str(self.root), *grants],
                             capture_output=True, text=True, env=self.env)
        if res.returncode != 0:
            raise AssertionError(f"keys add {key_id}: {res.stderr}")
        return res.stdout.strip()

    def bare(self, name: str) -> Path:
        return self.root / f"{name}.git"


def landing_figures(records: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Pushes per landed commit and the p50/p95 of one sync's wait, from agents' records."""
    waits = sorted(r["seconds"] for r in records)

    def pct(p: float) -> float:
        return waits[min(len(waits) - 1, max(0, int(round(p * len(waits))) - 1))]
    return {"pushes_per_commit": sum(r["attempts"] or 0 for r in records) / max(1, len(records)),
            "sync_p50_s": pct(0.50), "sync_p95_s": pct(0.95)}


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "agent":
        sys.exit(agent(sys.argv[2], sys.argv[3], int(sys.argv[4])))
    sys.exit("usage: fleet.py agent DIR NAME EDITS")
