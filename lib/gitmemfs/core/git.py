"""The one git runner for the whole package.

Every git command line starts with `-c commit.gpgsign=false` (agent identities
have no signing key), runs without a shell, with a non-interactive environment
and a timeout. Failures become `GitError`, whose every field is redacted.

`run()` starts local git over os.posix_spawn (no `subprocess` import, ~3 ms a
hook would pay). The git that talks to other machines runs through `sh` in
`core.gitnet`, with this module's argv, environment and `GitError`.
`run_many()`, `start()` and `start_detached()` are the same start-up for several
commands at once, for one waited on later, and for housekeeping no one waits for.
`BlobReader` streams many blobs through one `git cat-file --batch` process.

Secrets never go on a command line: `config=` values reach git through
`GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n` in the environment.
"""
from __future__ import annotations

import io
import os
import select
import time

# `signal` brings `enum` (~3.8 ms, ~4 % of a 1-file hook under load): under the 5 %
# the fast-path rule asks of a shortcut, so no private `_signal` (HACKING.md).
from signal import SIGKILL, SIGPIPE

from gitmemfs.core.approval import VARS as APPROVAL_VARS
from gitmemfs.core.errors import EnvironmentProblem, MemfsError, is_oid, missing_object
from gitmemfs.core.redact import redact

TYPE_CHECKING = False  # `typing` costs ~2 ms to import; the hooks import this module
if TYPE_CHECKING:
    from typing import IO, Any, Iterable, Mapping, Sequence, Tuple, Union

    # Config for one git call: a mapping, or pairs when a key must repeat (an empty
    # value first resets a multi-valued key such as http.extraHeader).
    Config = Union[Mapping[str, str], Sequence[Tuple[str, str]]]

DEFAULT_TIMEOUT = 60.0
CLONE_TIMEOUT = 180.0
BASE_ARGS: tuple[str, ...] = ("-c", "commit.gpgsign=false")

# Git exports these into hooks; they point at *this* repo and must not leak into
# a git process that targets another one (a mirror push, a clone).
_REPO_ENV = (
    "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX", "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE",
    "GIT_CONFIG_PARAMETERS", "GIT_QUARANTINE_PATH",
)
REPO_ENV = _REPO_ENV  # public name for callers that build an environment themselves

_NON_INTERACTIVE = {
    "GIT_TERMINAL_PROMPT": "0",
    "GCM_INTERACTIVE": "never",
    "GCM_GUI_PROMPT": "false",
    "GIT_ASKPASS": "",
    "SSH_ASKPASS": "",
    "SSH_ASKPASS_REQUIRE": "never",
    "GIT_PAGER": "cat",
    "GIT_EDITOR": ":",
}


# Judge objects as they are stored: a `refs/replace/*` ref or an info/grafts file
# would let git show another commit or tree than the one a ref really names, and a
# gate that reads the substitute passes what it never saw (issue 12, item 2).
# (A graft file path that cannot exist: /dev/null itself would make git print its
# grafts deprecation hint in every command.)
# The staged tree against HEAD as the gates read it: every change, raw, full ids.
# --ignore-submodules=none: a diff.ignoreSubmodules setting must not hide a gitlink
# change from the gate.
STAGED_DIFF = ("diff", "--cached", "--raw", "-z", "--no-renames", "--no-abbrev", "--ignore-submodules=none")
# The writer's clean check: HEAD, branch and every change, untracked files included.
# No optional locks: a read must never hold index.lock, which would make a concurrent
# writer's commit fail or leave a stale lock if killed.
STATUS = ("--no-optional-locks", "status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all",
          "--ignore-submodules=none")
OBJECTS_AS_STORED = {"GIT_NO_REPLACE_OBJECTS": "1", "GIT_GRAFT_FILE": os.path.join(os.devnull, "no-grafts")}


class GitError(MemfsError):
    """A git command failed. argv, stdout and stderr are stored redacted."""

    def __init__(self, argv: Sequence[str], code: int, stdout: str | bytes = "",
                 stderr: str | bytes = "", *, timed_out: bool = False, timeout: float | None = None):
        self.argv = [redact(str(a)) for a in argv]
        self.exit_code = code
        self.stdout = redact(_text(stdout))
        self.stderr = redact(_text(stderr))
        self.timed_out = timed_out
        sub = _subcommand(self.argv)
        if timed_out:
            summary = f"git {sub} timed out after {timeout:g}s"
        else:
            detail = _summary(self.stderr) or _summary(self.stdout)
            summary = f"git {sub} failed (exit {code})" + (f": {detail}" if detail else "")
        super().__init__(summary)


