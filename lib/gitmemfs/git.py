"""The one git runner for the whole package.

Every git command line starts with `-c commit.gpgsign=false` (agent identities
have no signing key), runs without a shell, with a non-interactive environment
and a timeout. Failures become `GitError`, whose every field is redacted; the
exceptions of the `sh` library (which carry the full command line) never
escape this module.

Two transports share the argv, env and error logic:
- `run()` uses `sh` (the design card's library); imported lazily.
- `run_light()` uses `subprocess`, for the hot paths (hooks, `check`, the
  edit commands) where importing `sh` (~55 ms) would blow the latency budget.
`BlobReader` streams many blobs through one `git cat-file --batch` process.

Secrets never go on a command line: `config=` values reach git through
`GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n` in the environment.
"""
from __future__ import annotations

import os
import subprocess
import threading
from typing import IO, Iterable, Mapping, Sequence, Tuple, Union

from .errors import EnvironmentProblem, MemfsError
from .redact import redact

DEFAULT_TIMEOUT = 60.0
CLONE_TIMEOUT = 180.0
BASE_ARGS: tuple[str, ...] = ("-c", "commit.gpgsign=false")

# Config for one git call: a mapping, or pairs when a key must repeat (an empty
# value first resets a multi-valued key such as http.extraHeader).
Config = Union[Mapping[str, str], Sequence[Tuple[str, str]]]

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
    "GIT_PAGER": "cat",
    "GIT_EDITOR": ":",
}


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
    env.update(_NON_INTERACTIVE)
    env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
    # English messages: we classify some errors by their text.
    env["LANGUAGE"] = "C"
    if extra:
        env.update(extra)
    if config:
        add_config(env, config)
    return env


def add_config(env: dict[str, str], config: Config) -> None:
    """Append `config` (a mapping, or pairs so a key can repeat) to the GIT_CONFIG_COUNT
    list in `env`, after anything inherited."""
    try:
        n = int(env.get("GIT_CONFIG_COUNT", "0") or "0")
    except ValueError:
        n = 0
    pairs = config.items() if isinstance(config, Mapping) else config
    for key, value in pairs:
        env[f"GIT_CONFIG_KEY_{n}"] = key
        env[f"GIT_CONFIG_VALUE_{n}"] = value
        n += 1
    env["GIT_CONFIG_COUNT"] = str(n)


def run(args: Sequence[str], *, cwd: str | os.PathLike[str] | None = None,
        input: str | bytes | None = None, env: Mapping[str, str] | None = None,
        config: Config | None = None, scrub: bool = False,
        timeout: float | None = DEFAULT_TIMEOUT, check: bool = True,
        ok: Iterable[int] = (0,)) -> Result:
    """Run git through `sh`. Raises GitError unless the exit code is in `ok` or check=False."""
    argv = argv_for(args)
    full_env = environment(env, config=config, scrub=scrub)
    sh = _sh()
    try:
        cmd = sh.Command("git")(
            *argv[1:], _cwd=os.fspath(cwd) if cwd is not None else None, _env=full_env,
            _in=input, _tty_out=False, _tty_in=False, _timeout=timeout,
            _ok_code=list(range(256)), _return_cmd=True, _truncate_exc=False,
            _log_msg=lambda *a: "git",
        )
        result = Result(cmd.exit_code, bytes(cmd.stdout or b""), bytes(cmd.stderr or b""), argv)
    except sh.TimeoutException:
        raise GitError(argv, -1, timed_out=True, timeout=timeout) from None
    except sh.CommandNotFound:
        raise EnvironmentProblem("git is not installed or not on PATH; install git and retry") from None
    except sh.ErrorReturnCode as exc:  # e.g. killed by a signal
        raise GitError(argv, getattr(exc, "exit_code", -1), exc.stdout, exc.stderr) from None
    except OSError as exc:
        raise GitError(argv, -1, stderr=str(exc)) from None
    return _checked(result, check, ok)


