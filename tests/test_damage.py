"""A damaged memory is never "healthy" (issue 36): every reader and writer says so.

After `git gc` and the loss of the pack, a missing blob, or an unborn branch in a
repository with history elsewhere, each command exits 4 (the environment's) with one
`error:` line naming the next step; a new repository still reads as new.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import git, memory, snapshot

READERS = [["check"], ["compile"], ["log"], ["search", "persona"],
           ["create", "reference/x.md", "hi", "-d", "X", "-m", "m"]]


def damaged(repo: Path, expect: str) -> None:
    for argv in READERS:
        proc = memory(*argv, cwd=repo)
        assert proc.returncode == 4, f"{argv}: exit {proc.returncode}\n{proc.stdout}{proc.stderr}"
        first = proc.stderr.splitlines()[0]
        assert first.startswith("error: memory: ") and expect in first and "git fsck --full" in first, first
        assert "internal error" not in proc.stderr and "frontmatter" not in proc.stderr
    doctor = memory("doctor", cwd=repo)  # git's own check, as a finding with the next step
    assert doctor.returncode == 4 and "git fsck found damage" in doctor.stdout, doctor.stdout + doctor.stderr
    assert "restore the memory from a clone of its server" in doctor.stdout


def test_a_lost_pack_is_damage_in_every_command(mem: Path) -> None:
    git("gc", "-q", cwd=mem)
    for pack in (mem / ".git" / "objects" / "pack").glob("*.pack"):
        pack.unlink()
    damaged(mem, "which is missing from the object store")


def test_a_missing_blob_is_damage_not_missing_frontmatter(mem: Path) -> None:
    oid = git("rev-parse", "HEAD:system/contacts.md", cwd=mem).stdout.strip()
    (mem / ".git" / "objects" / oid[:2] / oid[2:]).unlink()
    for argv in (["check"], ["compile"], ["doctor"], ["search", "Sarah"]):
        proc = memory(*argv, cwd=mem)
        assert proc.returncode == 4, f"{argv}: {proc.stdout}{proc.stderr}"
        said = proc.stdout + proc.stderr  # doctor: git fsck's finding; the others: one error line
        assert oid[:12] in said and ("is missing from the object store" in said or "git fsck found" in said)
        assert "frontmatter" not in said


def test_an_unborn_branch_beside_history_is_damage(mem: Path) -> None:
    git("symbolic-ref", "HEAD", "refs/heads/elsewhere", cwd=mem)
    for argv in (["check"], ["compile"], ["log"], ["search", "Sarah"]):
        proc = memory(*argv, cwd=mem)
        assert proc.returncode == 4, f"{argv}: {proc.stdout}{proc.stderr}"
        assert "branch elsewhere has no commit, but this repository has history (refs refs/heads/main" \
            in proc.stderr and "git switch NAME" in proc.stderr


def test_a_ref_naming_a_blob_is_damage(mem: Path) -> None:
    blob = git("rev-parse", "HEAD:system/contacts.md", cwd=mem).stdout.strip()
    (mem / ".git" / "refs" / "heads" / "main").write_text(blob + "\n")
    proc = memory("compile", cwd=mem)
    assert proc.returncode == 4 and "a blob and not a commit" in proc.stderr, proc.stderr


def test_a_new_repository_is_still_new(tmp_path: Path) -> None:
    repo = tmp_path / "fresh"
    git("init", "-q", str(repo), cwd=tmp_path)
    git("config", "memory.repo", "true", cwd=repo)
    (repo / "staged.md").write_text("x\n")
    git("add", "staged.md", cwd=repo)  # a loose blob, and still no history
    proc = memory("check", cwd=repo)
    assert proc.returncode == 0 and "No commits yet" in proc.stdout, proc.stderr
    assert memory("log", cwd=repo).returncode == 0


def test_doctor_reports_damage_and_a_memory_without_durability(mem: Path) -> None:
    git("config", "memory.durable", "false", cwd=mem)
    proc = memory("doctor", cwd=mem)
    assert proc.returncode == 1 and "memory.durable is false" in proc.stdout
    git("config", "--unset", "memory.durable", cwd=mem)
    tree = git("rev-parse", "HEAD^{tree}", cwd=mem).stdout.strip()
    before = snapshot(mem)
    (mem / ".git" / "objects" / tree[:2] / tree[2:]).unlink()
    proc = memory("doctor", cwd=mem)
    assert proc.returncode == 4 and "git fsck --full" in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    assert before[0] == git("rev-parse", "HEAD", cwd=mem).stdout.strip()


@pytest.mark.parametrize("setting", ["core.fsync", "core.fsyncmethod"])
def test_init_makes_plain_git_durable_too(repo: Path, setting: str) -> None:
    assert git("config", "--get", setting, cwd=repo).stdout.strip() in ("committed,index", "fsync")
