"""The agent in its own PID namespace, with its own /proc (issue 12, item 9).

Withholding GIT_MEMORY_TOKEN from the agent's environment is not enough: a process's
original environment stays readable in /proc/<pid>/environ for its whole life, and
both `git dream` and the `git` that started it still hold the token. In a new PID
namespace with /proc mounted afresh, the agent sees only its own processes, so no
other process's environ or cmdline is reachable at all.

`unshare(1)` (util-linux) does the work: `--pid --fork --mount-proc`, plus `--user
--map-current-user` when we are not root (an unprivileged user namespace). With
`--kill-child`, the namespace dies with unshare: signalling the agent's group (as
the runner does on timeout) still stops everything, and when the agent's first
process exits the kernel kills whatever it left in the namespace.

The namespace is a mount namespace too (`--mount-proc`). For a confined agent,
`--keep-caps` lets the sandbox launcher, which runs first inside it, cover every
listening unix socket with a bind mount (sandbox.hide_sockets) before it drops those
capabilities and confines itself: the person's ssh-agent and gpg-agent are then out of
reach by path as well as by variable, and the host's mounts are untouched.

Where namespaces are not allowed (no util-linux, user namespaces disabled, a
container without CAP_SYS_ADMIN), the agent runs as before and the dream says so in
its log; `available()` gives the reason.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from typing import Sequence

_cache: tuple[list[str], str] | None = None


def _prefix() -> list[str]:
    unshare = shutil.which("unshare")
    if not unshare:
        return []
    argv = [unshare, "--pid", "--fork", "--mount-proc", "--kill-child"]
    if os.geteuid() != 0:
        argv += ["--user", "--map-current-user"]
    return argv


def available() -> tuple[list[str], str]:
    """(argv prefix, "") when a PID namespace can be made here, else ([], why not)."""
    global _cache
    if _cache is None:
        prefix = _prefix()
        if not prefix:
            _cache = ([], "unshare (util-linux) is not installed")
        else:
            try:
                # The probe proves the namespace hides us: its /proc shows one process.
                res = subprocess.run([*prefix, "--", "/bin/sh", "-c", "ls -d /proc/[0-9]*"],
                                     capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL)
                ok = res.returncode == 0 and res.stdout.split() == ["/proc/1"]
                why = "" if ok else (res.stderr.strip().splitlines() or ["it did not hide other processes"])[-1]
            except (OSError, subprocess.SubprocessError) as exc:
                ok, why = False, str(exc)
            _cache = (prefix, "") if ok else ([], f"cannot create a PID namespace: {why}")
    return _cache


def wrap(argv: Sequence[str], *, keep_caps: bool = False) -> tuple[list[str], str]:
    """(argv to run, "") in a fresh PID and mount namespace, or (argv unchanged, why not).
    `keep_caps`: the first program keeps its capabilities in the namespace (only for the
    sandbox launcher, which drops them before it runs the agent)."""
    prefix, why = available()
    if not prefix:
        return list(argv), why
    caps = ["--keep-caps"] if keep_caps and "--user" in prefix else []
    return [*prefix, *caps, "--", *argv], ""