class Result:
    """A finished git command: exit code and raw output."""

    __slots__ = ("code", "raw", "err_raw", "argv")

    def __init__(self, code: int, raw: bytes = b"", err_raw: bytes = b"", argv: list[str] | None = None):
        self.code = code
        self.raw = raw
        self.err_raw = err_raw
        self.argv = argv or []

    @property
    def out(self) -> str:
        return _text(self.raw)

    @property
    def err(self) -> str:
        return _text(self.err_raw)

    def lines(self) -> list[str]:
        return [line for line in self.out.splitlines() if line]

    def zsplit(self) -> list[str]:
        return [p for p in self.out.split("\0") if p]


def _text(data: str | bytes | None) -> str:
    if data is None:
        return ""
    if isinstance(data, bytes):
        return data.decode("utf-8", "surrogateescape")
    return data


def _subcommand(argv: Sequence[str]) -> str:
    """The git subcommand name, skipping `git` and any `-c k=v` / `-C dir` options."""
    i = 1 if argv and argv[0] == "git" else 0
    while i < len(argv):
        a = argv[i]
        if a in ("-c", "-C"):
            i += 2
            continue
        if a.startswith("-"):
            i += 1
            continue
        return a
    return "command"


def _summary(text: str) -> str:
    """The informative part of git's output: `fatal:`/`error:` lines, else the last line."""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    if not lines:
        return ""
    key = [ln for ln in lines if ln.startswith(("fatal:", "error:", "remote:", "! "))]
    picked = key[:3] if key else lines[-2:]
    return " / ".join(picked)[:600]


def hook_env() -> dict[str, str] | None:
    """Inside a git hook, keep the index git gave us (made absolute)."""
    index = os.environ.get("GIT_INDEX_FILE")
    if not index:
        return None
    return {"GIT_INDEX_FILE": os.path.abspath(index)}


def argv_for(args: Sequence[str]) -> list[str]:
    return ["git", *BASE_ARGS, *[str(a) for a in args]]


