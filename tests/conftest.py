"""Shared fixtures: a hermetic git environment, memory repos, and helpers that run
the real commands (bin/ on PATH, through `git <subcommand>`)."""
from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Iterator

import pytest

# pytest-git's `git_repo` (the design card's fixture): a plain, non-memory repository,
# made with `git init` in a workspace of its own (`.workspace`, a Path; `.api`, GitPython).
# pytest-git and pytest-shutil still decorate with @pytest.yield_fixture, whose
# deprecation warning stops a run under `-W error` at plugin load; setup.cfg keeps them
# from loading themselves (-p no:git_repo -p no:workspace) and they load here, with
# that one warning silenced. (pytest 10 removes yield_fixture: dev pins pytest<10.)
with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message=r"@pytest\.yield_fixture is deprecated",
                            category=pytest.PytestDeprecationWarning)
    from pytest_git import git_repo  # noqa: F401  (a fixture, found by its name)

if sys.version_info >= (3, 11):
    import tomllib
else:  # the dev extra brings tomli where the standard library has no tomllib
    import tomli as tomllib
toml_loads = tomllib.loads

ROOT = Path(__file__).resolve().parent.parent
BIN = ROOT / "bin"
LIB = ROOT / "lib"
sys.path.insert(0, str(LIB))

_SCRUB = (
    "AGENT_ID", "LETTA_AGENT_ID", "AGENT_NAME", "MEMORY_DIR", "LETTA_MEMORY_DIR", "LETTA_HOME",
    "GIT_MEMORY_TOKEN", "LETTA_API_KEY", "LETTA_BASE_URL", "LETTA_MEMFS_BASE_URL", "LETTA_MEMFS_BACKEND",
    "GIT_DREAM_AGENT", "GIT_DREAM_SANDBOX",
    "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
    "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
    "GIT_MEMORY_LOCK_TIMEOUT", "PRE_COMMIT", "GIT_MEMORY_APPROVE", "LETTA_MEMORY_CONSTRAINTS_UPDATE",
)


@pytest.fixture(autouse=True)
def hermetic(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private HOME and git config for every test; no agent env leaks in."""
    home = tmp_path_factory.mktemp("home")
    gitconfig = home / ".gitconfig"
    gitconfig.write_text(
        "[user]\n\tname = Test User\n\temail = test@example.com\n"
        "[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n"
        "[protocol \"file\"]\n\tallow = always\n"
    )
    for name in _SCRUB:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_TEMPLATE_DIR", "")
    monkeypatch.setenv("GIT_EDITOR", "false")
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("GIT_MEMFS_PYTHON", sys.executable)
    return home


def cache_of(repo: Path | str) -> Path:
    """Where git-memfs keeps `repo`'s caches (core/cachedir.py), under the test's HOME."""
    from gitmemfs.core.cachedir import folder

    return Path(folder(os.path.join(repo, ".git")))


def git(*args: str, cwd: Path | str, check: bool = True, input: str | None = None,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Plain git, as a user would run it."""
    full_env = None if env is None else {**os.environ, **env}
    proc = subprocess.run(["git", *args], cwd=cwd, text=True, capture_output=True, input=input,
                          env=full_env)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}")
    return proc


def gated_server(repo: Path, server: Path) -> Path:
    """A bare repository at `server` holding `repo`'s main as origin, with the server gate
    installed (`git memory hooks install` in it), as docs/hooks-and-ci.md makes one."""
    git("init", "-q", "--bare", str(server), cwd=server.parent)
    git("remote", "add", "origin", str(server), cwd=repo)
    git("push", "-q", "origin", "main", cwd=repo)
    proc = subprocess.run(["git", "memory", "hooks", "install"], cwd=server, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return server


def run(cmd: str, *args: str, cwd: Path | str, input: str | None = None,
        env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """One of our commands end to end: `git memory …`, `git memory-patch …`, `git dream …`."""
    full_env = {**os.environ, **(env or {})}
    stdin = None if input is not None else subprocess.DEVNULL
    return subprocess.run(["git", cmd, *args], cwd=cwd, text=True, capture_output=True, input=input,
                          stdin=stdin, env=full_env, timeout=timeout)


def on_terminal(argv: list[str], cwd: Path | str, *, stdout: bool = True,
                env: dict[str, str] | None = None) -> tuple[int, bytes]:
    """Run `argv` with stderr (and stdout, unless `stdout=False`) on a pseudo-terminal, as
    a person's shell would; (exit code, everything it wrote there)."""
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=slave if stdout else subprocess.DEVNULL,
                            stderr=slave, env=env)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the terminal closed when the command ended
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    return proc.wait(timeout=120), seen


def memory(*args: str, cwd: Path | str, **kw) -> subprocess.CompletedProcess[str]:
    return run("memory", *args, cwd=cwd, **kw)


def head(repo: Path) -> str:
    return git("rev-parse", "HEAD", cwd=repo).stdout.strip()


def snapshot(repo: Path) -> tuple[str, str, dict[str, bytes]]:
    """HEAD, porcelain status and every work-tree file, to prove nothing changed."""
    files = {}
    for path in sorted(repo.rglob("*")):
        rel = path.relative_to(repo)
        if rel.parts[0] == ".git" or not path.is_file():
            continue
        files[str(rel)] = path.read_bytes()
    status = git("status", "--porcelain", "--untracked-files=all", cwd=repo).stdout
    return head(repo), status, files


def write(repo: Path, rel: str, text: str | bytes) -> Path:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def commit_all(repo: Path, message: str = "fixture", *extra: str) -> str:
    git("add", "-A", cwd=repo)
    git("commit", "-q", "--no-verify", "-m", message, *extra, cwd=repo)
    return head(repo)


def memfile(description: str, body: str = "", *extra: str) -> str:
    head_lines = ["---", f"description: {description}", *extra, "---"]
    return "\n".join(head_lines) + "\n" + body


def fast_import(repo: Path, history: list[tuple[dict[str, str], str]]) -> None:
    """Commit each (files, message) of `history` on main through git fast-import (a long
    history in one process), then check it out."""
    chunks = []
    for n, (files, message) in enumerate(history):
        body = "".join(f"M 100644 inline {p}\ndata {len(d.encode())}\n{d}\n" for p, d in files.items())
        chunks.append(f"commit refs/heads/main\nauthor A <a@example.invalid> {1700000000 + n} +0000\n"
                      f"committer A <a@example.invalid> {1700000000 + n} +0000\n"
                      f"data {len(message.encode())}\n{message}\n"
                      + ("from refs/heads/main^0\n" if n == 0 else "") + body)
    git("fast-import", "--quiet", cwd=repo, input="".join(chunks))
    git("reset", "-q", "--hard", "main", cwd=repo)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A fresh memory repository made by `git memory init`."""
    path = tmp_path / "mem"
    proc = memory("init", str(path), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return path


@pytest.fixture
def mem(repo: Path) -> Iterator[Path]:
    """A memory repo with a few files: a normal one, a read_only one, a folder."""
    write(repo, "system/contacts.md", memfile("People I know", "Sarah: +1-555-0100\nTom: +1-555-0199\n"))
    write(repo, "system/rules.md", memfile("Ground rules", "Never share secrets.\n", "read_only: true"))
    write(repo, "reference/history/a.md", memfile("History A", "alpha\n"))
    write(repo, "reference/history/b.md", memfile("History B", "beta\n"))
    commit_all(repo, "fixture files")
    yield repo
