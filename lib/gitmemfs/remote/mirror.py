"""The post-commit mirror: push `main` to `memory.mirrorUrl` (or Letta's
`letta.memoryRepository.url`) after every commit, without ever making it wait.

The post-commit hook calls `after_commit`, which only reads the config and, when
a push is due, starts `background_push` as a detached process. That process
takes the mirror lock (pushes queue, never race), pushes without force, and
appends a redacted, timestamped entry to `<git-common-dir>/memory-repository-push.log`.
A URL with a password is refused (at set-url, and at push time for a key set by
hand): git keeps a remote's URL in .git/config and hands it to its HTTP helper
on a command line, where any local user can read it. Authentication is the
user's own git's (SSH keys, credential helpers).

`after_commit` runs in every commit, so this module imports nothing heavy at the top.
"""
from __future__ import annotations

import os
import re
import time

from gitmemfs.core import git
from gitmemfs.core.errors import MemfsError
from gitmemfs.core.redact import redact

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

    from gitmemfs.core.repo import Repo

URL_KEYS = ("memory.mirrorUrl", "letta.memoryRepository.url")  # first set one wins
TIMEOUT_KEY = "memory.mirrorTimeout"
DEFAULT_TIMEOUT = 60.0
BRANCH = "main"
LOG_NAME = "memory-repository-push.log"
LOCK_NAME = "memory-mirror.lock"
LOG_MAX = 256 * 1024   # past this, the log is cut back to its newest LOG_KEEP bytes
LOG_KEEP = 64 * 1024
REMOTE = "git-memfs-mirror"  # the throwaway remote name the URL is given under
# An entry's first line: time, commit, branch, and (since 0.4) the URL pushed to.
_HEADER = re.compile(r"^--- (\S+) (\S+) on (\S+)(?: to (.+))? ---$")
_EXIT = re.compile(r"^exit=(\d+)$")


# -- configuration ----------------------------------------------------------------------

def _config(git_dir: str) -> dict[str, str]:
    """The mirror settings (lower-cased keys) in one git call."""
    res = git.run(["--git-dir", git_dir, "config", "-z", "--get-regexp",
                         r"^(memory\.mirror(url|timeout)|letta\.memoryRepository\.url)$"],
                  cwd=git_dir, check=False, scrub=True)
    found: dict[str, str] = {}
    for item in res.zsplit():
        key, _, value = item.partition("\n")
        found[key.lower()] = value  # the last value wins, as with git config --get
    return found


def _url(cfg: dict[str, str]) -> tuple[str | None, str | None]:
    """(url, the key it came from); blank values count as unset."""
    for key in URL_KEYS:
        value = cfg.get(key.lower(), "").strip()
        if value:
            return value, key
    return None, None


def _timeout(cfg: dict[str, str]) -> float:
    try:
        value = float(cfg.get(TIMEOUT_KEY.lower(), "") or DEFAULT_TIMEOUT)
    except ValueError:
        return DEFAULT_TIMEOUT
    return value if value > 0 else DEFAULT_TIMEOUT


def log_path(common_dir: str) -> str:
    return os.path.join(common_dir, LOG_NAME)


def show_url(url: str | None) -> str | None:
    return None if url is None else redact(url)


# -- the hook side ----------------------------------------------------------------------

def after_commit(cwd: str) -> bool:
    """post-commit: start a detached push of main when a mirror is configured and
    the commit is on main. Returns whether a push was started."""
    res = git.run(["rev-parse", "--git-common-dir", "--symbolic-full-name", "HEAD"], cwd=cwd, check=False)
    lines = res.out.splitlines()
    if res.code != 0 or len(lines) != 2 or lines[1] != f"refs/heads/{BRANCH}":
        return False  # detached HEAD, or another branch (dream/…): never mirrored
    common = os.path.abspath(os.path.join(cwd, lines[0]))
    url, _ = _url(_config(common))
    if url is None:
        return False
    from gitmemfs.core import detach

    # Without the hook's GIT_* repository variables.
    detach.spawn_entry(["mirror-push", "-", common], cwd=common, env=git.environment(scrub=True))
    return True


