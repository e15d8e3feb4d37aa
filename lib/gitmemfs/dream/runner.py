"""Running the agent command: its environment, process group, log and timeout.

The agent is `/bin/sh -c CMD` in the dream worktree, started in a new session
(so it leads its own process group), with the prompt file on stdin and its
stdout and stderr going, redacted line by line, to the run's log (and to our
stderr with --verbose). With the sandbox on, the command is wrapped by the
Landlock launcher (sandbox.py), which reports on a status pipe whether it
confined itself before exec.

When the agent's main process ends — or the timeout hits — nothing it started
may outlive it: the group gets SIGTERM, a grace period, then SIGKILL. The dream
process is a child subreaper (prctl PR_SET_CHILD_SUBREAPER), so whatever the agent
orphans — after setsid, a double fork, with its environment scrubbed — is
re-parented to us rather than to init, and every descendant started since the
agent is stopped the same way. The DREAM_ID=<id> marker in the environment finds
the rest when a later dream recovers from one that was killed outright.
"""
from __future__ import annotations

import os
import select
import shlex
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import IO, Callable, Mapping, Sequence

from gitmemfs.core.errors import UsageError
from gitmemfs.core.redact import redact
from gitmemfs.dream import environment, pidns, progress, sandbox
from gitmemfs.dream.environment import PACKAGE_PARENT

_PR_SET_CHILD_SUBREAPER = 36

BUILTINS = {"tidy": "deterministic hygiene: duplicate list items, trailing whitespace, final newline, CRLF",
            "notes": "record the user's explicit 'remember …' and 'I prefer …' statements in system/human.md",
            "noop": "do nothing (for measuring the dream's own overhead)"}


@dataclass
class AgentRun:
    exit_code: int | None = None
    timed_out: bool = False
    interrupted: bool = False
    sandbox_error: str | None = None
    duration: float = 0.0
    killed: int = 0            # stragglers that had to be killed after the main process ended

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not (self.timed_out or self.interrupted or self.sandbox_error)

    def describe(self) -> str:
        if self.sandbox_error:
            return f"the sandbox refused to start the agent: {self.sandbox_error}"
        if self.timed_out:
            return f"the agent timed out after {self.duration:.0f}s and was killed"
        if self.interrupted:
            return "the dream was interrupted and the agent was stopped"
        if self.exit_code is not None and self.exit_code < 0:
            return f"the agent was killed by signal {-self.exit_code}"
        return f"the agent exited with status {self.exit_code}"


@dataclass
class SandboxPlan:
    write_dirs: list[str]
    probe: str
    write_files: list[str] = field(default_factory=list)
    deny_chmod: bool = True
    allow_ports: list[int] | None = None  # TCP ports it may connect to; None: not confined
    read_dirs: list[str] | None = None    # what it may read (dream/readable.py); None: not confined
    read_files: list[str] = field(default_factory=list)
    read_probe: str = ""                  # a file it must not be able to read


class Log:
    """The run's log file: our phase lines and the agent's redacted output."""

    def __init__(self, path: str, *, echo_agent: bool = False, echo_progress: bool = True,
                 stream: IO[str] | None = None):
        self.path = path
        self._fh = open(path, "ab")
        self._lock = threading.Lock()
        self.echo_agent = echo_agent
        self.echo_progress = echo_progress
        self.stream = stream or sys.stderr
        self.last_line = ""

    def progress(self, text: str, *, echo: bool = True) -> None:
        text = redact(text)
        stamp = time.strftime("%H:%M:%S")
        self._write(f"[{stamp}] git dream: {text}\n".encode("utf-8", "replace"))
        if self.echo_progress and echo:
            self._echo(f"git dream: {text}\n")

    def agent(self, data: bytes) -> None:
        self._write(data)
        lines = [ln for ln in data.decode("utf-8", "replace").splitlines() if ln.strip()]
        if lines:
            self.last_line = lines[-1].strip()  # for the live progress line
        if self.echo_agent:
            self._echo(data.decode("utf-8", "replace"))

    def _write(self, data: bytes) -> None:
        with self._lock:
            self._fh.write(data)
            self._fh.flush()

    def _echo(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            pass

    def close(self) -> None:
        with self._lock:
            self._fh.close()


def command_for(spec: str) -> tuple[str, dict[str, str]]:
    """The shell command for an agent spec, and env it needs (`builtin:NAME` runs our
    offline agents with this interpreter)."""
    spec = spec.strip()
    if not spec.startswith("builtin:"):
        return spec, {}
    name = spec[len("builtin:"):]
    if name not in BUILTINS:
        raise UsageError(f"unknown built-in agent '{spec}'; available: "
                         + ", ".join(f"builtin:{n}" for n in BUILTINS))
    path = os.environ.get("PYTHONPATH", "")
    env = {"PYTHONPATH": PACKAGE_PARENT + (os.pathsep + path if path else "")}
    return f"{shlex.quote(sys.executable)} -m gitmemfs.dream.builtin {name}", env


class Interrupts:
    """SIGINT/SIGTERM/SIGHUP during a pass. While the agent runs they stop it (and the
    pass finalizes as failed, keeping the work); at any other moment they are held
    until the pass finishes, so a merge or a snapshot is never cut in half. One that
    arrives before the agent starts keeps the agent from starting."""

    agent_running = False
    pending = False

    @classmethod
    def handler(cls, signum: int, _frame: object) -> None:
        if cls.agent_running:
            raise KeyboardInterrupt
        cls.pending = True

    @classmethod
    def install(cls) -> None:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, cls.handler)


