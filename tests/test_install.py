"""`make install`: an install of its own under PREFIX (a venv in PREFIX/lib/git-memfs,
the commands linked into PREFIX/bin, man pages, completion and guides under
PREFIX/share) that works on its own from a plain copy of the source, and after the quick
start from the checkout, run by the checkout's venv, without touching that venv.

Each install creates a venv and pip-installs the package into it (PyYAML from
the configured index), then the installed commands make a real edit through the hooks
they install, with nothing of the checkout on PATH.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")

# What a plain source copy holds: no venv, no build output, no git metadata.
NOT_SOURCE = shutil.ignore_patterns(".venv", ".git", "build", "dist", "*.egg-info", "__pycache__",
                                    ".pytest_cache", ".ruff_cache", ".import_linter_cache")


def make_install(source: Path, prefix: Path, env: dict[str, str]) -> None:
    proc = subprocess.run(["make", "-C", str(source), "install", f"PREFIX={prefix}"], env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"installed: {prefix}/bin/git-memory (git-memfs " in proc.stdout


def installed_env(prefix: Path, home: Path) -> dict[str, str]:
    """Only the install and the system on PATH: not bin/ or .venv/bin of the checkout."""
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "GIT_MEMFS"))}
    env.update(PATH=f"{prefix / 'bin'}{os.pathsep}/usr/bin{os.pathsep}/bin", HOME=str(home),
               GIT_CONFIG_GLOBAL=str(home / ".gitconfig"), MANPAGER="cat", PAGER="cat", MANWIDTH="80")
    env.pop("MANPATH", None)
    (home / ".gitconfig").write_text("[user]\n\tname = Me\n\temail = me@example.com\n"
                                     "[init]\n\tdefaultBranch = main\n")
    return env


def check_the_install(prefix: Path, tmp_path: Path) -> None:
    env = installed_env(prefix, tmp_path / "home")

    def run(*argv: str, cwd: Path = tmp_path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(argv), cwd=cwd, env=env, capture_output=True, text=True, timeout=120)

    for command in ("git-memory", "git-memory-patch", "git-dream"):
        link = prefix / "bin" / command
        assert link.is_symlink() and link.resolve().parent == (prefix / "lib/git-memfs/venv/bin").resolve()
    version = run(str(prefix / "bin" / "git-memory"), "--version")
    assert version.returncode == 0 and version.stdout.startswith("git-memfs "), version.stderr

    # One edit, through git and the hooks init installed, in a new memory.
    assert run("git", "memory", "init", "-q", "mem").returncode == 0
    memory = tmp_path / "mem"
    edit = run("git", "memory", "create", "notes/x.md", "Installed.", "-d", "A note", "-m", "First note", cwd=memory)
    assert edit.returncode == 0, edit.stderr
    assert edit.stdout.startswith("Memory create committed (")
    assert run("git", "log", "-1", "--format=%s", cwd=memory).stdout == "First note\n"
    hook = (memory / ".git" / "hooks" / "pre-commit").read_text()
    assert str(prefix / "lib" / "git-memfs" / "venv") in hook, "the hook runs the installed Python"
    (memory / "notes" / "y.md").write_text("no frontmatter\n")
    run("git", "add", "notes/y.md", cwd=memory)
    refused = run("git", "commit", "-m", "bad", cwd=memory)
    assert refused.returncode != 0 and "notes/y.md" in refused.stdout + refused.stderr

    # The example files and the guides the docs and man pages name are there.
    example = run("git", "memory", "help", "--example", "session.jsonl")
    assert example.returncode == 0 and Path(example.stdout.strip()).is_file()
    assert str(prefix) in example.stdout
    share = prefix / "share"
    for page in ("git-memory.1", "git-memory-patch.1", "git-dream.1"):
        assert (share / "man" / "man1" / page).is_file()
    assert (share / "doc" / "git-memfs" / "docs" / "dreams.md").is_file()
    assert (share / "bash-completion" / "completions" / "git-memory").is_file()
    if shutil.which("man"):
        page = run("git", "memory", "--help")
        assert page.returncode == 0 and page.stdout.lstrip().startswith("GIT-MEMORY(1)"), page.stderr

    # And it goes away again.
    gone = subprocess.run(["make", "-C", str(ROOT), "uninstall", f"PREFIX={prefix}"], capture_output=True,
                          text=True, timeout=120)
    assert gone.returncode == 0, gone.stderr
    assert not (prefix / "bin" / "git-memory").exists() and not (prefix / "lib" / "git-memfs").exists()
    assert not (share / "man" / "man1" / "git-memory.1").exists()


def test_make_install_from_a_plain_copy_of_the_source(tmp_path: Path) -> None:
    source = tmp_path / "src"
    shutil.copytree(ROOT, source, ignore=NOT_SOURCE, symlinks=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["PATH"] = f"/usr/bin{os.pathsep}/bin{os.pathsep}{env['PATH']}"
    make_install(source, tmp_path / "prefix", env)
    assert not (source / ".venv").exists(), "make install does not build the checkout's venv"
    check_the_install(tmp_path / "prefix", tmp_path)


def digest(folder: Path) -> str:
    """The checkout venv's scripts and its record of what is installed."""
    h = hashlib.sha256()
    for path in sorted([*folder.glob("bin/*"), *folder.glob("lib/python*/site-packages/*git_memfs*/*")]):
        if path.is_file():
            h.update(path.name.encode() + path.read_bytes())
    return h.hexdigest()


def test_make_install_after_the_quick_start_leaves_the_checkout_venv_alone(tmp_path: Path) -> None:
    """The quick start's shell: the checkout's .venv/bin first on PATH, so `python3` is the
    venv's. The old target ran pip there, which replaced the venv's editable install."""
    venv = Path(sys.prefix)
    if not (venv / "bin" / "git-memory").exists():
        pytest.skip("the tests do not run from the checkout's venv (make venv)")
    before = digest(venv)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{env['PATH']}", VIRTUAL_ENV=str(venv))
    make_install(ROOT, tmp_path / "prefix", env)
    assert digest(venv) == before
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import gitmemfs; print(gitmemfs.__file__)"],
                           capture_output=True, text=True)
    assert where.stdout.strip() == str(ROOT / "lib" / "gitmemfs" / "__init__.py")
    check_the_install(tmp_path / "prefix", tmp_path)
