"""An edit that answered "committed" survives a power cut (issue 36).

The memory lives on tests/powercut.py's filesystem, which keeps only what was fsynced;
each operation runs once whole (to count its changes), then again with the power cut
at points spread over all of them (tests/powercutkit.py; GIT_MEMFS_POWERCUT_POINTS, or
`make powercut` for the full run). After each cut, on the disk as it comes back:

- an operation that answered is there: its commit on main, with its content;
- the next edit works, and then `git fsck --full` is clean;
- whatever did not answer may be gone, but never half there.

The control runs the same edit with `memory.durable false` and cuts the power after
the answer: the acknowledged commit is lost, so the filesystem really drops what was
not synced and the tests above prove something.
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Callable

import pytest
from powercutkit import Outcome, PowerCut, missing, points

from conftest import commit_all, git, memfile, memory, write

WHY = missing()
pytestmark = [pytest.mark.powercut, pytest.mark.skipif(WHY is not None, reason=WHY or "")]


def quiet(repo: Path) -> None:
    """No background housekeeping: a detached gc would make the count differ run to run."""
    git("config", "maintenance.auto", "false", cwd=repo)
    git("config", "gc.auto", "0", cwd=repo)


@pytest.fixture
def template(tmp_path: Path) -> Path:
    disk = tmp_path / "template"
    disk.mkdir()
    assert memory("init", str(disk / "mem"), cwd=disk).returncode == 0
    repo = disk / "mem"
    quiet(repo)
    write(repo, "system/contacts.md", memfile("People I know", "Sarah: +1-555-0100\nTom: +1-555-0199\n"))
    write(repo, "reference/notes.md", memfile("Notes", "alpha\n"))
    commit_all(repo, "fixture files")
    return disk


def committed(outcome: Outcome) -> bool:
    return outcome.proc is not None and outcome.proc.returncode == 0 and "committed" in outcome.proc.stdout


def verify(outcome: Outcome, reason: str, expect: dict[str, str], where: str = "mem",
           answered_by: Callable[[Outcome], bool] = committed) -> bool:
    """The disk after the cut: an answered commit is there; the next edit works; fsck is
    clean. Returns whether the operation answered."""
    repo = outcome.image / where
    answered = answered_by(outcome)

    def landed() -> bool:
        subjects = git("log", "--format=%s", "main", cwd=repo, check=False).stdout.splitlines()
        return any(reason in subject for subject in subjects)

    if answered:
        assert landed(), f"an acknowledged commit was lost: {outcome.answered}"
        for rel, text in expect.items():
            assert git("show", f"main:{rel}", cwd=repo).stdout == text
    after = memory("create", "reference/after-the-cut.md", "back again", "-d", "After", "-m", "after the cut",
                   cwd=repo)
    assert after.returncode == 0, f"the next edit failed after a cut at {outcome.count}: {after.stderr}"
    fsck = git("fsck", "--full", "--no-progress", cwd=repo, check=False)
    clean = fsck.returncode == 0 and "error" not in fsck.stderr and "missing" not in fsck.stdout
    assert clean, f"after a cut at {outcome.count}: {fsck.stdout}{fsck.stderr}"
    assert git("status", "--porcelain", cwd=repo).stdout == ""
    if answered:
        assert landed()
    return answered


def cut_everywhere(tmp_path: Path, template: Path, argv: list[str], reason: str, expect: dict[str, str],
                   cwd: str = "mem", answered_by: Callable[[Outcome], bool] = committed,
                   before_each: Callable[[], None] = lambda: None) -> tuple[int, int]:
    """(changes the operation makes, cuts after which it had answered)."""
    cut = PowerCut(tmp_path / "pc")
    cut.prepare(template)
    before_each()
    whole = cut.run(argv, cwd=cwd)
    assert whole.proc is not None and whole.proc.returncode == 0, whole.answered
    assert verify(whole, reason, expect, cwd, answered_by)  # the cut right after the answer
    answered = 1
    for at in points(whole.count):
        cut.prepare(template)
        before_each()
        outcome = cut.run(argv, cwd=cwd, at=at)
        answered += verify(outcome, reason, expect, cwd, answered_by)
    print(f"powercut {' '.join(argv[1:3])}: {whole.count} changes, cut at {len(points(whole.count))} points "
          f"and after the answer; answered {answered} times, lost nothing answered")
    return whole.count, answered


def test_create_survives_a_power_cut(tmp_path: Path, template: Path) -> None:
    text = memfile("Plans", "Ship the durable edit.\n")
    total, answered = cut_everywhere(
        tmp_path, template, ["git", "memory", "create", "system/plans.md", "Ship the durable edit.",
                             "-d", "Plans", "-m", "plans made"], "plans made", {"system/plans.md": text})
    assert total > 20 and answered >= 1


@pytest.mark.parametrize("made", ["now", "before core.fsync"])
def test_str_replace_survives_a_power_cut(tmp_path: Path, template: Path, made: str) -> None:
    """`before core.fsync`: a memory init made before it wrote the setting; the writer passes it."""
    if made != "now":
        for key in ("core.fsync", "core.fsyncMethod"):
            git("config", "--unset", key, cwd=template / "mem")
    text = memfile("People I know", "Sarah: +1-555-0111\nTom: +1-555-0199\n")
    total, _ = cut_everywhere(
        tmp_path, template, ["git", "memory", "str_replace", "system/contacts.md", "0100", "0111",
                             "-m", "Sarah moved"], "Sarah moved", {"system/contacts.md": text})
    assert total > 20


def test_a_multi_file_patch_survives_a_power_cut(tmp_path: Path, template: Path) -> None:
    patch = "\n".join(["*** Begin Patch", "*** Add File: reference/garden.md", "+---", "+description: Garden",
                       "+---", "+Tomatoes in May.", "*** Update File: system/contacts.md", "@@",
                       " Sarah: +1-555-0100", "-Tom: +1-555-0199", "+Tom: +1-555-0200",
                       "*** Delete File: reference/notes.md", "*** End Patch", ""])
    (template / "change.patch").write_text(patch)
    total, _ = cut_everywhere(
        tmp_path, template, ["git", "memory-patch", "-m", "garden and Tom", "../change.patch"], "garden and Tom",
        {"reference/garden.md": "---\ndescription: Garden\n---\nTomatoes in May.\n",
         "system/contacts.md": memfile("People I know", "Sarah: +1-555-0100\nTom: +1-555-0200\n")})
    assert total > 20


def test_a_dream_merge_survives_a_power_cut(tmp_path: Path, template: Path) -> None:
    repo = template / "mem"
    write(repo, "reference/notes.md", "---\r\ndescription: Notes\r\n---\r\n- alpha  \r\n- beta\r\n- alpha\r\n")
    commit_all(repo, "messy notes")

    def merged(outcome: Outcome) -> bool:
        return outcome.proc is not None and outcome.proc.returncode == 0 and '"merged"' in outcome.proc.stdout

    total, _ = cut_everywhere(tmp_path, template, ["git", "dream", "--json", "--agent", "builtin:tidy"],
                              "merge(dream)", {"reference/notes.md": "---\ndescription: Notes\n---\n- alpha\n- beta\n"},
                              answered_by=merged)
    assert total > 50


def test_a_sync_that_fetched_pushed_and_replayed_survives(tmp_path: Path, template: Path) -> None:
    """The server is another machine (outside the filesystem that loses power): what the
    cut may take is this side's fetch, replay and the record of the push."""
    server = tmp_path / "server.git"
    git("init", "-q", "--bare", str(server), cwd=tmp_path)
    repo = template / "mem"
    git("remote", "add", "origin", str(server), cwd=repo)
    git("push", "-q", "-u", "origin", "main", cwd=repo)
    other = tmp_path / "other"
    git("clone", "-q", str(server), str(other), cwd=tmp_path)
    write(other, "reference/theirs.md", memfile("Theirs", "from another agent\n"))
    commit_all(other, "their change")
    git("push", "-q", "origin", "main", cwd=other)
    assert memory("create", "reference/mine.md", "mine", "-d", "Mine", "-m", "my change", cwd=repo).returncode == 0
    pristine = tmp_path / "server-before.git"
    shutil.copytree(server, pristine)

    def reset_server() -> None:
        shutil.rmtree(server)
        shutil.copytree(pristine, server)

    def pushed(outcome: Outcome) -> bool:
        return outcome.proc is not None and outcome.proc.returncode == 0 and "pushed" in outcome.proc.stdout

    total, _ = cut_everywhere(tmp_path, template, ["git", "memory", "sync"], "their change",
                              {"reference/theirs.md": memfile("Theirs", "from another agent\n"),
                               "reference/mine.md": memfile("Mine", "mine\n")},
                              answered_by=pushed, before_each=reset_server)
    assert total > 20


def test_control_without_durability_loses_an_acknowledged_edit(tmp_path: Path, template: Path) -> None:
    git("config", "memory.durable", "false", cwd=template / "mem")
    for key in ("core.fsync", "core.fsyncMethod"):  # and git's defaults, as before issue 36
        git("config", "--unset", key, cwd=template / "mem")
    cut = PowerCut(tmp_path / "pc")
    cut.prepare(template)
    outcome = cut.run(["git", "memory", "str_replace", "system/contacts.md", "0100", "0111", "-m", "Sarah moved"],
                      cwd="mem")
    assert outcome.proc is not None and "committed" in outcome.proc.stdout  # it answered
    subjects = git("log", "--format=%s", "main", cwd=outcome.image / "mem").stdout.splitlines()
    assert "Sarah moved" not in subjects  # and the power cut took it back