def grace_for(timeout: float) -> float:
    return min(5.0, max(0.5, timeout / 10))


def run(command: str, *, cwd: str, env: Mapping[str, str], prompt_file: str, log: Log, timeout: float,
        sandbox_plan: SandboxPlan | None, marker: str,
        on_start: Callable[[int, int | None], None] | None = None) -> AgentRun:
    """Run the agent to completion, timeout or interruption; leave nothing running.
    `on_start(pid, start time)` is called as soon as it runs (the record needs both)."""
    grace = grace_for(timeout)
    if Interrupts.pending:
        log.progress("interrupted before the agent started; not starting it")
        return AgentRun(interrupted=True)
    argv: list[str] = ["/bin/sh", "-c", command]
    status_r = status_w = -1
    if sandbox_plan is not None:
        status_r, status_w = os.pipe()
        argv = sandbox.launcher_argv(sys.executable, sandbox_plan.write_dirs, probe=sandbox_plan.probe,
                                     status_fd=status_w, command=argv, write_files=sandbox_plan.write_files,
                                     deny_chmod=sandbox_plan.deny_chmod, allow_ports=sandbox_plan.allow_ports,
                                     hide_sockets=bool(pidns.available()[0]), read_dirs=sandbox_plan.read_dirs,
                                     read_files=sandbox_plan.read_files, read_probe=sandbox_plan.read_probe)
    # Its own PID namespace and /proc: our environ (and our parent git's, and any other
    # process of ours, such as an MCP server) holds withheld values for life, and must
    # not be readable from /proc/<pid>/environ. Confined, also its own mount namespace
    # where the sandbox hides every listening unix socket (sandbox.hide_sockets).
    argv, why = pidns.wrap(argv, keep_caps=sandbox_plan is not None)
    if why:
        withheld = environment.withheld(os.environ, env)
        log.progress(f"the agent shares our process namespace ({why}); "
                     + (f"withheld {', '.join(withheld)} stay readable in /proc/<pid>/environ of git dream "
                        "and its parent" if withheld else "other processes' environments stay readable")
                     + ("; the person's unix sockets (ssh-agent, gpg-agent) stay reachable"
                        if sandbox_plan is not None else ""))
    out_r, out_w = os.pipe()
    started = time.monotonic()
    result = AgentRun()
    import subprocess

    become_subreaper()
    try:
        with open(prompt_file, "rb") as stdin:
            proc = subprocess.Popen(argv, cwd=cwd, env=dict(env), stdin=stdin, stdout=out_w, stderr=out_w,
                                    start_new_session=True, close_fds=True,
                                    pass_fds=(status_w,) if status_w >= 0 else ())
    finally:
        os.close(out_w)
        if status_w >= 0:
            os.close(status_w)
    since = start_time(proc.pid)
    if on_start:
        on_start(proc.pid, since)
    reader = threading.Thread(target=_pump, args=(out_r, log), daemon=True)
    reader.start()
    try:
        if status_r >= 0:
            status = _read_status(status_r)
            if status != "ok":
                proc.wait()
                result.sandbox_error = status[len("error: "):] if status.startswith("error: ") else (
                    status or "the sandbox launcher stopped without saying why")
                return result
        deadline = started + timeout
        Interrupts.agent_running = True
        ticker = progress.Ticker(log, started)
        while True:
            try:
                proc.wait(timeout=max(0.0, min(deadline - time.monotonic(), ticker.interval)))
                break
            except subprocess.TimeoutExpired:
                if time.monotonic() < deadline:
                    ticker.tick()  # still running: the live line, or a heartbeat in the log
                    continue
                ticker.clear()
                result.timed_out = True
                log.progress(f"timeout after {timeout:g}s: stopping the agent's process group")
                _signal_group(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=grace)
                except subprocess.TimeoutExpired:
                    pass
                _signal_group(proc.pid, signal.SIGKILL)
                proc.wait()
                break
            except KeyboardInterrupt:
                result.interrupted = True
                grace = min(grace, 1.0)  # someone is waiting for us to stop
                _signal_group(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=grace)
                except subprocess.TimeoutExpired:
                    _signal_group(proc.pid, signal.SIGKILL)
                    proc.wait()
                break
        result.exit_code = proc.returncode
    finally:
        if "ticker" in locals():
            ticker.clear()
        Interrupts.agent_running = False
        result.killed = stop_stragglers(proc.pid, marker, grace, since=since)
        reader.join(timeout=5)
        result.duration = time.monotonic() - started
    return result


