"""The git that talks to other machines: clone, fetch, push, ls-remote, the mirror.

It runs through `sh` (the design card's library). The command line and the
environment are `core.git`'s (`argv_for`, `environment`: `-c commit.gpgsign=false`
first, no prompts, secrets as `GIT_CONFIG_*` env, never argv), and a failure is
`core.git.GitError`, redacted: `sh`'s own exceptions, whose `full_cmd` carries the
command line, never leave this module, and its loggers are kept quiet.

git starts in a session of its own (`_new_session`), so it has no terminal to
prompt on; a timeout or an interrupt kills that whole process group, so a helper
git started (git-remote-http, ssh) cannot outlive the call waiting on a silent
server. Importing `sh` costs ~55 ms, paid only by commands that talk to a remote,
where a round trip costs more: the local hot path (hooks, edits, check) never
imports this module and keeps `core.git.run` over posix_spawn.
"""
from __future__ import annotations

import os
from signal import SIGKILL
from typing import TYPE_CHECKING, Iterable, Mapping, Sequence

from gitmemfs.core import git
from gitmemfs.core.errors import EnvironmentProblem

if TYPE_CHECKING:
    from types import ModuleType

_SH: ModuleType | None = None


def _sh() -> ModuleType:
    """`sh`, imported on first use, its loggers silenced (they log whole command lines)."""
    global _SH
    if _SH is None:
        import logging

        import sh

        log = logging.getLogger("sh")
        log.setLevel(logging.CRITICAL + 1)
        log.propagate = False
        log.addHandler(logging.NullHandler())
        _SH = sh
    return _SH


def run(args: Sequence[str], *, cwd: str | os.PathLike[str] | None = None,
        input: str | bytes | None = None, env: Mapping[str, str] | None = None,
        config: git.Config | None = None, scrub: bool = False,
        timeout: float | None = git.DEFAULT_TIMEOUT, check: bool = True,
        ok: Iterable[int] = (0,)) -> git.Result:
    """Run a network git command; the same contract as `core.git.run`: GitError
    unless the exit code is in `ok` or check=False, `timed_out` on a timeout."""
    argv = git.argv_for(args)
    where = os.fspath(cwd) if cwd is not None else None
    if where is not None and not os.path.isdir(where):
        raise git.GitError(argv, -1, stderr=f"directory does not exist: {where}")
    full_env = git.environment(env, config=config, scrub=scrub)
    sh = _sh()
    cmd = None
    try:
        cmd = sh.Command("git")(
            *argv[1:], _cwd=where, _env=full_env, _in=input, _tty_in=False, _tty_out=False,
            _new_session=True, _timeout=timeout, _bg=True, _bg_exc=False, _ok_code=list(range(256)),
            _return_cmd=True, _truncate_exc=False, _log_msg=lambda *_a, **_k: "git")
        cmd.wait()
        result = git.Result(cmd.exit_code, bytes(cmd.stdout or b""), bytes(cmd.stderr or b""), argv)
    except sh.TimeoutException:
        _end_group(cmd)
        raise git.GitError(argv, -1, timed_out=True, timeout=timeout) from None
    except sh.CommandNotFound:
        raise EnvironmentProblem("git is not installed or not on PATH; install git and retry") from None
    except sh.ErrorReturnCode as exc:  # killed by a signal: what git said, never sh's full_cmd
        _end_group(cmd)
        raise git.GitError(argv, getattr(exc, "exit_code", -1), exc.stdout, exc.stderr) from None
    except OSError as exc:
        _end_group(cmd)
        raise git.GitError(argv, -1, stderr=str(exc)) from None
    except BaseException:  # an interrupt: git is in its own session, so end that too
        _end_group(cmd)
        raise
    if check and result.code not in tuple(ok):
        raise git.GitError(argv, result.code, result.raw, result.err_raw)
    return result


def _end_group(cmd: object) -> None:
    """Kill what is left of the call's session. After sh's timeout git itself is gone,
    but a transport helper it started may still wait on the server; the group keeps
    git's pid as its id, and a pid is not reused while its group has members."""
    pid = getattr(cmd, "pid", None)
    if not pid:
        return
    try:
        os.killpg(pid, SIGKILL)
    except OSError:
        pass
