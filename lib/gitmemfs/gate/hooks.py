"""Installing the git hooks, and telling whether they will run.

Installed hooks run the interpreter running this code (`sys.executable`) on
`gitmemfs.hookmain`, with our lib/ put on the path, so they work from a checkout
as well as from an installed package. Each is a thin shell script that execs it
(and says what to do when that interpreter or library is gone), with a marker
line so we know our own. They go where git looks (`git rev-parse
--git-path hooks`: honours core.hooksPath, shared by linked worktrees).

A hook that is not ours is never overwritten silently. Without --force we refuse
and explain; with --force it is renamed to `<hook>.local`, which our hook runs
after its own work (with the same arguments and stdin), so nothing stops running.
"""
from __future__ import annotations

import os
import re
import shlex
import sys
import time
from typing import Any

from gitmemfs.core import git
from gitmemfs.core import layout as layouts
from gitmemfs.core.detach import BOOT, LIB
from gitmemfs.core.errors import EnvironmentProblem, MemfsError
from gitmemfs.core.repo import Repo, describe_git_dir

MARKER = "git-memfs-hook:"
CLIENT_HOOKS = ("pre-commit", "pre-merge-commit", "post-commit")
SERVER_HOOKS = ("pre-receive",)
# Hooks that must stop a bad change; post-commit only mirrors.
GATES = {"pre-commit", "pre-merge-commit", "pre-receive", "update"}
LOCAL_SUFFIX = ".local"
# The settings post-commit acts on (git config names, canonical case: section and key
# lower-case, subsection as written). With none of them set, the installed script
# exits without starting Python (it runs <hook>.local itself), which keeps ~15 ms
# off every commit.
POST_COMMIT_KEYS = ("memory.mirrorurl", "letta.memoryRepository.url", "dream.trigger")


class Place:
    """Where hooks live for a repository: its git dirs, and whether it is bare."""

    def __init__(self, cwd: str, git_dir: str, common_dir: str, bare: bool):
        self.cwd = cwd
        self.git_dir = git_dir
        self.common_dir = common_dir
        self.bare = bare

    @property
    def names(self) -> tuple[str, ...]:
        return SERVER_HOOKS if self.bare else CLIENT_HOOKS


def place(path: str) -> Place:
    """The repository at `path` (a work tree, or a bare repository for the server hooks)."""
    if not os.path.isdir(path):
        raise EnvironmentProblem(f"memory: directory does not exist: {path}")
    try:
        found = describe_git_dir(path)
    except EnvironmentProblem:  # a bare repository: no work tree, but hooks all the same
        res = git.run(["rev-parse", "--absolute-git-dir", "--git-common-dir"], cwd=path)
        git_dir, common = res.out.splitlines()
        return Place(path, git_dir, os.path.normpath(os.path.join(path, common)), True)
    if found is None:
        raise EnvironmentProblem(f"memory: {path} is not a git repository; run git memory init there")
    top, git_dir, common = found
    return Place(top, git_dir, common, False)


def _place_of(repo: Repo | Place | str) -> Place:
    if isinstance(repo, Place):
        return repo
    if isinstance(repo, Repo):
        return Place(repo.root, repo.git_dir, repo.common_dir, False)
    return place(repo)


def hooks_dir(where: Place) -> str:
    res = git.run(["rev-parse", "--git-path", "hooks"], cwd=where.cwd)
    return os.path.normpath(os.path.join(where.cwd, res.out.strip()))


def _hooks_path_setting(where: Place) -> tuple[str | None, str | None]:
    """(core.hooksPath, the config scope it comes from), or (None, None)."""
    res = git.run(["config", "--show-scope", "--get", "core.hooksPath"], cwd=where.cwd, check=False)
    if res.code != 0 or not res.out.strip():
        return None, None
    scope, _, value = res.out.rstrip("\n").partition("\t")
    return value, scope


# -- the scripts ------------------------------------------------------------------------

