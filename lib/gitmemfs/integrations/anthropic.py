"""A git-backed memory tool for the Anthropic Python SDK.

    from gitmemfs.integrations.anthropic import GitMemoryTool
    memory = GitMemoryTool("./memory")            # was BetaLocalFilesystemMemoryTool("./memory")
    client.beta.messages.tool_runner(..., tools=[memory])

Same files on disk as the SDK's `BetaLocalFilesystemMemoryTool` (`<base_path>/memories/…`),
same return and error strings, same methods (`_validate_path`, `_ensure_memory_root`),
plus history: every change is a commit whose subject is the reason (derived from the call
unless you give one), checked by the memory rules. Each command runs in process through
the engine `git memory call --schema anthropic` uses (`gitmemfs.tools.anthropic_memory`).

`base_path` stays as the SDK leaves it: the memory files, and one symbolic link,
`memories/.git`, to the repository kept outside it (`git_dir=`, by default
`${XDG_DATA_HOME:-~/.local/share}/git-memfs/anthropic/<folder>-<hash of its real path>.git`,
chosen once and found again through the link). A link, not git's `.git` text file: tools
that walk the folder (a backup, a sync, `grep -r`, the SDK's own tests) skip a link to a
folder, so they meet only the memory files. A memory made with a `.git` folder inside
keeps it. Files changed beside the tool are committed first as an "outside change"
(`adopt=False` refuses them instead). The SDK is an optional extra:
`pip install '.[anthropic]'` in a checkout.
"""
from __future__ import annotations

import contextlib
import contextvars
import hashlib
import os
import threading
from pathlib import Path
from typing import Any, Callable, Iterator, Union

try:
    from anthropic.lib.tools import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool, ToolError
    from anyio import Path as AsyncPath
except ImportError as exc:  # the optional extra is not installed
    raise ImportError("gitmemfs.integrations.anthropic needs the Anthropic Python SDK; install it with "
                      "pip install '.[anthropic]' in your git-memfs checkout") from exc

from gitmemfs.core import git
from gitmemfs.core.errors import MemfsError
from gitmemfs.core.repo import Repo, describe_git_dir, read_config
from gitmemfs.tools.anthropic_memory import DIR_MODE, AnthropicMemory
from gitmemfs.tools.toolcall import answered

__all__ = ["GitMemoryTool", "AsyncGitMemoryTool", "default_git_dir"]

# A reason is text, or a function of the call's arguments (a dict) that returns text.
Reason = Union[str, Callable[[dict[str, Any]], str], None]
PathLike = Union[str, "os.PathLike[str]"]
_REASON: contextvars.ContextVar[str | None] = contextvars.ContextVar("gitmemfs_reason", default=None)
# The argument names that hold memory paths, per command (validated before the call runs).
FOLDER_ID = "memory.folderId"  # in a git dir kept outside: the folder it is the history of
_PATHS: dict[str, tuple[str, ...]] = {
    "view": ("path",), "create": ("path",), "str_replace": ("path",), "insert": ("path",),
    "delete": ("path",), "rename": ("old_path", "new_path")}


def _arguments(command: Any) -> dict[str, Any]:
    """The call's arguments: the SDK hands over a model built without validation."""
    if isinstance(command, dict):
        return dict(command)
    args = {k: v for k, v in vars(command).items() if not k.startswith("_")}
    args.update(getattr(command, "__pydantic_extra__", None) or {})
    return args


def default_git_dir(memory_root: PathLike) -> str:
    """Where a memory's repository lives when its folder has none: under
    `${XDG_DATA_HOME:-~/.local/share}/git-memfs/anthropic/`, named for the folder and
    keyed by its real path, so the same folder always finds the same history."""
    data = os.environ.get("XDG_DATA_HOME", "")
    if not os.path.isabs(data):  # the XDG spec: a relative value is ignored
        data = os.path.join(os.path.expanduser("~"), ".local", "share")
    real = os.path.realpath(memory_root)
    label = "".join(c if c.isalnum() or c in "._-" else "_" for c in os.path.basename(os.path.dirname(real)))
    key = hashlib.sha256(os.fsencode(real)).hexdigest()[:16]
    return os.path.join(data, "git-memfs", "anthropic", f"{label or 'memory'}-{key}.git")