def _read_status(fd: int) -> str:
    data = b""
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            data += chunk
            if data.endswith(b"\n"):  # one line; a PID namespace's unshare keeps the pipe open
                break
    finally:
        os.close(fd)
    return data.decode("utf-8", "replace").strip()


def _pump(fd: int, log: Log) -> None:
    """Copy the agent's output to the log, redacting whole lines."""
    pending = b""
    try:
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            pending += chunk
            if b"\n" in pending:
                done, _, pending = pending.rpartition(b"\n")
                log.agent(_redact_bytes(done + b"\n"))
            elif len(pending) > 1 << 16:
                log.agent(_redact_bytes(pending))
                pending = b""
    except OSError:
        pass
    finally:
        if pending:
            log.agent(_redact_bytes(pending + b"\n"))
        os.close(fd)


def _redact_bytes(data: bytes) -> bytes:
    return redact(data.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")


def _signal_group(pgid: int, sig: int) -> None:
    if pgid <= 1:  # 0 would be our own group, 1 and below are not agents
        return
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def become_subreaper() -> bool:
    """Make orphaned descendants re-parent to this process instead of init (Linux)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        done: int = libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        return done == 0
    except (OSError, AttributeError):
        return False


def _stat(pid: int | str) -> list[bytes] | None:
    """Fields of /proc/PID/stat after the command name: [state, ppid, pgrp, …];
    index 19 is the start time (clock ticks since boot)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields if len(fields) > 19 else None


def start_time(pid: int) -> int | None:
    fields = _stat(pid)
    return int(fields[19]) if fields else None


def _has_marker(pid: int | str, needle: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            environ = fh.read()
    except OSError:
        return False
    return environ.startswith(needle) or b"\0" + needle in environ


def owns_group(pgid: int, start: int | None, marker: str) -> bool:
    """Whether process group `pgid` is still the agent's (for a run recorded earlier).
    Its leader alive: only if it is the same process (start time) or carries the marker.
    Leader gone: yes — Linux never hands out a pid still in use as a process group id,
    so any member left is one the agent started."""
    if pgid <= 1:
        return False
    fields = _stat(pgid)
    if fields is None:
        return True
    if start is not None and int(fields[19]) == start:
        return True
    return _has_marker(pgid, marker.encode() + b"\0")


def stragglers(pgid: int, marker: str, *, since: int | None = None) -> list[int]:
    """Live (non-zombie) processes in the group, descending from this process and
    started at or after `since` (the agent's start time), or carrying the dream's env
    marker (`pgid` <= 1 means: not by the group)."""
    needle = marker.encode() + b"\0"
    try:
        names = [n for n in os.listdir("/proc") if n.isdigit()]
    except OSError:
        return []
    me = os.getpid()
    table: dict[int, list[bytes]] = {}
    for name in names:
        fields = _stat(name)
        if fields is not None and int(name) != me:
            table[int(name)] = fields
    mine: set[int] = set()
    if since is not None:
        children: dict[int, list[int]] = {}
        for pid, fields in table.items():
            children.setdefault(int(fields[1]), []).append(pid)
        stack = list(children.get(me, []))
        while stack:
            pid = stack.pop()
            if int(table[pid][19]) >= since:
                mine.add(pid)
            stack.extend(children.get(pid, []))
    found = []
    for pid, fields in table.items():
        if fields[0] == b"Z":
            continue
        if (pgid > 1 and int(fields[2]) == pgid) or pid in mine or _has_marker(pid, needle):
            found.append(pid)
    return found


def stop_stragglers(pgid: int, marker: str, grace: float, *, since: int | None = None) -> int:
    """TERM, wait up to `grace`, then KILL whatever the agent left running; reap the
    ones that were re-parented to us."""
    left = stragglers(pgid, marker, since=since)
    if not left:
        return 0
    count = len(left)
    _signal_all(left, pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while left and time.monotonic() < deadline:
        time.sleep(0.02)
        _reap()
        left = stragglers(pgid, marker, since=since)
    for _ in range(50):
        if not left:
            break
        _signal_all(left, pgid, signal.SIGKILL)
        time.sleep(0.02)
        _reap()
        left = stragglers(pgid, marker, since=since)
    _reap()
    return count


def _reap() -> None:
    """Collect exited children re-parented to us (we are their subreaper). Called only
    once the agent itself was waited for, when no other child of ours is running."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _signal_all(pids: Sequence[int], pgid: int, sig: int) -> None:
    _signal_group(pgid, sig)
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