def environment(extra: Mapping[str, str] | None = None, *,
                config: Config | None = None, scrub: bool = False,
                base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment every git child gets.

    `config` entries are appended to any inherited GIT_CONFIG_COUNT list, which is
    how secrets (an auth header) reach git without touching argv or .git/config.
    """
    env = dict(os.environ if base is None else base)
    if scrub:
        for key in _REPO_ENV:
            env.pop(key, None)
        # Nor the caller's -c style settings (an auth header of the triggering
        # command, say): `config` below starts a fresh list.
        for key in [k for k in env if k == "GIT_CONFIG_COUNT" or k.startswith(("GIT_CONFIG_KEY_",
                                                                                "GIT_CONFIG_VALUE_"))]:
            del env[key]
    env.update(_NON_INTERACTIVE)
    env.update(OBJECTS_AS_STORED)
    # A person's approval never rides along into a git we start (a hook would read it):
    # an operation that has one passes it in `extra` (core/approval.py).
    for key in APPROVAL_VARS:
        env.pop(key, None)
    # English messages: we classify some errors by their text.
    env["LANGUAGE"] = "C"
    if extra:
        env.update(extra)
    if config:
        add_config(env, config)
    return env


SSH_BATCH = "ssh -o BatchMode=yes"


def ssh_default(cwd: str | os.PathLike[str] | None, *, repo_config: bool = True,
                base: Mapping[str, str] | None = None) -> dict[str, str]:
    """`GIT_SSH_COMMAND` in batch mode for a network call, unless the user chose how
    git runs ssh ($GIT_SSH_COMMAND, $GIT_SSH or core.sshCommand): their command is
    theirs to keep non-interactive (it runs without a terminal all the same).
    Costs one `git config` call; `repo_config=False` ignores the repository at
    `cwd` (a clone's parent folder)."""
    env = os.environ if base is None else base
    if env.get("GIT_SSH_COMMAND") or env.get("GIT_SSH"):
        return {}
    res = run(["config", "--get", "core.sshCommand"], cwd=cwd, check=False,
                    env=None if repo_config else {"GIT_DIR": os.devnull})
    if res.code == 0 and res.out.strip():
        return {}
    return {"GIT_SSH_COMMAND": SSH_BATCH}


def add_config(env: dict[str, str], config: Config) -> None:
    """Append `config` (a mapping, or pairs so a key can repeat) to the GIT_CONFIG_COUNT
    list in `env`, after anything inherited."""
    try:
        n = int(env.get("GIT_CONFIG_COUNT", "0") or "0")
    except ValueError:
        n = 0
    pairs = config.items() if hasattr(config, "items") else config
    for key, value in pairs:
        env[f"GIT_CONFIG_KEY_{n}"] = key
        env[f"GIT_CONFIG_VALUE_{n}"] = value
        n += 1
    env["GIT_CONFIG_COUNT"] = str(n)


def run(args: Sequence[str], *, cwd: str | os.PathLike[str] | None = None,
        input: str | bytes | None = None, env: Mapping[str, str] | None = None,
        config: Config | None = None, scrub: bool = False,
        timeout: float | None = DEFAULT_TIMEOUT, check: bool = True,
        ok: Iterable[int] = (0,), pass_fds: Sequence[int] = (), spool: bool = False) -> Result:
    """Run local git; GitError unless the exit code is in `ok` or check=False.
    (Network git: `core.gitnet.run`.)

    `spool=True` passes input and output through temporary files instead of
    pipes: for megabytes (a `cat-file --batch` of 100,000 blobs) that saves the
    poll loop over small pipe reads, which costs more CPU than git itself.
    """
    argv = _located(argv_for(args), cwd)
    data = input.encode() if isinstance(input, str) else input
    full_env = environment(env, config=config, scrub=scrub)
    if spool:
        return _checked(_spooled(argv, full_env, data, timeout, pass_fds), check, ok)
    try:
        child = _Child(argv, full_env, stdin=data is not None, pass_fds=pass_fds)
    except FileNotFoundError:
        raise EnvironmentProblem("git is not installed or not on PATH; install git and retry") from None
    except OSError as exc:
        raise GitError(argv, -1, stderr=str(exc)) from None
    out, err = child.communicate(data, timeout)
    return _checked(Result(child.returncode, out, err, argv), check, ok)


def run_many(commands: Sequence[Sequence[str]], *, cwd: str | os.PathLike[str] | None = None,
             env: Mapping[str, str] | None = None,
             timeout: float | None = DEFAULT_TIMEOUT) -> list[Result]:
    """Several short read-only git commands at once (check=False, no input): all start
    before any is waited for, so their start-ups overlap on a second core. Each one's
    output is read to the end in turn; one that fills its pipe just waits for us."""
    env = environment(env)
    started: list[Started] = []
    try:
        for args in commands:
            started.append(Started(_located(argv_for(args), cwd), env))
        return [one.result(timeout) for one in started]
    except BaseException:
        for one in started:
            one.stop()
        raise


def start(args: Sequence[str], *, cwd: str | os.PathLike[str] | None = None,
          env: Mapping[str, str] | None = None, pass_fds: Sequence[int] = ()) -> Started:
    """Start a short read-only git command (no input) and return at once; its
    `result()` later. The hook starts its diff first and imports the rules while
    git works, on the second core; an edit does the same with its clean check."""
    return Started(_located(argv_for(args), cwd), environment(env), pass_fds)


def start_detached(args: Sequence[str], *, cwd: str | os.PathLike[str] | None = None) -> None:
    """Start git in its own session, output to /dev/null, and never wait for it (it
    outlives us if need be; init reaps it then): housekeeping no one waits for."""
    argv = _located(argv_for(args), cwd)
    null = os.open(os.devnull, os.O_RDWR)
    try:
        _Child(argv, environment(), stdin=False, files=(None, null, null), session=True)
    except OSError as exc:
        raise GitError(argv, -1, stderr=str(exc)) from None
    finally:
        os.close(null)


class Started:
    """A git command running in the background, read to the end by `result()`."""

    def __init__(self, argv: list[str], env: Mapping[str, str], pass_fds: Sequence[int] = ()):
        self._result: Result | None = None
        try:
            self.child = _Child(argv, env, stdin=False, pass_fds=pass_fds)
        except FileNotFoundError:
            raise EnvironmentProblem("git is not installed or not on PATH; install git and retry") from None
        except OSError as exc:
            raise GitError(argv, -1, stderr=str(exc)) from None

    def result(self, timeout: float | None = DEFAULT_TIMEOUT, *, check: bool = False) -> Result:
        """Its output and exit code (GitError on failure with `check`); a timeout kills it.
        Asked again, the same answer."""
        if self._result is None:
            out, err = self.child.communicate(None, timeout)
            self._result = Result(self.child.returncode, out, err, self.child.argv)
        return _checked(self._result, check, (0,))

    def stop(self) -> None:
        self.child.kill()
        self.child.close_pipes()


def _spooled(argv: list[str], env: dict[str, str], data: bytes | None, timeout: float | None,
             pass_fds: Sequence[int]) -> Result:
    import tempfile  # only this path needs it

    with tempfile.TemporaryFile() as fin, tempfile.TemporaryFile() as fout, \
            tempfile.TemporaryFile() as ferr:
        if data is not None:
            fin.write(data)
            fin.flush()
            fin.seek(0)
        try:
            child = _Child(argv, env, stdin=False, pass_fds=pass_fds,
                           files=(fin.fileno() if data is not None else None, fout.fileno(), ferr.fileno()))
        except FileNotFoundError:
            raise EnvironmentProblem("git is not installed or not on PATH; install git and retry") from None
        except OSError as exc:
            raise GitError(argv, -1, stderr=str(exc)) from None
        try:
            child.wait(timeout, timeout)
        except BaseException:
            child.kill()
            raise
        fout.seek(0)
        ferr.seek(0)
        return Result(child.returncode, fout.read(), ferr.read(), argv)


def _located(argv: list[str], cwd: str | os.PathLike[str] | None) -> list[str]:
    """posix_spawn cannot change directory, so git does it: `git -C DIR` (same meaning)."""
    if cwd is None:
        return argv
    where = os.fspath(cwd)
    if not os.path.isdir(where):
        raise GitError(argv, -1, stderr=f"directory does not exist: {where}")
    return [argv[0], *BASE_ARGS, "-C", where, *argv[1 + len(BASE_ARGS):]]


class _Child:
    """A git process started with os.posix_spawnp, its pipes as raw descriptors.

    The hooks run git on every commit, and importing `subprocess` costs ~3 ms (a
    tenth of the pre-commit budget), so this is the small part of it we need:
    stdio redirection, SIGPIPE back to default (Python ignores it), chosen
    descriptors passed on, a poll() loop that feeds stdin while draining both
    outputs, and a deadline that kills the process.
    """

    def __init__(self, argv: list[str], env: Mapping[str, str], *, stdin: bool, stderr: bool = True,
                 pass_fds: Sequence[int] = (), files: tuple[int | None, int, int] | None = None,
                 session: bool = False):
        self.argv = argv
        self.session = session
        self.returncode = -1
        self.stdin: int | None = None
        self.stdout: int | None = None
        self.stderr: int | None = None
        actions: list[tuple[Any, ...]] = []  # posix_spawn file actions
        mine: list[int] = []    # our pipe ends, closed again if spawning fails
        theirs: list[int] = []  # the child's ends, closed here once it has its copies

        def pipe(target: int, we_read: bool) -> int:
            r, w = os.pipe()
            ours, child = (r, w) if we_read else (w, r)
            mine.append(ours)
            theirs.append(child)
            actions.append((os.POSIX_SPAWN_DUP2, child, target))
            return ours

        try:
            if files is not None:  # spooled: stdio are files we already opened
                fin, fout, ferr = files
                if fin is None:
                    actions.append((os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0))
                else:
                    actions.append((os.POSIX_SPAWN_DUP2, fin, 0))
                actions += [(os.POSIX_SPAWN_DUP2, fout, 1), (os.POSIX_SPAWN_DUP2, ferr, 2)]
            else:
                if stdin:
                    self.stdin = pipe(0, we_read=False)
                else:
                    actions.append((os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0))
                self.stdout = pipe(1, we_read=True)
                if stderr:
                    self.stderr = pipe(2, we_read=True)
                else:
                    actions.append((os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0))
            inherited = [fd for fd in pass_fds if not os.get_inheritable(fd)]
            for fd in inherited:
                os.set_inheritable(fd, True)
            try:
                # (posix_spawnp looks `git` up on this process's PATH, as subprocess
                # would here: `environment()` never changes PATH.)
                self.pid = os.posix_spawnp(argv[0], argv, env, file_actions=actions,
                                           setsigdef=(SIGPIPE,), setsid=session)
            finally:
                for fd in inherited:
                    os.set_inheritable(fd, False)
        except BaseException:
            for fd in mine:
                os.close(fd)
            raise
        finally:
            for fd in theirs:
                os.close(fd)

    def communicate(self, data: bytes | None, timeout: float | None) -> tuple[bytes, bytes]:
        """Feed `data`, read both outputs to the end, reap the process."""
        deadline = None if timeout is None else time.monotonic() + timeout
        out_fd, err_fd = self.stdout, self.stderr
        chunks: dict[int, list[bytes]] = {}
        poller = select.poll()
        for fd in (out_fd, err_fd):
            if fd is not None:
                chunks[fd] = []
                poller.register(fd, select.POLLIN)
        pending = memoryview(data or b"")
        if self.stdin is not None:
            if pending:
                os.set_blocking(self.stdin, False)
                poller.register(self.stdin, select.POLLOUT)
            else:
                os.close(self.stdin)
                self.stdin = None
        open_fds = len(chunks) + (self.stdin is not None)
        try:
            while open_fds:
                wait = None if deadline is None else max(0.0, deadline - time.monotonic())
                events = poller.poll(None if wait is None else wait * 1000)
                if not events and deadline is not None and time.monotonic() >= deadline:
                    raise GitError(self.argv, -1, timed_out=True, timeout=timeout)
                for fd, _event in events:
                    if fd == self.stdin:
                        try:
                            pending = pending[os.write(fd, pending[:1 << 16]):]
                        except BlockingIOError:
                            continue
                        except BrokenPipeError:
                            pending = pending[:0]
                        if not pending:
                            poller.unregister(fd)
                            os.close(fd)
                            self.stdin = None
                            open_fds -= 1
                        continue
                    block = os.read(fd, 1 << 16)
                    if block:
                        chunks[fd].append(block)
                    else:
                        poller.unregister(fd)
                        open_fds -= 1
            self.wait(None if deadline is None else max(0.0, deadline - time.monotonic()), timeout)
        except BaseException:
            self.kill()
            raise
        finally:
            self.close_pipes()
        return (b"".join(chunks[out_fd]) if out_fd is not None else b"",
                b"".join(chunks[err_fd]) if err_fd is not None else b"")

    def wait(self, limit: float | None, timeout: float | None = None) -> int:
        """Reap the process within `limit` seconds (GitError on timeout)."""
        deadline = None if limit is None else time.monotonic() + limit
        if deadline is not None:
            self._sleep_until_exit(limit)  # type: ignore[arg-type]
        delay = 0.0002
        while True:
            pid, status = os.waitpid(self.pid, 0 if deadline is None else os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
                return self.returncode
            if deadline is not None and time.monotonic() >= deadline:
                raise GitError(self.argv, -1, timed_out=True, timeout=timeout if timeout is not None else limit)
            time.sleep(delay)
            delay = min(delay * 2, 0.02)

    def _sleep_until_exit(self, limit: float) -> None:
        """Wake when the process ends (a pidfd, Linux 5.3+), at most `limit` seconds:
        exact, where sleeping in steps overshoots by up to a step on every git call."""
        try:
            fd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):
            return  # the steps below do it
        try:
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            poller.poll(limit * 1000)
        finally:
            os.close(fd)

    def kill(self) -> None:
        if self.returncode != -1:
            return
        try:
            # In its own session, the whole group goes (it is still unreaped, so
            # the group id cannot belong to anyone else).
            if self.session:
                os.killpg(self.pid, SIGKILL)
            else:
                os.kill(self.pid, SIGKILL)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        self.returncode = -SIGKILL

    def close_pipes(self) -> None:
        for name in ("stdin", "stdout", "stderr"):
            fd = getattr(self, name)
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
                setattr(self, name, None)


def _checked(result: Result, check: bool, ok: Iterable[int]) -> Result:
    if check and result.code not in tuple(ok):
        raise GitError(result.argv, result.code, result.raw, result.err_raw)
    return result


SMALL_BATCH = 4096  # bytes of requests a pipe always takes at once (POSIX PIPE_BUF or more)


class _DeadlineReader(io.RawIOBase):
    """A pipe's read end that gives up at `deadline` (time.monotonic()), for the
    buffered reader over cat-file's output: a lazy fetch in a partial clone, or a
    stuck git, must not hang a hook forever."""

    def __init__(self, fd: int, argv: list[str]):
        super().__init__()
        self.fd = fd
        self.argv = argv
        self.deadline: float | None = None
        self.timeout: float | None = None
        self._poll = select.poll()
        self._poll.register(fd, select.POLLIN)

    def readable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self.fd

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        if self.deadline is not None:
            wait = max(0.0, self.deadline - time.monotonic())
            if not self._poll.poll(wait * 1000):
                raise GitError(self.argv, -1, timed_out=True, timeout=self.timeout)
        return os.readv(self.fd, [buffer])

    def close(self) -> None:
        if not self.closed:
            os.close(self.fd)
        super().close()


class BlobReader:
    """Reads many objects through one `git cat-file --batch` process.

    `read_many` feeds a large batch from a writer thread while this thread reads,
    so it cannot deadlock on full pipes; a small one is written at once. Each
    `read_many` has `timeout` seconds; an object cut short is an error, never
    content (a truncated file must not be validated as if it were whole).
    """

    def __init__(self, cwd: str | os.PathLike[str], env: Mapping[str, str] | None = None,
                 timeout: float | None = DEFAULT_TIMEOUT):
        self._argv = _located(argv_for(["cat-file", "--batch"]), cwd)
        self.timeout = timeout
        try:
            self._proc = _Child(self._argv, environment(env), stdin=True, stderr=False)
        except FileNotFoundError:
            raise EnvironmentProblem("git is not installed or not on PATH; install git and retry") from None
        except OSError as exc:
            raise GitError(self._argv, -1, stderr=str(exc)) from None
        assert self._proc.stdin is not None and self._proc.stdout is not None
        # The descriptors now belong to these file objects.
        self._in: IO[bytes] = os.fdopen(self._proc.stdin, "wb")
        self._raw = _DeadlineReader(self._proc.stdout, self._argv)
        self._out: IO[bytes] = io.BufferedReader(self._raw, 1 << 16)
        self._proc.stdin = self._proc.stdout = None

    def __enter__(self) -> BlobReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            self._in.close()
        except OSError:
            pass
        if self._proc.returncode == -1:  # not already killed after a failed read
            try:
                self._proc.wait(DEFAULT_TIMEOUT)
            except GitError:
                self._proc.kill()
        self._out.close()

    def read(self, spec: str) -> bytes | None:
        return self.read_many([spec])[spec]

    def read_many(self, specs: Sequence[str]) -> dict[str, bytes | None]:
        """Object contents by spec (an oid or `rev:path`); None when missing."""
        specs = list(dict.fromkeys(specs))
        for spec in specs:
            if "\n" in spec:
                raise ValueError("object spec contains a newline")
        if not specs:
            return {}
        payload = "".join(s + "\n" for s in specs).encode("utf-8", "surrogateescape")
        error: list[BaseException] = []

        def feed() -> None:
            try:
                self._in.write(payload)
                self._in.flush()
            except BaseException as exc:  # noqa: BLE001 - surfaced below
                error.append(exc)

        writer = None
        if len(payload) <= SMALL_BATCH:
            feed()  # fits in any pipe buffer: cat-file cannot block us
        else:
            import threading  # ~1 ms; the common small batch does without

            writer = threading.Thread(target=feed, daemon=True)
            writer.start()
        found: dict[str, bytes | None] = {}
        self._raw.timeout = self.timeout
        self._raw.deadline = None if self.timeout is None else time.monotonic() + self.timeout
        try:
            for spec in specs:
                header = self._out.readline()
                if not header.endswith(b"\n"):
                    raise GitError(self._argv, -1, stderr="cat-file stopped early")
                parts = header.rstrip(b"\n").split(b" ")
                if len(parts) == 3 and parts[2].isdigit():
                    size = int(parts[2])
                    data = self._out.read(size + 1)
                    if len(data) != size + 1 or not data.endswith(b"\n"):
                        raise GitError(self._argv, -1, stderr=f"cat-file stopped early: {spec} was cut short "
                                                              f"({min(len(data), size)} of {size} bytes)")
                    found[spec] = data[:size]
                elif is_oid(spec) and parts[-1:] == [b"missing"]:
                    raise missing_object(spec)  # a tree named it: damage, not an absent file
                else:  # "<spec> missing" / "ambiguous"
                    found[spec] = None
        except BaseException:
            self._proc.kill()  # a stream that timed out or broke off cannot be read any further
            raise
        finally:
            self._raw.deadline = None
            if writer is not None:
                writer.join()
        if error:
            raise GitError(self._argv, -1, stderr=str(error[0]))
        return found


def zsplit(data: str) -> list[str]:
    return [p for p in data.split("\0") if p]
