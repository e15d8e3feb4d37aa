"""When a dream is due, and launching one in the background.

`dream.trigger` is a list of `off`, `steps`, `compaction` and `commits` (Letta's
`step-count` and `compaction-event` are read as `steps` and `compaction`);
`dream.every` (default 25) is the count for `steps` and for `commits`. They are
resolved global -> project -> agent, as Letta resolves its reflection settings
(`resolve`): git's system and global config, then the local git config of the
project the harness runs in, then the memory's own git config (one memory per
agent). A dream.trigger that does not parse keeps the one below it (Letta's rule);
a dream.every that is not a count is refused where it is used (`every_of`).

`maybe_launch(repo_root)` is what the post-commit hook calls. It is cheap when
nothing is due — one `git config` call when `dream.trigger` has no `commits` —
and imports only light modules (the git runner, no subprocess), so it stays cheap in
the post-commit hook.

Due (commits) means: at least `dream.every` commits carrying a `Memory-Op:`
trailer landed on HEAD since the parent HEAD the last consuming dream (merged or
no_changes) left behind. Commits made inside a dream (`$DREAM_ID` is set) never
launch another one. Steps are counted by the harness hooks (`bump_steps`, a
counter file in the memory's git dir under its own lock).
"""
from __future__ import annotations

import json
import os
import re
import sys
import time

from gitmemfs.core import detach, git
from gitmemfs.core.errors import UsageError

TYPE_CHECKING = False  # `typing` costs ~3 ms of every harness hook
if TYPE_CHECKING:
    from typing import Any, Callable, Mapping, Sequence

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


KEYS = ("dream.trigger", "dream.every")
TRIGGERS = ("steps", "compaction", "commits")
_LETTA_NAMES = {"step-count": "steps", "compaction-event": "compaction", "auto-compaction": "compaction"}
STEPS_FILE = os.path.join("dream", "steps")  # in the git common dir: "N\n", steps since the last launch


def settings(root: str, project: str | None = None) -> dict[str, str]:
    """{key: value} of dream.trigger and dream.every as `resolve` finds them: read from
    git's files when core/gitfiles is sure of them (`from_files`), else asked of git."""
    found = from_files(root, project)
    return found if found is not None else {k: v for k, (v, _) in resolve(root, project).items()}


def from_files(root: str, project: str | None = None) -> dict[str, str] | None:
    """`settings` without a git process (a hook runs on every turn: each `git config`
    or `rev-parse` is ~2-4 ms of it), or None when core/gitfiles/gitconfig.py and
    discovery.py are not sure. The layers are `resolve`'s: system and global files
    (every file gitconfig.read reads before the memory's own), the project's
    `.git/config`, the memory's `.git/config`; the environment scrubbed as `_git`
    runs git. A project folder with no repository anywhere above it has no layer;
    one whose repository only git can find (a linked work tree, a bare one), git
    finds. tests/test_harness_steps.py holds this to `resolve`."""
    from gitmemfs.core.gitfiles import discovery, gitconfig

    env = git.environment(scrub=True)
    here = discovery.find(root, git.REPO_ENV, env)
    if here is None or here[0] != os.path.realpath(root):
        return None
    merged = gitconfig.read(here[1], env)
    own = _one_file(os.path.join(here[1], "config"))
    if merged is None or own is None or not discovery.settled(merged):
        return None
    layers: list[dict[str, list[str | None]]] = [{}, {}, own]
    for key in KEYS:
        values, mine = merged.get(key, []), own.get(key, [])
        if values[len(values) - len(mine):] != mine:
            return None  # not the memory's file last: not the plain case
        layers[0][key] = values[:len(values) - len(mine)]
    if project:
        there = discovery.find(project, git.REPO_ENV, env)
        if there is not None:
            config = None if there[0] == here[0] else os.path.join(there[1], "config")
        elif _outside_any_repository(project):
            config = None
        else:
            config = _project_config(root, project)
        if config:
            theirs = _one_file(config)
            if theirs is None:
                return None
            layers[1] = theirs
    out: dict[str, str] = {}
    for layer in layers:
        for key in KEYS:
            for value in layer.get(key, ()):
                value = (value or "").strip()
                if _VALID[key](value) is not None:  # as in `resolve`
                    out[key] = value
    return out


def _outside_any_repository(folder: str) -> bool:
    """True when git cannot find a repository from `folder`: neither it nor any folder
    above it holds a `.git` or looks like a git directory (a HEAD file), so there is
    nothing for git's walk up to find, whatever stops it. Anything there: False, and
    git decides. (The caller has checked that no GIT_DIR-like variable is set.)"""
    try:
        here = os.path.realpath(folder)
        while True:
            if os.path.lexists(os.path.join(here, ".git")) or os.path.lexists(os.path.join(here, "HEAD")):
                return False
            parent = os.path.dirname(here)
            if parent == here:
                return True
            here = parent
    except OSError:
        return False


def _one_file(path: str) -> dict[str, list[str | None]] | None:
    """One config file's settings as core/gitfiles/gitconfig.py reads them ({} when it
    does not exist), None when it is not sure."""
    from gitmemfs.core.gitfiles import gitconfig

    found: dict[str, list[str | None]] = {}
    try:
        with open(path, "rb") as fh:
            gitconfig.parse(fh.read(), found)
    except FileNotFoundError:
        return {}
    except (OSError, gitconfig.Unsure):
        return None
    return found


def parse_every(value: str | None) -> int | None:
    """dream.every as a positive count, or None when it is not one (the one parser)."""
    raw = (value or "").strip()
    n = int(raw) if re.fullmatch(r"[0-9]{1,9}", raw) else 0
    return n if n > 0 else None


