"""`git memory redact` end to end: a secret in three files across 200 commits, a kept
dream ref, a remote and a mirror; the strings read from a file or stdin, never argv; a
record on top that names no secret; refused in every agent entry point; a kill at any
point leaves the old history or the new one, and a rerun finishes."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import cache_of, fast_import, git, head, memfile, memory, write

pytest.importorskip("git_filter_repo", reason="git-filter-repo is not installed (the redact extra)")

SECRET = "sk-live-7Hq9ZzPLxw31"
PERSON = "Jane Roe's diagnosis"


def all_objects(repo: Path) -> bytes:
    """Every object in the store, reachable or not, as bytes (trees are binary)."""
    return subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch"], cwd=repo, capture_output=True,
                          check=True).stdout


def reachable_objects(repo: Path) -> str:
    listed = git("rev-list", "--all", "--objects", cwd=repo).stdout
    oids = "".join(line.split()[0] + "\n" for line in listed.splitlines() if line.strip())
    return subprocess.run(["git", "cat-file", "--batch"], cwd=repo, input=oids.encode(), capture_output=True,
                          check=True).stdout.decode("utf-8", "replace")


def cached_bytes(repo: Path) -> bytes:
    """Every file git-memfs keeps for `repo` in the person's cache folder."""
    folder = cache_of(repo)
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


def build_history(repo: Path, commits: int) -> None:
    """`commits` commits through git fast-import: the secret enters three files at
    different points and leaves one of them again; the rest is unrelated."""
    history: list[tuple[dict[str, str], str]] = []
    for n in range(commits):
        files = {f"notes/n{n % 20:02d}.md": memfile(f"Note {n % 20}", f"entry {n}\n")}
        if n == 10:
            files["notes/keys.md"] = memfile("Keys", f"prod key {SECRET}\n")
        if n == 50:
            files["system/ops.md"] = memfile("Ops", f"rotate {SECRET} monthly\n")
        if n == 120:
            files["reference/old.md"] = memfile("Old", f"legacy {SECRET}\n")
        if n == 150:
            files["notes/keys.md"] = memfile("Keys", "moved to the vault\n")
        if n == 60:
            files["notes/private.md"] = memfile("Private", f"{PERSON}\n")
        message = f"commit {n}" + (f" (used {SECRET})" if n == 11 else "")
        history.append((files, message))
    fast_import(repo, history)


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    srv, mirror = tmp_path / "srv.git", tmp_path / "mirror.git"
    git("init", "-q", "--bare", "--initial-branch=main", str(srv), cwd=tmp_path)
    git("init", "-q", "--bare", "--initial-branch=main", str(mirror), cwd=tmp_path)
    mem = tmp_path / "mem"
    assert memory("init", "-q", str(mem), cwd=tmp_path).returncode == 0
    build_history(mem, 200)
    git("update-ref", "refs/dreams/kept/20260101000000-deadbeef", "HEAD~60", cwd=mem)
    git("remote", "add", "origin", str(srv), cwd=mem)
    git("push", "-q", "-u", "origin", "main", cwd=mem)
    git("push", "-q", str(mirror), "main", cwd=mem)
    git("config", "memory.mirrorUrl", str(mirror), cwd=mem)
    (tmp_path / "secrets.txt").write_text(f"{SECRET}\n\n{PERSON}\n")
    return {"mem": mem, "srv": srv, "mirror": mirror, "tmp": tmp_path}