def background_push(common_dir: str) -> int:
    """The detached child: push main, log the outcome, leave nothing running."""
    import signal

    url = None
    try:
        cfg = _config(common_dir)
        url, _ = _url(cfg)
        if url is not None:
            catch_up_push(common_dir, url, BRANCH, _timeout(cfg))
    except Exception as exc:  # noqa: BLE001 - nobody is watching: the log is the only witness
        try:
            where = f" to {show_url(url)}" if url else ""
            _append(common_dir, f"\n--- {_now()} (none) on {BRANCH}{where} ---\nerror: {exc}\nexit=1\n")
        except OSError:
            pass
    finally:
        # git push may leave helpers (git-remote-http, ssh) blocked on a dead server
        # after a timeout; they share this session's process group, so end them all
        # (only when this process leads its own group, as detach.spawn arranges).
        if os.getpgid(0) == os.getpid():
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            try:
                os.killpg(0, signal.SIGTERM)
            except OSError:
                pass
    return 0


PENDING_NAME = "memory-mirror.pending"
CATCH_UP_ROUNDS = 5


def catch_up_push(common_dir: str, url: str, branch: str, timeout: float) -> None:
    """The post-commit push. If another push holds the mirror lock, leave a note and
    go: that push runs again when it finishes, and pushes this commit too (it says so in
    the log, and so in `mirror status`). Commits made during a push are never left
    behind, and pushes never queue up behind a dead server."""
    from gitmemfs.core.repo import FileLock

    pending = os.path.join(common_dir, PENDING_NAME)
    with open(pending, "a", encoding="utf-8"):
        pass
    lock = FileLock(os.path.join(common_dir, LOCK_NAME), common_dir, 0)
    note = ""
    rounds = 0
    # A note left just before the holder let go is seen by the holder's last look after
    # releasing, so no commit waits for the next one.
    while rounds < CATCH_UP_ROUNDS and os.path.exists(pending):
        if not lock.acquire(wait=False):
            return  # the holder pushes again when it finishes
        try:
            while rounds < CATCH_UP_ROUNDS:
                try:
                    os.unlink(pending)
                except FileNotFoundError:
                    break  # nothing new since the last round
                _push_locked(common_dir, url, branch, timeout, note)
                note = "catching up: commits made while the previous push ran\n"
                rounds += 1
        finally:
            lock.release()


def push_logged(common_dir: str, url: str, branch: str, timeout: float,
                lock_timeout: float | None = None) -> tuple[int, str]:
    """Push `branch` to `url` (never forced) under the mirror lock, and log it.
    Returns (exit code, redacted git output)."""
    from gitmemfs.core.repo import FileLock

    lock = FileLock(os.path.join(common_dir, LOCK_NAME), common_dir,
                    lock_timeout if lock_timeout is not None else timeout * 3)
    with lock:  # BusyError when a stuck push holds it for too long
        return _push_locked(common_dir, url, branch, timeout)


def _push_locked(common_dir: str, url: str, branch: str, timeout: float, note: str = "") -> tuple[int, str]:
    refused = _refuse_password(url)
    if refused:
        _append(common_dir, f"\n--- {_now()} (none) on {branch} to {show_url(url)} ---\nerror: {refused}\nexit=1\n")
        return 1, refused
    sha = git.run(["--git-dir", common_dir, "rev-parse", "-q", "--verify", f"refs/heads/{branch}"],
                  cwd=common_dir, check=False, scrub=True).out.strip()
    _append(common_dir, f"\n--- {_now()} {sha[:7] or '(none)'} on {branch} to {show_url(url)} ---\n{note}")
    code, output = _push(common_dir, url, branch, timeout,
                         notify=lambda line: _append(common_dir, line + "\n"))
    _append(common_dir, (output + "\n" if output else "") + f"exit={code}\n")
    return code, output


