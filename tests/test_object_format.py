"""A SHA-256 repository (`git init --object-format=sha256`) on the hook path and the
edit path: object ids are 64 hex digits, and every reader of git's own files
(core/gitfiles/) must hash, look up and answer exactly as in a SHA-1 repository."""
from __future__ import annotations

import glob
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import LIB, ROOT, git, head, memfile, memory, snapshot, write


@pytest.fixture
def sha256(tmp_path: Path) -> Path:
    """A SHA-256 memory repository with our hooks installed and one committed file."""
    path = tmp_path / "mem"
    git("init", "-q", "--object-format=sha256", str(path), cwd=tmp_path)
    proc = memory("init", str(path), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert git("rev-parse", "--show-object-format", cwd=path).stdout.strip() == "sha256"
    write(path, "system/contacts.md", memfile("People I know", "Sarah: +1-555-0100\n"))
    git("add", "-A", cwd=path)
    git("commit", "-q", "-m", "contacts", cwd=path)  # through the installed pre-commit
    return path


def test_a_commit_through_the_installed_hooks_is_judged(sha256: Path) -> None:
    assert len(head(sha256)) == 64
    write(sha256, "system/contacts.md", memfile("People I know", "Sarah: +1-555-0111\n"))
    git("add", "-A", cwd=sha256)
    assert git("commit", "-q", "-m", "Sarah moved", cwd=sha256, check=False).returncode == 0
    assert git("log", "-1", "--format=%s", cwd=sha256).stdout.strip() == "Sarah moved"
    write(sha256, "system/bad.md", "no frontmatter at all\n")
    git("add", "-A", cwd=sha256)
    before = head(sha256)
    proc = git("commit", "-q", "-m", "bad", cwd=sha256, check=False)
    assert proc.returncode != 0 and "system/bad.md" in proc.stderr, proc.stderr
    assert head(sha256) == before


def test_edits_commit_and_refuse_as_in_any_repository(sha256: Path) -> None:
    for argv in (["create", "notes/plan.md", "Step one.\n", "-d", "The plan", "-m", "a plan"],
                 ["str_replace", "system/contacts.md", "0100", "0111", "-m", "Sarah moved"],
                 ["str_replace", "notes/plan.md", "one", "two", "-m", "next step"]):
        proc = memory(*argv, cwd=sha256)
        assert proc.returncode == 0, proc.stderr
    assert git("log", "-3", "--format=%s", cwd=sha256).stdout.split("\n")[:3] == \
        ["next step", "Sarah moved", "a plan"]
    assert len(head(sha256)) == 64
    git("fsck", "--strict", cwd=sha256)
    proc = memory("str_replace", "system/contacts.md", "Sarah", "Sara", "-m", "x",
                  "--json", cwd=sha256)
    assert proc.returncode == 0 and head(sha256) in proc.stdout
    before = snapshot(sha256)
    proc = memory("create", "system/x.md", "text", "-d", "", "-m", "empty description", cwd=sha256)
    assert proc.returncode != 0 and snapshot(sha256) == before


def test_edits_through_git_hooks_too(sha256: Path) -> None:
    """With git's own hooks (the escape hatch): our pre-commit judges the edit."""
    env = {**os.environ, "GIT_MEMFS_COMMIT_HOOKS": "git"}
    proc = memory("str_replace", "system/contacts.md", "0100", "0122", "-m", "hooked", cwd=sha256, env=env)
    assert proc.returncode == 0, proc.stderr
    assert git("log", "-1", "--format=%s", cwd=sha256).stdout.strip() == "hooked"


def _pythons() -> list[str]:
    """This interpreter and any other CPython >= 3.10 on the machine (pyenv's)."""
    found = {sys.executable}
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    for minor in (10, 11, 12, 13):
        found.update(glob.glob(os.path.join(root, "versions", f"3.{minor}.*", "bin", f"python3.{minor}")))
    return sorted(found)


@pytest.mark.parametrize("python", _pythons())
def test_the_loose_reader_hashes_both_formats_on_every_python(sha256: Path, tmp_path: Path, python: str) -> None:
    """core/gitfiles/loose.py reads a loose blob as `git cat-file` does, in a SHA-256
    and a SHA-1 repository, on each Python here (CPython 3.12 dropped `_sha256`)."""
    sha1 = tmp_path / "sha1"
    git("init", "-q", str(sha1), cwd=tmp_path)
    for repo in (sha256, sha1):
        oid = git("hash-object", "-w", "--stdin", input="a loose blob\n", cwd=repo).stdout.strip()
        code = ("import sys; sys.path.insert(0, sys.argv[1]); from gitmemfs.core.gitfiles import loose; "
                "sys.stdout.write(repr(loose.read_loose(sys.argv[2], sys.argv[3])))")
        proc = subprocess.run([python, "-I", "-S", "-c", code, str(LIB), str(repo / ".git" / "objects"), oid],
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == repr(b"a loose blob\n"), (python, proc.stdout)


def test_no_private_hash_or_import_machinery_module_in_the_package() -> None:
    """hashlib, not CPython's private `_sha1`/`_sha256` (gone in 3.12) or its import
    system's internals."""
    pattern = re.compile(r"_frozen_importlib|(?<!\w)_sha(1|2|256|512)\b")  # not content_sha256
    hits = [f"{path}:{n}" for path in sorted((ROOT / "lib").rglob("*.py"))
            for n, line in enumerate(path.read_text().splitlines(), 1) if pattern.search(line)]
    assert hits == []
