"""Start a process fully detached from the caller (a hook, or a CLI that exits now).

fork, setsid, fork again: the grandchild is re-parented to init at once, so the
caller neither waits for it nor leaves a zombie; it gets its own session, stdin
from /dev/null, stdout/stderr appended to a log (or /dev/null) and no other
inherited descriptor — in particular not the edit commands' writer lock.
Used by the post-commit mirror push and by `git dream --background` / `--auto`.
"""
from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping, Sequence

# The one-liner the hook scripts (and detached children) hand to `python -I [-S] -c`;
# argv: PATHS HOOK SCRIPT ARGS... PATHS is "LIB[:SITE...]": LIB (the folder holding
# gitmemfs) goes first on sys.path, SITE folders (where PyYAML lives, for `-S`, which
# skips site.py) go last. An empty LIB means "gitmemfs is installed": never put ''
# (the cwd) on sys.path. It names `gitmemfs.hookmain`, which must never move: hooks
# installed by every earlier version run it (those call its `main`, which stays too).
BOOT = ("import sys; lib, *site = sys.argv[1].split(':'); sys.path[:0] = [lib] if lib else []; "
        "sys.path += site; from gitmemfs.hookmain import run; run(sys.argv[2:])")
LIB = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def spawn_entry(args: Sequence[str], *, cwd: str, env: Mapping[str, str]) -> int:
    """Start `python -I -c BOOT LIB ARGS...` (our hook entry point) detached."""
    return spawn([sys.executable, "-I", "-c", BOOT, LIB, *args], cwd=cwd, env=env)


def spawn(argv: Sequence[str], *, cwd: str, env: Mapping[str, str], log_path: str | None = None) -> int:
    """Start `argv` (argv[0] an absolute path) detached; return its pid at once."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the forked child
        try:
            os.close(r)
            os.setsid()
            grandchild = os.fork()
            if grandchild == 0:
                null = os.open(os.devnull, os.O_RDONLY)
                out = (os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644) if log_path
                       else os.open(os.devnull, os.O_WRONLY))
                os.dup2(null, 0)
                os.dup2(out, 1)
                os.dup2(out, 2)
                os.closerange(3, 65536)
                os.chdir(cwd)
                os.execve(argv[0], list(argv), dict(env))
            os.write(w, str(grandchild).encode())
        finally:
            os._exit(0)
    os.close(w)
    try:
        data = os.read(r, 32)
    finally:
        os.close(r)
    os.waitpid(pid, 0)
    return int(data or b"0")