class _Backend:
    """The state both classes share: where the repository is, opened once."""

    def __init__(self, base_path: PathLike, memory_dir: PathLike | None, git_dir: PathLike | None,
                 reason: Reason, adopt: bool, propose: bool = False):
        self.propose = propose
        self.memory_root = Path(memory_dir) if memory_dir is not None else Path(base_path) / "memories"
        self._path = os.path.abspath(self.memory_root)
        self._git_dir = None if git_dir is None else os.path.abspath(git_dir)
        self.reason = reason
        self.adopt = adopt
        self._lock = threading.Lock()
        self._repo: Repo | None = None

    def repo(self) -> Repo:
        """A fresh handle per call (threads each hold their own writer lock descriptor)."""
        with self._lock:
            if self._repo is None:
                self._repo = open_or_init(self._path, self._git_dir)
            r = self._repo
        return Repo(r.root, r.git_dir, r.common_dir, dict(r.config))

    def validate(self, path: str) -> str:
        """The SDK's `_validate_path`: the path resolved, or the reference's refusal."""
        try:
            return AnthropicMemory(self.repo()).locate(path)[0]
        except MemfsError as exc:
            raise ToolError(exc.message) from None

    def run(self, args: dict[str, Any], reason: str | None, resolved: dict[str, str]) -> str:
        if reason is None and self.reason is not None:
            reason = self.reason(args) if callable(self.reason) else self.reason
        repo = self.repo()
        repo.propose = self.propose or args.pop("propose", False) is True
        try:
            out = AnthropicMemory(repo, reason=reason, adopt=self.adopt).execute(args, resolved)
            return answered([repo], out, str(args.get("command"))).message
        except MemfsError as exc:
            raise ToolError(exc.message) from None

    def clear(self, reason: str | None) -> str:
        try:
            return AnthropicMemory(self.repo(), adopt=self.adopt).clear_all(reason).message
        except MemfsError as exc:
            raise ToolError(exc.message) from None


def open_or_init(path: str, git_dir: str | None = None) -> Repo:
    """The memory repository whose work tree is `path`, made if absent (plain layout,
    hooks, no seed files): its git directory at `git_dir` (default: `default_git_dir`),
    reached through the link `path/.git`. A `.git` already there (a folder, a link, git's
    text file) is used as it is."""
    _secure_mkdir(path)
    dot = os.path.join(path, ".git")
    if not os.path.lexists(dot):
        _link_git_dir(path, git_dir or default_git_dir(path), chosen=git_dir is not None)
    found = describe_git_dir(path)
    if found is None or os.path.realpath(found[0]) != os.path.realpath(path):
        raise ValueError(f"{dot} is not a git repository for {path}; move it away (or pass git_dir=) and retry")
    if git_dir is not None and os.path.realpath(found[1]) != os.path.realpath(git_dir):
        raise ValueError(f"{path} keeps its history in {found[1]}, not in git_dir={git_dir}; move it there "
                         "first (git's own `git init --separate-git-dir`) or leave git_dir out")
    top, found_dir, common = found
    repo = Repo(top, found_dir, common, read_config(top))
    if os.path.islink(dot) and repo.cfg(FOLDER_ID) != _folder_id(path):  # made, or linked from a new folder
        repo.git("config", "--local", FOLDER_ID, _folder_id(path))
        repo.reload_config()
    if repo.cfg("memory.repo") is None:
        for key, value in (("memory.repo", "true"), ("memory.layout", "plain"), ("memory.checkScope", "letta")):
            repo.git("config", "--local", key, value)
        from gitmemfs.gate import hooks

        hooks.install_for_init(repo)
        repo.reload_config()
    return repo


def _link_git_dir(path: str, git_dir: str, *, chosen: bool) -> None:
    """`path/.git` as a link to `git_dir`, made (empty, branch main) if it does not exist.
    A history found by the default key but recorded for another folder (the one that was
    at this place was moved, or deleted) is not taken over unless `chosen` (git_dir=)."""
    if os.path.exists(os.path.join(git_dir, "HEAD")):
        recorded = git.run(["config", "--file", os.path.join(git_dir, "config"), "--get", FOLDER_ID],
                           check=False).out.strip()
        if not chosen and recorded and recorded != _folder_id(path):
            raise ValueError(f"{git_dir} is the history of another folder that was at {path} (moved or deleted "
                             "since: a moved one took its history along); pass git_dir= to continue that history "
                             "here, or remove it to start afresh")
    else:
        _secure_mkdir(os.path.dirname(git_dir))
        # git writes its `.git` text file here; the link below replaces it.
        git.run(["init", "-q", f"--separate-git-dir={git_dir}", path], cwd=path)
        git.run(["symbolic-ref", "HEAD", "refs/heads/main"], cwd=path)
    link = os.path.join(path, f".git.{os.getpid()}.{threading.get_ident()}")
    os.symlink(git_dir, link, target_is_directory=True)
    os.replace(link, os.path.join(path, ".git"))  # atomic: git never sees the folder without one


def _folder_id(path: str) -> str:
    """The folder itself (device and inode): the same after a rename, new if made again."""
    st = os.stat(path)
    return f"{st.st_dev}:{st.st_ino}"


def _secure_mkdir(path: str) -> None:
    """`path` and its missing parents at 0o700 whatever the umask (as the reference makes them)."""
    path = os.path.abspath(path)  # a relative one ends in '' going up
    missing = []
    while not os.path.exists(path):
        missing.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, DIR_MODE)
        except FileExistsError:
            continue
        os.chmod(folder, DIR_MODE)


