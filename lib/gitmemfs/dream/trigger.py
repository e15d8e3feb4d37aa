"""When a dream is due, and launching one in the background.

`maybe_launch(repo_root)` is what the post-commit hook calls. It is cheap when
nothing is due — one `git config` call when `dream.trigger` is not `commits` —
and imports only light modules (the git runner, no subprocess), so it stays cheap in
the post-commit hook.

Due means: `dream.trigger=commits` and at least `dream.every` (default 25)
commits carrying a `Memory-Op:` trailer landed on HEAD since the parent HEAD the
last consuming dream (merged or no_changes) left behind. Commits made inside a
dream (`$DREAM_ID` is set) never launch another one.
"""
from __future__ import annotations

import json
import os
import re
import sys
import time
from typing import Any, Mapping, Sequence

from gitmemfs.core import detach, git
from gitmemfs.core.errors import UsageError

DEFAULT_EVERY = 25
BACKOFF_BASE = 300.0
BACKOFF_MAX = 86400.0
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Besides git's repository variables, what a commit in progress exports that a
# dream started from its hook must not inherit.
_COMMIT_ENV = ("GIT_REFLOG_ACTION", "GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE")


def _git(root: str, *args: str) -> git.Result:
    return git.run(list(args), cwd=root, scrub=True, check=False, timeout=30)


def _clean_env() -> dict[str, str]:
    env = git.environment(scrub=True)
    for key in _COMMIT_ENV:
        env.pop(key, None)
    return env


def settings(root: str) -> dict[str, str]:
    res = _git(root, "config", "-z", "--get-regexp", r"^dream\.(trigger|every)$")
    out: dict[str, str] = {}
    for item in res.out.split("\0"):
        key, _, value = item.partition("\n")
        if key:
            out[key.lower()] = value.strip()
    return out


def every_of(cfg: Mapping[str, str]) -> int:
    """dream.every, or the default when unset; a value that is not a count is refused
    (reading -3 or "ten" as 25 would dream at a pace nobody chose)."""
    raw = (cfg.get("dream.every") or "").strip()
    if not raw:
        return DEFAULT_EVERY
    value = int(raw) if re.fullmatch(r"[0-9]{1,9}", raw) else 0
    if value < 1:
        raise UsageError(f"dream.every must be a whole number of memory commits, at least 1, got {raw!r}; "
                         f"set it with git config dream.every {DEFAULT_EVERY}")
    return value


def _state(common_dir: str) -> dict[str, Any]:
    try:
        with open(os.path.join(common_dir, "dream", "state.json"), encoding="utf-8") as fh:
            data = json.load(fh)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def last_head(common_dir: str) -> str | None:
    last = _state(common_dir).get("last_dream")
    head = last.get("head") if isinstance(last, dict) else None
    return head if isinstance(head, str) and head else None


def backoff_left(common_dir: str, now: float | None = None) -> tuple[int, float]:
    """(failed dreams in a row, seconds until the next automatic try is allowed).

    After a dream that did not consume (failed, conflict, …), automatic dreams wait
    5 minutes, then 10, 20, … up to a day, so a persistent problem does not relaunch
    an agent on every commit (reference §8, 2). Manual dreams are never held back."""
    info = _state(common_dir).get("backoff")
    if not isinstance(info, dict):
        return 0, 0.0
    try:
        failures, last = int(info.get("failures", 0)), float(info.get("last", 0))
    except (TypeError, ValueError):
        return 0, 0.0
    if failures <= 0:
        return 0, 0.0
    wait = min(BACKOFF_BASE * 2 ** (failures - 1), BACKOFF_MAX)
    return failures, max(0.0, last + wait - (time.time() if now is None else now))


def commits_since(root: str, since: str | None) -> int:
    args = ["rev-list", "--count", "--grep=^Memory-Op: ", "HEAD"]
    if since and _git(root, "cat-file", "-e", f"{since}^{{commit}}").code == 0:
        args.append(f"^{since}")
    res = _git(root, *args)
    try:
        return int(res.out.strip()) if res.code == 0 else 0
    except ValueError:
        return 0


def due(root: str, common_dir: str, cfg: Mapping[str, str] | None = None) -> tuple[bool, int, int, str]:
    """(due, memory commits since the last consuming dream, threshold, why not).

    `why not` is the trigger mode when it is not `commits`, `backoff` while failed
    dreams hold automatic ones back, else `commits`."""
    cfg = settings(root) if cfg is None else cfg
    trigger = (cfg.get("dream.trigger") or "off").lower()
    if trigger != "commits":
        return False, 0, DEFAULT_EVERY, trigger
    every = every_of(cfg)
    n = commits_since(root, last_head(common_dir))
    if n >= every and backoff_left(common_dir)[1] > 0:
        return False, n, every, "backoff"
    return n >= every, n, every, trigger


def running(common_dir: str) -> bool:
    """Whether a dream seems to hold the lock right now, judged without touching the
    lock (taking it even for a moment could make a dream starting at that instant
    report "already running"): the holder writes its pid into the lock file and
    empties it on release. A wrong guess is harmless: a launched dream that finds
    the lock taken just reports busy; a skipped launch happens at the next commit."""
    try:
        with open(os.path.join(common_dir, "dream", "lock"), encoding="utf-8") as fh:
            text = fh.read(200)
    except OSError:
        return False
    m = re.match(r"pid (\d+) ", text)
    if not m:
        return False
    try:
        os.kill(int(m.group(1)), 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists, as another user
        return True
    return True


def maybe_launch(repo_root: str, config: Mapping[str, str] | None = None) -> bool:
    """Launch `git dream --auto` detached if one is due; never raises. True if launched.

    `config` may pass git config the caller already read ({lowercase key: value}); then
    nothing runs at all unless dream.trigger is `commits`."""
    try:
        if os.environ.get("DREAM_ID"):
            return False
        cfg = settings(repo_root) if config is None else {
            k.lower(): v for k, v in config.items() if k.lower() in ("dream.trigger", "dream.every")}
        if (cfg.get("dream.trigger") or "off").lower() != "commits":
            return False
        res = _git(repo_root, "rev-parse", "--path-format=absolute", "--git-common-dir")
        common = res.out.strip()
        if res.code != 0 or not common or running(common):
            return False
        if not due(repo_root, common, cfg)[0]:
            return False
        launch_detached(repo_root, common, ["--auto"])
        return True
    except UsageError as exc:  # a bad dream.every: the person sees it at their commit
        sys.stderr.write(f"warning: no dream started: {exc}\n")
        return False
    except Exception:  # noqa: BLE001 - a hook must never fail a commit over this
        return False


def launch_detached(root: str, common_dir: str, args: Sequence[str]) -> int:
    """Start `git dream --memory-dir ROOT ARGS…` in its own session with stdin from
    /dev/null, output appended to dream/logs/background.log and no other descriptor
    inherited; return its pid without waiting for it."""
    logs = os.path.join(common_dir, "dream", "logs")
    os.makedirs(logs, exist_ok=True)
    log_path = os.path.join(logs, "background.log")
    env = _clean_env()
    path = env.get("PYTHONPATH", "")
    env["PYTHONPATH"] = PACKAGE_PARENT + (os.pathsep + path if path else "")
    argv = [sys.executable, "-m", "gitmemfs.cli.dream", "--memory-dir", root, *args]
    return detach.spawn(argv, cwd=root, env=env, log_path=log_path)
