"""The order of one durable edit's syscalls, as strace sees them (issue 36).

Data written, fsynced, renamed, its folder fsynced; then git's commit, its objects and
its ref fsynced by git, the ref's folder by us; and only then the answer on stdout.
A change that reorders any of it fails here.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import git

pytestmark = pytest.mark.skipif(shutil.which("strace") is None,
                                reason="strace is not installed (apt-get install strace; .ci/run does)")

CALLS = "trace=openat,write,fsync,fdatasync,rename,renameat,renameat2,link,linkat"


def trace(mem: Path, tmp_path: Path, old: str = "0100", new: str = "0111") -> list[str]:
    """One str_replace under `strace -f -y` (descriptors shown with their paths)."""
    out = tmp_path / "strace.out"
    proc = subprocess.run(["strace", "-f", "-qq", "-y", "-e", CALLS, "-o", str(out), "git", "memory",
                           "str_replace", "system/contacts.md", old, new, "-m", "Sarah moved"],
                          cwd=mem, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "committed" in proc.stdout, proc.stderr
    return out.read_text().splitlines()


# strace splits a call that another process or thread interrupts (a detached `git
# maintenance` is starting beside the edit): "fsync(4</x> <unfinished ...>", then
# "<... fsync resumed>) = 0". A call's line ends either way.
END = r"(?:\)| <unfinished \.\.\.>)"


def first(lines: list[str], pattern: str, after: int = -1) -> int:
    rx = re.compile(pattern.replace(r">\)", ">" + END))
    for i, line in enumerate(lines):
        if i > after and rx.search(line):
            return i
    raise AssertionError(f"no {pattern!r} after line {after} in the trace:\n" + "\n".join(lines[after + 1:][:80]))


def test_an_edit_is_on_disk_before_it_answers(mem: Path, tmp_path: Path) -> None:
    lines = trace(mem, tmp_path)
    tmp = r"\.memory-write-[0-9a-f]+"
    journal = first(lines, r"rename\(.*memory-journal\.json\.tmp")
    journal_dir = first(lines, r"fsync\(\d+</[^>]*/\.git>\)", journal)
    data = first(lines, rf"write\(\d+</[^>]*{tmp}>", journal_dir)
    synced = first(lines, rf"fsync\(\d+</[^>]*{tmp}>\)", data)
    renamed = first(lines, rf'rename.*{tmp}.*/system>, "contacts\.md"', synced)
    folder = first(lines, r"fsync\(\d+</[^>]*/system>\)", renamed)
    ref = first(lines, r"rename.*refs/heads/main\.lock.*refs/heads/main", folder)
    ref_synced = first(lines, r"fsync\(\d+</[^>]*\.git/refs/heads>\)", ref)
    answer = first(lines, r"write\(1<.*committed", ref_synced)
    assert journal < journal_dir < data < synced < renamed < folder < ref < ref_synced < answer
    # git fsyncs the commit's objects before it moves the ref (core.fsync=committed)
    objects = [i for i, line in enumerate(lines[:ref]) if re.search(r"fsync\(\d+</[^>]*\.git/objects/", line)]
    assert objects, "git fsynced no object before the ref"


def test_memory_durable_false_adds_no_fsync_of_ours(mem: Path, tmp_path: Path) -> None:
    """No fsync of the journal, the working file or any folder (git never fsyncs a
    folder); git's own core.fsync, as init wrote it, is git's business."""
    git("config", "memory.durable", "false", cwd=mem)
    ours = re.compile(r"fsync\(\d+</[^>]*(memory-journal|\.memory-write-|/system>|/heads>|/\.git>)")
    assert not [line for line in trace(mem, tmp_path) if ours.search(line)]
    git("config", "--unset", "core.fsync", cwd=mem)
    git("config", "--unset", "core.fsyncMethod", cwd=mem)
    assert not [line for line in trace(mem, tmp_path, "0111", "0122") if re.search(r"\bf(data)?sync\(", line)]