def _push(common_dir: str, url: str, branch: str, timeout: float,
          notify: Callable[[str], None] | None = None) -> tuple[int, str]:
    """git push, with the retry loop clone and sync use (remote.network): a transient
    failure (502/520, a reset, a timeout) is tried again, up to network.TRIES times."""
    from gitmemfs.core import gitnet, ownconfig  # sh: only the push pays for it, never the commit's hook
    from gitmemfs.remote import network

    args = ["--git-dir", common_dir, "push", "--porcelain", REMOTE, f"refs/heads/{branch}:refs/heads/{branch}"]
    for attempt in range(1, network.TRIES + 1):
        try:  # no program the memory's config names runs in the push (core/ownconfig.py)
            argv, pins, env = ownconfig.network_git(common_dir, args, urls=[url])
        except MemfsError as exc:
            return 1, f"error: {exc}"
        config = [*pins, (f"remote.{REMOTE}.url", url), *network.stall_config(timeout)]
        try:
            res = gitnet.run(argv, cwd=common_dir, config=config, scrub=True, timeout=timeout, check=False, env=env)
        except git.GitError as exc:
            err = exc
            code, text = 124 if exc.timed_out else (exc.exit_code if exc.exit_code > 0 else 1), redact(str(exc))
        else:
            text = redact((res.err + res.out).strip())
            text = "\n".join(ln for ln in text.splitlines() if ln.strip())
            if res.code == 0:
                return 0, text
            code, err = res.code, git.GitError(res.argv, res.code, res.raw, res.err_raw)
        if network.classify(err).kind != "transient" or attempt == network.TRIES:
            return code, text
        delay = network.BASE_DELAY * 2 ** (attempt - 1)
        if notify is not None:
            last = text.splitlines()[-1] if text else f"exit {code}"
            notify(f"transient failure (try {attempt}/{network.TRIES}: {last}); retrying in {delay:g}s")
        time.sleep(delay)
    return code, text  # pragma: no cover - the loop always returns


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def _append(common_dir: str, text: str) -> None:
    path = log_path(common_dir)
    _bound(path)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(redact(text))


def _bound(path: str) -> None:
    """Keep the log small: past LOG_MAX, keep the newest LOG_KEEP bytes from an entry start."""
    try:
        if os.path.getsize(path) <= LOG_MAX:
            return
        with open(path, "rb") as fh:
            fh.seek(-LOG_KEEP, os.SEEK_END)
            tail = fh.read()
    except OSError:
        return
    start = tail.find(b"\n--- ")
    tail = tail[start:] if start >= 0 else b""
    tmp = path + ".tmp"
    with open(tmp, "wb") as fh:
        fh.write(tail)
    os.replace(tmp, path)


# -- reading the log ----------------------------------------------------------------------