def run_light(args: Sequence[str], *, cwd: str | os.PathLike[str] | None = None,
              input: str | bytes | None = None, env: Mapping[str, str] | None = None,
              config: Config | None = None, scrub: bool = False,
              timeout: float | None = DEFAULT_TIMEOUT, check: bool = True,
              ok: Iterable[int] = (0,), pass_fds: Sequence[int] = (), spool: bool = False) -> Result:
    """Same contract as `run()`, over plain subprocess (no `sh` import).

    `spool=True` passes input and output through temporary files instead of
    pipes: for megabytes (a `cat-file --batch` of 100,000 blobs) that saves the
    poll loop over small pipe reads, which costs more CPU than git itself.
    """
    argv = argv_for(args)
    data = input.encode() if isinstance(input, str) else input
    try:
        if spool:
            proc = _spooled(argv, cwd, data, environment(env, config=config, scrub=scrub), timeout, pass_fds)
        else:
            proc = subprocess.run(
                argv, cwd=cwd, input=data, env=environment(env, config=config, scrub=scrub),
                capture_output=True, stdin=None if data is not None else subprocess.DEVNULL, timeout=timeout,
                pass_fds=tuple(pass_fds),
            )
    except subprocess.TimeoutExpired:
        raise GitError(argv, -1, timed_out=True, timeout=timeout) from None
    except FileNotFoundError:
        if cwd is not None and not os.path.isdir(cwd):
            raise GitError(argv, -1, stderr=f"directory does not exist: {cwd}") from None
        raise EnvironmentProblem("git is not installed or not on PATH; install git and retry") from None
    except OSError as exc:
        raise GitError(argv, -1, stderr=str(exc)) from None
    return _checked(Result(proc.returncode, proc.stdout, proc.stderr, argv), check, ok)


def _spooled(argv: list[str], cwd: str | os.PathLike[str] | None, data: bytes | None,
             env: dict[str, str], timeout: float | None,
             pass_fds: Sequence[int]) -> subprocess.CompletedProcess[bytes]:
    import tempfile  # only this path needs it

    with tempfile.TemporaryFile() as fin, tempfile.TemporaryFile() as fout, tempfile.TemporaryFile() as ferr:
        if data is not None:
            fin.write(data)
            fin.seek(0)
        proc = subprocess.run(argv, cwd=cwd, env=env, stdin=fin if data is not None else subprocess.DEVNULL,
                              stdout=fout, stderr=ferr, timeout=timeout, pass_fds=tuple(pass_fds))
        fout.seek(0)
        ferr.seek(0)
        proc.stdout, proc.stderr = fout.read(), ferr.read()
    return proc


def _checked(result: Result, check: bool, ok: Iterable[int]) -> Result:
    if check and result.code not in tuple(ok):
        raise GitError(result.argv, result.code, result.raw, result.err_raw)
    return result


_SH = None


def _sh():  # type: ignore[no-untyped-def]
    """Import `sh` on first use, with its loggers silenced (they log full command lines)."""
    global _SH
    if _SH is None:
        import logging

        import sh  # noqa: PLC0415 - deliberately lazy, see module docstring

        log = logging.getLogger("sh")
        log.setLevel(logging.CRITICAL + 1)
        log.propagate = False
        log.addHandler(logging.NullHandler())
        _SH = sh
    return _SH


class BlobReader:
    """Reads many objects through one `git cat-file --batch` process.

    `read_many` feeds requests from a writer thread while this thread reads, so a
    large batch cannot deadlock on full pipes.
    """

    def __init__(self, cwd: str | os.PathLike[str], env: Mapping[str, str] | None = None):
        self._argv = argv_for(["cat-file", "--batch"])
        try:
            self._proc = subprocess.Popen(
                self._argv, cwd=cwd, env=environment(env), stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            )
        except FileNotFoundError:
            raise EnvironmentProblem("git is not installed or not on PATH; install git and retry") from None
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._in: IO[bytes] = self._proc.stdin
        self._out: IO[bytes] = self._proc.stdout

    def __enter__(self) -> BlobReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            self._in.close()
        except OSError:
            pass
        try:
            self._proc.wait(timeout=DEFAULT_TIMEOUT)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
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
            except BaseException as exc:  # surfaced below
                error.append(exc)

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        found: dict[str, bytes | None] = {}
        try:
            for spec in specs:
                header = self._out.readline()
                if not header:
                    raise GitError(self._argv, self._proc.poll() or -1, stderr="cat-file stopped early")
                parts = header.rstrip(b"\n").split(b" ")
                if len(parts) == 3 and parts[2].isdigit():
                    size = int(parts[2])
                    data = self._out.read(size + 1)
                    found[spec] = data[:size]
                else:  # "<spec> missing" / "ambiguous"
                    found[spec] = None
        finally:
            writer.join()
        if error:
            raise GitError(self._argv, -1, stderr=str(error[0]))
        return found


def zsplit(data: str) -> list[str]:
    return [p for p in data.split("\0") if p]