def _search_path() -> tuple[str, str]:
    """(python flags, PATHS) for the hook: `-I -S` with our lib/ and PyYAML's folder
    named explicitly, when that is possible (skipping site.py saves ~2 ms per commit),
    else `-I` and site.py as usual. -S stays correct in a venv: the interpreter finds
    its stdlib on its own, and we name the only other folders the hook imports from."""
    import importlib.util

    spec = importlib.util.find_spec("yaml")
    origin = spec.submodule_search_locations[0] if spec and spec.submodule_search_locations else None
    if origin is None or ":" in LIB or ":" in origin:
        return "-I", LIB
    site = os.path.dirname(origin)
    return "-I -S", LIB if site == LIB else f"{LIB}:{site}"


def script(name: str) -> str:
    """The hook `name`: a few lines of sh that run this interpreter on gitmemfs.hookmain.
    The shell costs about a millisecond a commit; a Python script git starts directly
    saved that, but when its interpreter is gone (a deleted venv) git can only say
    "cannot run .git/hooks/pre-commit", and every commit fails with no way forward."""
    python = sys.executable
    if not python:
        raise EnvironmentProblem("hooks: cannot tell which Python runs git-memfs (sys.executable is empty)")
    flags, paths = _search_path()
    missing = 1 if name in GATES else 0  # a gate fails closed; post-commit never fails a commit
    outcome = "refused the commit" if name in GATES else "did nothing"
    return f"""#!/bin/sh
# {MARKER} installed ({name}). Written by `git memory hooks install`: reinstall rather
# than edit. Your own {name} logic goes in {name}{LOCAL_SUFFIX}, which runs after ours.
{_SHORTCUTS.get(name, "")}py={shlex.quote(python)}
lib={shlex.quote(paths)}
if [ ! -x "$py" ] || [ ! -d "${{lib%%:*}}/gitmemfs" ]; then
    echo "error: git-memfs {name} hook {outcome}: the git-memfs that installed it is gone ($py," \\
        "${{lib%%:*}}); install git-memfs again, then run git memory hooks install in this repository" \\
        "(or git memory hooks install from wherever git-memfs is installed now)" >&2
    exit {missing}
fi
exec "$py" {flags} -c {shlex.quote(BOOT)} "$lib" {name} "$0" "$@"
"""


def _post_commit_shortcut() -> str:
    keys = "|".join(re.escape(k) for k in POST_COMMIT_KEYS)
    return f"""# Nothing to do unless one of its settings is set: then skip starting Python.
if ! git config --get-regexp {shlex.quote(f"^({keys})$")} >/dev/null 2>&1; then
    if [ -x "$0{LOCAL_SUFFIX}" ]; then exec "$0{LOCAL_SUFFIX}" "$@"; fi
    exit 0
fi
"""


_SHORTCUTS = {"post-commit": _post_commit_shortcut()}