def read_log(common_dir: str) -> str:
    try:
        with open(log_path(common_dir), encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def entries(text: str) -> list[dict[str, Any]]:
    """The log's entries, oldest first: time, commit, branch, exit (None while running), output."""
    found: list[dict[str, Any]] = []
    for line in text.splitlines():
        head = _HEADER.match(line)
        if head:
            found.append({"time": head.group(1), "commit": head.group(2), "branch": head.group(3),
                          "url": head.group(4), "exit": None, "ok": None, "output": ""})
            continue
        if not found or found[-1]["exit"] is not None:
            continue
        done = _EXIT.match(line)
        if done:
            found[-1]["exit"] = int(done.group(1))
            found[-1]["ok"] = found[-1]["exit"] == 0
        elif line.strip():
            found[-1]["output"] += ("\n" if found[-1]["output"] else "") + line
    return found


# -- the `git memory mirror` commands -------------------------------------------------------

def status(repo: Repo) -> dict[str, Any]:
    """What `git memory status` and `mirror status` show: url (redacted), where it is
    configured, and the last push to that URL (None before the first one: a push
    to a URL set before is no news about this one; an entry that names no URL is
    from before the log named them)."""
    cfg = _config(repo.common_dir)
    url, key = _url(cfg)
    log = entries(read_log(repo.common_dir))
    mine = [entry for entry in log if entry["url"] in (None, show_url(url))]
    last = mine[-1] if mine else None
    if last is not None:
        last = {**last, "running": last["exit"] is None and _push_running(repo.common_dir)}
    return {"url": show_url(url), "key": key, "branch": BRANCH, "timeout": _timeout(cfg),
            "last_push": last, "log": log_path(repo.common_dir)}


def _push_running(common_dir: str) -> bool:
    """Whether a push holds the mirror lock (an entry without exit= and a free lock
    belongs to a push that was killed)."""
    from gitmemfs.core.repo import FileLock

    lock = FileLock(os.path.join(common_dir, LOCK_NAME), common_dir, 0)
    if lock.acquire(wait=False):
        lock.release()
        return False
    return True


def _refuse_password(url: str) -> str | None:
    """Why a mirror URL cannot be used (it carries a password), or None."""
    from gitmemfs.remote.auth import has_password  # not on the post-commit path

    if not has_password(url):
        return None
    return (f"the mirror URL {show_url(url)} carries a password, which git would keep in .git/config and "
            "pass to its HTTP helper on a command line; remove it (git memory mirror set-url URL) and let "
            "a credential helper or an SSH key authenticate the push")


def set_url(repo: Repo, url: str) -> str:
    from gitmemfs.remote.auth import absolute_local

    url = url.strip()
    if not url or any(ch.isspace() for ch in url) or url.startswith("-"):
        raise MemfsError(f"mirror: {url!r} is not a git URL; give e.g. git@github.com:you/memory.git "
                         "or https://github.com/you/memory.git")
    url = absolute_local(url)  # pushes run in the git directory, not where it was typed
    refused = _refuse_password(url)
    if refused:
        raise MemfsError(f"mirror: {refused}")
    repo.git("config", "--local", URL_KEYS[0], url)
    note = ""
    other = (repo.cfg(URL_KEYS[1]) or "").strip()
    if other and other != url:
        note = f" ({URL_KEYS[0]} takes precedence over {URL_KEYS[1]}={show_url(other)})"
    return f"Mirror URL set to {show_url(url)}{note}."


def unset(repo: Repo) -> str:
    url, _ = _url(_config(repo.common_dir))
    if url is None:
        return "No mirror URL was configured."
    for key in URL_KEYS:
        repo.git("config", "--local", "--unset-all", key, check=False)
    return f"Mirror URL removed (was {show_url(url)})."


def push(repo: Repo) -> tuple[str, str]:
    """Push the current branch to the mirror now; (branch, output). Raises on failure."""
    cfg = _config(repo.common_dir)
    url, _ = _url(cfg)
    if url is None:
        raise MemfsError("mirror: no mirror URL configured; set one with git memory mirror set-url URL")
    if repo.git("rev-parse", "-q", "--verify", "HEAD^{commit}", check=False).code != 0:
        raise MemfsError("mirror: the memory repo has no commits yet, nothing to push; make a change and "
                         "commit first")
    ref = repo.git("symbolic-ref", "-q", "HEAD", check=False).out.strip()
    if not ref.startswith("refs/heads/"):
        raise MemfsError("mirror: HEAD is detached; check out a branch (git switch main) before pushing")
    branch = ref[len("refs/heads/"):]
    refused = _refuse_password(url)
    if refused:
        raise MemfsError(f"mirror: {refused}")
    code, output = push_logged(repo.common_dir, url, branch, _timeout(cfg))
    if code != 0:
        raise MemfsError(f"mirror: push of {branch} to {show_url(url)} failed: "
                         f"{output or f'git push exited with {code}'}", details={"output": output})
    return branch, output