def parse_trigger(value: str | None) -> tuple[str, ...] | None:
    """dream.trigger as the triggers it turns on (() for off), or None when it does not parse."""
    words = [w.lower() for w in re.split(r"[\s,]+", (value or "").strip()) if w]
    if not words:
        return None
    words = [_LETTA_NAMES.get(w, w) for w in words]
    if words == ["off"]:
        return ()
    if any(w not in TRIGGERS for w in words):
        return None
    return tuple(t for t in TRIGGERS if t in words)


# Letta keeps the value below one that does not parse; a dream.every that is not a count
# is kept instead, so every_of refuses it (a pace nobody chose is worse than a stop).
def _kept(value: str | None) -> str | None:
    return value


_VALID: dict[str, Callable[[str | None], object]] = {"dream.trigger": parse_trigger, "dream.every": _kept}


def resolve(root: str, project: str | None = None) -> dict[str, tuple[str, str]]:
    """{key: (value, where it came from)} for dream.trigger and dream.every: the memory's
    git config by scope, with the project's local git config (when `project` is a git
    repository other than the memory) between the global and the memory's own."""
    pattern = r"^dream\.(trigger|every)$"
    layers: dict[str, list[tuple[str, str]]] = {"global": [], "project": [], "agent": []}
    items = _git(root, "config", "-z", "--show-scope", "--get-regexp", pattern).out.split("\0")
    for scope, item in zip(items[0::2], items[1::2]):
        key, _, value = item.partition("\n")
        where = "global" if scope in ("system", "global") else "agent"
        layers[where].append((key.lower(), f"{value.strip()}\0git config {key.lower()} ({scope})"))
    config = _project_config(root, project) if project else None
    if config:
        res = _git(root, "config", "-z", "--file", config, "--get-regexp", pattern)
        for item in res.out.split("\0") if res.code == 0 else ():
            key, _, value = item.partition("\n")
            if key:
                layers["project"].append(
                    (key.lower(), f"{value.strip()}\0project {project} (git config --local {key.lower()})"))
    out: dict[str, tuple[str, str]] = {}
    for where in ("global", "project", "agent"):
        for key, packed in layers[where]:
            value, source = packed.split("\0", 1)
            if _VALID[key](value) is not None:  # Letta: an invalid value keeps the one below it
                out[key] = (value, source)
    return out


def _project_config(root: str, project: str) -> str | None:
    """The local config file of the git repository at `project`, unless that is the memory's."""
    res = _git(project, "rev-parse", "--path-format=absolute", "--git-common-dir", "--show-toplevel")
    lines = res.out.splitlines()
    if res.code != 0 or len(lines) < 2 or os.path.realpath(lines[1]) == os.path.realpath(root):
        return None
    return os.path.join(lines[0], "config")


def triggers_of(cfg: Mapping[str, str]) -> tuple[str, ...]:
    return parse_trigger(cfg.get("dream.trigger")) or ()


def every_of(cfg: Mapping[str, str]) -> int:
    """dream.every, or the default when unset; a value that is not a count is refused
    (reading -3 or "ten" as 25 would dream at a pace nobody chose)."""
    raw = (cfg.get("dream.every") or "").strip()
    if not raw:
        return DEFAULT_EVERY
    value = parse_every(raw)
    if value is None:
        raise UsageError(f"dream.every must be a whole number of memory commits, at least 1, got {raw!r}; "
                         f"set it with git config dream.every {DEFAULT_EVERY}")
    return value


def bump_steps(common_dir: str, root: str, every: int) -> tuple[bool, int]:
    """Count one step; (due, steps counted). Due takes the count (it is reset): the
    caller launches, or hands the steps back with `give_back_steps`. Under the
    counter's own lock (never the writer's: a hook must not wait for an edit)."""
    with _StepsLock(common_dir, root) as path:
        n = read_steps(common_dir) + 1
        due_now = n >= every
        _write_steps(path, 0 if due_now else n)
    return due_now, n


def give_back_steps(common_dir: str, root: str, n: int) -> None:
    """Return `n` steps a due `bump_steps` took and no dream consumed: added to what
    other hooks counted meanwhile (writing `n` back would lose their steps)."""
    with _StepsLock(common_dir, root) as path:
        _write_steps(path, read_steps(common_dir) + n)


def set_steps(common_dir: str, root: str, n: int) -> None:
    with _StepsLock(common_dir, root) as path:
        _write_steps(path, n)


class _StepsLock:
    """The counter's lock, held for one read-modify-write; gives the counter's path."""

    def __init__(self, common_dir: str, root: str):
        from gitmemfs.core.repo import FileLock

        self.path = os.path.join(common_dir, STEPS_FILE)
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        self.lock = FileLock(self.path + ".lock", root, timeout=2)

    def __enter__(self) -> str:
        self.lock.__enter__()
        return self.path

    def __exit__(self, *exc: object) -> None:
        self.lock.__exit__(*exc)


def read_steps(common_dir: str) -> int:
    try:
        with open(os.path.join(common_dir, STEPS_FILE), encoding="ascii") as fh:
            return max(0, int(fh.read(32).strip() or 0))
    except (OSError, ValueError):
        return 0


def _write_steps(path: str, n: int) -> None:
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="ascii") as fh:
        fh.write(f"{n}\n")
    os.replace(tmp, path)


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
    on = triggers_of(cfg)
    if "commits" not in on:
        return False, 0, DEFAULT_EVERY, ",".join(on) or "off"
    trigger = "commits"
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
            k.lower(): v for k, v in config.items() if k.lower() in KEYS}
        if "commits" not in triggers_of(cfg):
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