def _read(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            return fh.read(4096).decode("utf-8", "replace")
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    except OSError:
        return ""


def _kind(text: str | None) -> str | None:
    """'installed' or 'portable' for our scripts, 'foreign' for others, None if absent."""
    if text is None:
        return None
    for line in text.splitlines()[:5]:
        if MARKER in line:
            return "portable" if "portable" in line else "installed"
    return "foreign"


def _assignment(text: str, name: str) -> str | None:
    for line in text.splitlines():
        if line.startswith(name + "="):
            try:
                parts = shlex.split(line[len(name) + 1:])
            except ValueError:
                return None
            return parts[0] if parts else ""
    return None


# -- status -------------------------------------------------------------------------------

def _hook_state(folder: str, name: str) -> dict[str, Any]:
    path = os.path.join(folder, name)
    text = _read(path)
    kind = _kind(text)
    local = path + LOCAL_SUFFIX
    info: dict[str, Any] = {"path": path, "state": "missing", "detail": "",
                            "chained": local if os.path.exists(local) else None}
    if kind is None:
        info["detail"] = "not installed"
        return info
    if kind == "foreign":
        info["state"] = "foreign"
        info["detail"] = "another program's hook; ours is not installed"
        return info
    if not os.access(path, os.X_OK):
        info["state"] = "not_executable"
        info["detail"] = f"not executable, so git ignores it (chmod +x {path})"
        return info
    if kind == "installed":
        python, lib = _assignment(text or "", "py"), _assignment(text or "", "lib")
        if not python or not os.access(python, os.X_OK):
            info["state"] = "broken"
            info["detail"] = f"its interpreter {python} is gone; run git memory hooks install"
            return info
        lib = lib.split(":")[0] if lib else lib
        if lib and not os.path.isdir(os.path.join(lib, "gitmemfs")):
            info["state"] = "broken"
            info["detail"] = f"its library folder {lib} is gone; run git memory hooks install"
            return info
    info["state"] = "installed"
    info["detail"] = "installed" + (" (portable script)" if kind == "portable" else "")
    if info["chained"]:
        info["detail"] += f", then runs {os.path.basename(local)}"
        if not os.access(local, os.X_OK):
            info["detail"] += " (not executable: skipped)"
    return info


def status(repo: Repo | Place | str) -> dict[str, Any]:
    """Whether our hooks are installed where git looks and will actually run."""
    where = _place_of(repo)
    folder = hooks_dir(where)
    setting, scope = _hooks_path_setting(where)
    hooks = {name: _hook_state(folder, name) for name in where.names}
    present = ("installed", "not_executable", "broken")
    installed = all(h["state"] in present for h in hooks.values())
    effective = all(h["state"] == "installed" for h in hooks.values())
    problems = [f"{name}: {h['detail']}" for name, h in hooks.items() if h["state"] != "installed"]
    if where.bare and not effective:
        # A server may use the update hook instead (githooks/update): either gate will do.
        update = _hook_state(folder, "update")
        if update["state"] == "installed":
            hooks["update"] = update
            installed = effective = True
            problems = []
    stray = []
    default = os.path.join(where.common_dir, "hooks")
    if os.path.normpath(default) != folder:
        for name in where.names:
            if _kind(_read(os.path.join(default, name))) in ("installed", "portable"):
                stray.append(os.path.join(default, name))
        if stray:
            problems.append(f"git-memfs hooks in {default} do not run: core.hooksPath points git at {folder}")
    return {"installed": installed, "effective": effective, "hooks_dir": folder, "hooks_path": setting,
            "hooks_path_scope": scope, "bare": where.bare, "hooks": hooks, "stray": stray,
            "problems": problems}


def describe(info: dict[str, Any]) -> str:
    """`git memory hooks status` as text."""
    where = info["hooks_dir"]
    if info["hooks_path"]:
        where += f" (core.hooksPath, {info['hooks_path_scope']} config)"
    lines = [f"Hooks folder: {where}"]
    width = max(len(n) for n in info["hooks"])
    for name, hook in info["hooks"].items():
        lines.append(f"  {name:<{width}}  {hook['detail']}")
    if info["effective"]:
        lines.append("The memory checks run on every commit here." if not info["bare"]
                     else "The memory checks run on every push here.")
    else:
        lines += [f"warning: {p}" for p in info["problems"] if not any(p.startswith(n + ":") for n in info["hooks"])]
        lines.append("The hooks will not all run; fix with git memory hooks install (see above).")
    return "\n".join(lines)


# -- install -------------------------------------------------------------------------------

class Installed:
    """The outcome of an install: what was written, kept, and moved aside."""

    def __init__(self, folder: str):
        self.folder = folder
        self.written: list[str] = []
        self.unchanged: list[str] = []
        self.moved: list[tuple[str, str]] = []  # (hook, where the foreign hook went)

    def as_dict(self) -> dict[str, Any]:
        return {"hooks_dir": self.folder, "written": self.written, "unchanged": self.unchanged,
                "moved": [{"hook": h, "to": to} for h, to in self.moved]}

    def message(self) -> str:
        names = self.written + self.unchanged
        text = f"Hooks installed in {self.folder}: {', '.join(names)}."
        for hook, to in self.moved:
            if to.endswith(LOCAL_SUFFIX):
                text += f"\nYour previous {hook} hook is now {os.path.basename(to)}; it runs after ours."
            else:
                text += (f"\nYour previous {hook} hook was kept as {os.path.basename(to)} (a {hook}"
                         f"{LOCAL_SUFFIX} already exists); it does not run: merge it into {hook}{LOCAL_SUFFIX}.")
        return text


def install(repo: Repo | Place | str, *, force: bool = False, names: tuple[str, ...] | None = None) -> Installed:
    """Install our hooks where git looks; refuse (changing nothing) on a foreign hook
    unless `force`, and on a core.hooksPath shared beyond this repository."""
    where = _place_of(repo)
    names = names or where.names
    folder = hooks_dir(where)
    setting, scope = _hooks_path_setting(where)
    if setting and scope not in ("local", "worktree") and not force:
        raise MemfsError(
            f"hooks: core.hooksPath is set in your {scope} git config to {setting}, a folder every "
            f"repository of yours uses; installing there would run the memory checks in all of them. "
            f"Give this repository its own: git config core.hooksPath {os.path.join(where.common_dir, 'hooks')}"
            f" (then install again), or use --force to install into {folder} anyway",
            details={"reason": f"core.hooksPath is set in your {scope} git config"})
    plan = []
    foreign = []
    for name in names:
        path = os.path.join(folder, name)
        kind = _kind(_read(path)) if os.path.lexists(path) else None
        if kind is None and os.path.lexists(path):
            kind = "foreign"  # a dangling symlink, say: still not ours to delete
        if kind == "foreign":
            foreign.append(name)
        plan.append((name, path, kind))
    if foreign and not force:
        first = foreign[0]
        path = os.path.join(folder, first)
        raise MemfsError(
            f"hooks: {path} is not a git-memfs hook, and it is left as it is. To keep it running, rename "
            f"it to {first}{LOCAL_SUFFIX} (our hook runs it after the memory checks): mv '{path}' "
            f"'{path}{LOCAL_SUFFIX}', then install again; --force does that rename for you"
            + (f" (also: {', '.join(foreign[1:])})" if len(foreign) > 1 else ""),
            details={"foreign": [os.path.join(folder, n) for n in foreign],
                     "reason": f"{', '.join(foreign)} already exists and is not ours"})
    os.makedirs(folder, exist_ok=True)
    if where.bare:
        _durable_server(where)
        from gitmemfs.gate import branches

        branches.note_tips(where.common_dir)
    done = Installed(folder)
    for name, path, kind in plan:
        if kind == "portable":  # e.g. core.hooksPath pointing at a checkout's githooks/
            done.unchanged.append(name)
            continue
        if kind == "foreign":
            done.moved.append((name, _move_aside(path)))
        text = script(name)
        if kind == "installed" and _read(path) == text and os.access(path, os.X_OK):
            done.unchanged.append(name)
            continue
        _write_executable(path, text)
        done.written.append(name)
    return done


def _durable_server(where: Place) -> None:
    """A push the server acknowledged is on its disk: git's own core.fsync (objects
    before refs) in the bare repository, as `git memory init` sets it in a memory
    (core/durable.py; memory.durable false there leaves it alone)."""
    from gitmemfs.core import durable
    from gitmemfs.core.repo import read_config

    def run(*args: str) -> object:
        return git.run(list(args), cwd=where.common_dir)

    durable.configure(run, read_config(where.common_dir))


def _move_aside(path: str) -> str:
    target = path + LOCAL_SUFFIX
    if os.path.lexists(target):
        target = f"{path}.replaced-{time.strftime('%Y%m%d%H%M%S', time.gmtime())}"
    os.rename(path, target)
    return target


def _write_executable(path: str, text: str) -> None:
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.chmod(tmp, 0o755)
    os.replace(tmp, path)


def record_layout(where: Place, layout: str) -> None:
    """Set memory.layout where the hooks run; refuse to change one already set, since the
    files already accepted were judged by it."""
    key = layouts.CONFIG_KEY
    current = git.run(["config", "--local", "--get", key], cwd=where.common_dir, check=False).out.strip()
    if current == layout:
        return
    if current:
        raise MemfsError(f"hooks: this repository's memory.layout is {current}, not {layout}; a layout is not "
                         f"changed in passing (run git config memory.layout {layout} if you mean it)")
    git.run(["config", "--local", key, layout], cwd=where.common_dir)


def install_for_init(repo: Repo) -> str:
    """Called by `git memory init`: install if that is safe, else say why not."""
    try:
        install(repo)
    except MemfsError as exc:
        reason = exc.details.get("reason") or exc.message
        return f"; hooks not installed: {reason} (git memory hooks install explains)"
    return "; hooks installed"