class _Reasons:
    @staticmethod
    @contextlib.contextmanager
    def reasoned(reason: str) -> Iterator[None]:
        """Commit every change made inside the block with this reason (per thread and task)."""
        token = _REASON.set(reason)
        try:
            yield
        finally:
            _REASON.reset(token)


class GitMemoryTool(_Reasons, BetaAbstractMemoryTool):
    """`BetaLocalFilesystemMemoryTool` with git: same arguments, same files, plus history.

    `base_path`: the folder the reference takes (memory files live in `<base_path>/memories`);
    `memory_dir`: the memory folder itself, instead; `git_dir`: where its repository is
    kept (default: `default_git_dir(memory folder)`); `reason`: the commit subject for
    every change, or a function of the call's arguments (default: derived from the call);
    `adopt`: commit files changed beside the tool as an "outside change" before a write
    (default), or refuse to write over them (False); `propose`: every write becomes a
    proposal for a person (git memory proposals), never applied (a call's own
    `"propose": true` does this for that call).
    """

    def __init__(self, base_path: PathLike = "./memory", *, memory_dir: PathLike | None = None,
                 git_dir: PathLike | None = None, reason: Reason = None, adopt: bool = True,
                 cache_control: Any = None, propose: bool = False) -> None:
        super().__init__(cache_control=cache_control)
        self._backend = _Backend(base_path, memory_dir, git_dir, reason, adopt, propose)
        self.base_path = Path(base_path)
        self.memory_root = self._backend.memory_root
        self._ensure_memory_root()  # the folder exists from the start, as the reference's does

    def _ensure_memory_root(self) -> None:
        _secure_mkdir(str(self.memory_root))

    def _validate_path(self, path: str) -> Path:
        """The memory path resolved (links followed), or a ToolError as the reference's."""
        return Path(self._backend.validate(path))

    def _run(self, command: Any) -> str:
        args = _arguments(command)
        resolved = {}
        for key in _PATHS.get(args.get("command", ""), ()):
            if isinstance(args.get(key), str):
                resolved[args[key]] = str(self._validate_path(args[key]))
        return self._backend.run(args, _REASON.get(), resolved)

    def view(self, command: Any) -> str:
        return self._run(command)

    def create(self, command: Any) -> str:
        return self._run(command)

    def str_replace(self, command: Any) -> str:
        return self._run(command)

    def insert(self, command: Any) -> str:
        return self._run(command)

    def delete(self, command: Any) -> str:
        return self._run(command)

    def rename(self, command: Any) -> str:
        return self._run(command)

    def clear_all_memory(self) -> str:
        return self._backend.clear(_REASON.get())


class AsyncGitMemoryTool(_Reasons, BetaAsyncAbstractMemoryTool):
    """The async twin of `GitMemoryTool` (for `BetaAsyncLocalFilesystemMemoryTool`), with its
    arguments: each call runs in a worker thread, so the event loop never waits on git;
    `base_path` and `memory_root` are anyio paths, and folders are made on first use."""

    def __init__(self, base_path: PathLike = "./memory", *, memory_dir: PathLike | None = None,
                 git_dir: PathLike | None = None, reason: Reason = None, adopt: bool = True,
                 cache_control: Any = None, propose: bool = False) -> None:
        super().__init__(cache_control=cache_control)
        self._backend = _Backend(base_path, memory_dir, git_dir, reason, adopt, propose)
        self.base_path = AsyncPath(base_path)
        self.memory_root = AsyncPath(self._backend.memory_root)

    async def _ensure_memory_root(self) -> None:
        from anyio.to_thread import run_sync

        await run_sync(_secure_mkdir, str(self.memory_root))

    async def _validate_path(self, path: str) -> AsyncPath:
        """The memory path resolved (links followed), or a ToolError as the reference's."""
        from anyio.to_thread import run_sync

        return AsyncPath(await run_sync(self._backend.validate, path))

    async def _run(self, command: Any) -> str:
        from anyio.to_thread import run_sync

        await self._ensure_memory_root()
        args = _arguments(command)
        resolved = {}
        for key in _PATHS.get(args.get("command", ""), ()):
            if isinstance(args.get(key), str):
                resolved[args[key]] = str(await self._validate_path(args[key]))
        return await run_sync(self._backend.run, args, _REASON.get(), resolved)

    async def view(self, command: Any) -> str:
        return await self._run(command)

    async def create(self, command: Any) -> str:
        return await self._run(command)

    async def str_replace(self, command: Any) -> str:
        return await self._run(command)

    async def insert(self, command: Any) -> str:
        return await self._run(command)

    async def delete(self, command: Any) -> str:
        return await self._run(command)

    async def rename(self, command: Any) -> str:
        return await self._run(command)

    async def clear_all_memory(self) -> str:
        from anyio.to_thread import run_sync

        await self._ensure_memory_root()
        return await run_sync(self._backend.clear, _REASON.get())