def test_redact_forgets_everywhere_and_keeps_a_record(world: dict[str, Path]) -> None:
    mem, srv, mirror = world["mem"], world["srv"], world["mirror"]
    secrets = world["tmp"] / "secrets.txt"
    before_unrelated = git("log", "--format=%an %at %s", "-1", "main~199", cwd=mem).stdout
    dry = memory("--json", "redact", "--text-file", str(secrets), "--dry-run", cwd=mem)
    assert dry.returncode == 0, dry.stderr
    assert SECRET not in dry.stdout and PERSON not in dry.stdout and "Jane" not in dry.stdout
    plan = json.loads(dry.stdout)
    assert plan["occurrences"] >= 5 and len(plan["files"]) == 4
    assert {"refs/heads/main", "refs/dreams/kept/20260101000000-deadbeef"} <= set(plan["refs"])
    assert SECRET.encode() in all_objects(mem)  # a dry run changes nothing
    # what the caches keep: the search index and the compiled memory a session starts with
    assert memory("search", "rotate", cwd=mem).returncode == 0
    from gitmemfs.core.repo import open_repo
    from gitmemfs.harness import context

    assert SECRET in context.compiled(open_repo(str(mem)))  # system/ops.md is core memory
    assert SECRET.encode() in cached_bytes(mem)
    done = memory("--json", "redact", "--text-file", str(secrets), "--push", "-m", "forget the prod key",
                  cwd=mem)
    assert done.returncode == 0, done.stderr
    assert SECRET not in done.stdout + done.stderr
    out = json.loads(done.stdout)
    assert out["pushed"] == ["origin", "mirror"]
    # nothing local holds it, reachable or not; the remote and the mirror reach none
    for needle in (SECRET, PERSON):
        assert needle.encode() not in all_objects(mem)
        for bare in (srv, mirror):
            assert needle not in reachable_objects(bare)
    for repo in (mem, srv, mirror):
        assert git("fsck", "--no-progress", cwd=repo).returncode == 0
    assert git("rev-parse", "main", cwd=srv).stdout == git("rev-parse", "main", cwd=mem).stdout
    # the text is replaced, not the file: the rest of each version stays
    assert "rotate [REDACTED] monthly" in (mem / "system/ops.md").read_text()
    # unrelated history keeps its authors, dates and reasons; the kept dream ref moved too
    assert git("log", "--format=%an %at %s", "-1", "main~200", cwd=mem).stdout == before_unrelated
    kept = git("rev-parse", "refs/dreams/kept/20260101000000-deadbeef", cwd=mem).stdout.strip()
    assert SECRET not in git("show", f"{kept}:system/ops.md", cwd=mem).stdout
    # the record, naming no secret
    record = git("log", "-1", "--format=%B", cwd=mem).stdout
    assert record.startswith("forget the prod key\n") and "Memory-Op: redact" in record
    assert "Memory-Approved: redact" in record and SECRET not in record and "Jane" not in record
    assert record.count("Memory-Redacted: text sha256:") == 2
    assert "redact — forget the prod key" in memory("log", "-n", "1", cwd=mem).stdout
    assert "No memory matches" in memory("search", "--history", SECRET, cwd=mem).stdout
    assert SECRET.encode() not in cached_bytes(mem)  # the caches were forgotten, then rebuilt
    assert memory("status", cwd=mem).returncode == 0


def test_strings_come_from_stdin_never_argv_and_short_ones_are_refused(world: dict[str, Path]) -> None:
    mem = world["mem"]
    proc = memory("redact", "--text-file", "-", "--dry-run", cwd=mem, input=f"{SECRET}\n")
    assert proc.returncode == 0 and "occurrences" in proc.stdout and SECRET not in proc.stdout
    proc = memory("redact", SECRET, cwd=mem)
    assert proc.returncode == 2  # no positional string: argv never carries one
    proc = memory("redact", "--text-file", "-", cwd=mem, input="abc\n")
    assert proc.returncode == 2 and "at least 4 characters" in proc.stderr
    before = head(mem)
    write(mem, "notes/new.md", memfile("New", "dirty\n"))
    proc = memory("redact", "--text-file", "-", cwd=mem, input=f"{SECRET}\n")
    assert proc.returncode == 1 and "uncommitted changes" in proc.stderr and head(mem) == before


def test_no_agent_entry_point_redacts(world: dict[str, Path]) -> None:
    mem = world["mem"]
    before = head(mem)
    for schema in ("letta", "anthropic"):
        proc = memory("call", "--schema", schema, json.dumps({"command": "redact", "text": SECRET,
                                                              "reason": "x"}), cwd=mem)
        assert proc.returncode != 0 and json.loads(proc.stdout)["ok"] is False
    assert head(mem) == before and SECRET.encode() in all_objects(mem)


def test_a_kill_at_any_point_leaves_one_history_and_a_rerun_finishes(world: dict[str, Path]) -> None:
    mem = world["mem"]
    secrets = world["tmp"] / "secrets.txt"
    old = head(mem)
    for delay in (0.05, 0.3, 0.6, 1.0, 1.6):
        proc = subprocess.Popen(["git", "memory", "redact", "--text-file", str(secrets)], cwd=mem,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        time.sleep(delay)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
        tip = head(mem)
        if tip != old:  # the new history: not one commit of it holds the secret
            assert SECRET not in git("log", "-p", "--all", cwd=mem).stdout
        assert git("fsck", "--no-progress", cwd=mem).returncode == 0
    for _attempt in range(4):
        done = memory("redact", "--text-file", str(secrets), cwd=mem)
        # A kill inside git's own ref transaction (or gc) leaves its lock file, and a kill
        # in pack-refs its packed-refs.new too; git refuses until a person removes the file
        # its message names, and so do we.
        stale = re.search(r"Unable to create '([^']+\.lock)': File exists", done.stderr) or \
            re.search(r"unable to create file (\S+/packed-refs\.new): File exists", done.stderr)
        if done.returncode == 0 or stale is None:
            break
        os.unlink(stale.group(1))
    assert done.returncode == 0, done.stderr
    assert SECRET.encode() not in all_objects(mem)
    assert git("log", "-1", "--format=%B", cwd=mem).stdout.count("Memory-Op: redact") == 1
    assert not (mem / ".git/memory-redact.json").exists()
