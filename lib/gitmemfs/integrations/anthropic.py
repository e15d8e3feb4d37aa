"""A git-backed memory tool for the Anthropic Python SDK.

    from gitmemfs.integrations.anthropic import GitMemoryTool
    memory = GitMemoryTool("./memory")            # was BetaLocalFilesystemMemoryTool("./memory")
    client.beta.messages.tool_runner(..., tools=[memory])

Same files on disk as the SDK's `BetaLocalFilesystemMemoryTool` (`<base_path>/memories/…`),
same return and error strings, plus a `.git` folder there: every change is a commit whose
subject is the reason (derived from the call unless you give one), checked by the memory
rules. Each command runs in process through the engine `git memory call --schema
anthropic` uses (`gitmemfs.tools.anthropic_memory`). The repository is created with the
plain layout on first use. The SDK is an optional extra: `pip install 'git-memfs[anthropic]'`.
"""
from __future__ import annotations

import contextlib
import contextvars
import os
import threading
from pathlib import Path
from typing import Any, Callable, Iterator, Union

try:
    from anthropic.lib.tools import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool, ToolError
except ImportError as exc:  # the optional extra is not installed
    raise ImportError("gitmemfs.integrations.anthropic needs the Anthropic Python SDK; install it with "
                      "pip install 'git-memfs[anthropic]'") from exc

from gitmemfs.core import git
from gitmemfs.core.errors import MemfsError
from gitmemfs.core.repo import Repo, describe_git_dir, read_config
from gitmemfs.tools.anthropic_memory import DIR_MODE, AnthropicMemory

__all__ = ["GitMemoryTool", "AsyncGitMemoryTool"]

# A reason is text, or a function of the call's arguments (a dict) that returns text.
Reason = Union[str, Callable[[dict], str], None]
_REASON: contextvars.ContextVar[str | None] = contextvars.ContextVar("gitmemfs_reason", default=None)


def _arguments(command: Any) -> dict[str, Any]:
    """The call's arguments: the SDK hands over a model built without validation."""
    if isinstance(command, dict):
        return dict(command)
    args = {k: v for k, v in vars(command).items() if not k.startswith("_")}
    args.update(getattr(command, "__pydantic_extra__", None) or {})
    return args


class _Backend:
    """The state both classes share: where the repository is, opened once."""

    def __init__(self, base_path: str | os.PathLike[str], memory_dir: str | os.PathLike[str] | None,
                 reason: Reason):
        self.base_path = Path(base_path)
        self.memory_root = Path(memory_dir) if memory_dir is not None else self.base_path / "memories"
        self._path = os.path.abspath(self.memory_root)
        self.reason = reason
        self._lock = threading.Lock()
        self._repo: Repo | None = None

    def repo(self) -> Repo:
        """A fresh handle per call (threads each hold their own writer lock descriptor)."""
        with self._lock:
            if self._repo is None:
                self._repo = open_or_init(self._path)
            r = self._repo
        return Repo(r.root, r.git_dir, r.common_dir, dict(r.config))

    def run(self, command: Any, reason: str | None) -> str:
        args = _arguments(command)
        if reason is None and self.reason is not None:
            reason = self.reason(args) if callable(self.reason) else self.reason
        try:
            return AnthropicMemory(self.repo(), reason=reason).execute(args).message
        except MemfsError as exc:
            raise ToolError(exc.message) from None

    def clear(self, reason: str | None) -> str:
        try:
            return AnthropicMemory(self.repo()).clear_all(reason).message
        except MemfsError as exc:
            raise ToolError(exc.message) from None


def open_or_init(path: str) -> Repo:
    """The memory repository at `path`, made (plain layout, hooks, no seed files) if absent."""
    found = describe_git_dir(path) if os.path.isdir(path) else None
    if found is None or os.path.realpath(found[0]) != os.path.realpath(path):
        _secure_mkdir(path)
        git.run_light(["init", "-q", path], cwd=os.path.dirname(path) or ".")
        git.run_light(["symbolic-ref", "HEAD", "refs/heads/main"], cwd=path)
        found = describe_git_dir(path)
        assert found is not None
    top, git_dir, common = found
    repo = Repo(top, git_dir, common, read_config(top))
    if repo.cfg("memory.repo") is None:
        for key, value in (("memory.repo", "true"), ("memory.layout", "plain"), ("memory.checkScope", "letta")):
            repo.git("config", "--local", key, value)
        from gitmemfs.gate import hooks

        hooks.install_for_init(repo)
        repo.reload_config()
    return repo


def _secure_mkdir(path: str) -> None:
    """`path` and its missing parents at 0o700 whatever the umask (as the reference makes them)."""
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
    `memory_dir`: the repository itself, instead; `reason`: the commit subject for every
    change, or a function of the call's arguments (default: derived from the call).
    """

    def __init__(self, base_path: str | os.PathLike[str] = "./memory", *,
                 memory_dir: str | os.PathLike[str] | None = None, reason: Reason = None,
                 cache_control: Any = None) -> None:
        super().__init__(cache_control=cache_control)
        self._backend = _Backend(base_path, memory_dir, reason)
        self.base_path = self._backend.base_path
        self.memory_root = self._backend.memory_root
        _secure_mkdir(self._backend._path)  # the folder exists from the start, as the reference's does

    def _run(self, command: Any) -> str:
        return self._backend.run(command, _REASON.get())

    def view(self, command: Any) -> str:  # type: ignore[override]
        return self._run(command)

    def create(self, command: Any) -> str:  # type: ignore[override]
        return self._run(command)

    def str_replace(self, command: Any) -> str:  # type: ignore[override]
        return self._run(command)

    def insert(self, command: Any) -> str:  # type: ignore[override]
        return self._run(command)

    def delete(self, command: Any) -> str:  # type: ignore[override]
        return self._run(command)

    def rename(self, command: Any) -> str:  # type: ignore[override]
        return self._run(command)

    def clear_all_memory(self) -> str:
        return self._backend.clear(_REASON.get())


class AsyncGitMemoryTool(_Reasons, BetaAsyncAbstractMemoryTool):
    """The async twin of `GitMemoryTool` (for `BetaAsyncLocalFilesystemMemoryTool`): each
    call runs in a worker thread, so the event loop never waits on git."""

    def __init__(self, base_path: str | os.PathLike[str] = "./memory", *,
                 memory_dir: str | os.PathLike[str] | None = None, reason: Reason = None,
                 cache_control: Any = None) -> None:
        super().__init__(cache_control=cache_control)
        self._backend = _Backend(base_path, memory_dir, reason)
        self.base_path = self._backend.base_path
        self.memory_root = self._backend.memory_root

    async def _run(self, command: Any) -> str:
        from anyio.to_thread import run_sync

        return await run_sync(self._backend.run, command, _REASON.get())

    async def view(self, command: Any) -> str:  # type: ignore[override]
        return await self._run(command)

    async def create(self, command: Any) -> str:  # type: ignore[override]
        return await self._run(command)

    async def str_replace(self, command: Any) -> str:  # type: ignore[override]
        return await self._run(command)

    async def insert(self, command: Any) -> str:  # type: ignore[override]
        return await self._run(command)

    async def delete(self, command: Any) -> str:  # type: ignore[override]
        return await self._run(command)

    async def rename(self, command: Any) -> str:  # type: ignore[override]
        return await self._run(command)

    async def clear_all_memory(self) -> str:
        from anyio.to_thread import run_sync

        return await run_sync(self._backend.clear, _REASON.get())
