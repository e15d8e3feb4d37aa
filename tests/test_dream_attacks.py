"""Agents that attack the parent memory from inside the sandbox: planted symrefs and
symlinks among the dream refs, forged and deleted objects, chmod, processes that
escape without the marker, history rewrites. After each: `main` is where it was (or
moved only by our merge), `git fsck` is clean, and the outcome says what happened."""
from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
from pathlib import Path

import pytest

from conftest import git, head, snapshot
from dreamkit import (
    agent,
    assert_cleaned_up,
    common_dir,
    dream_json,
    finish,
    kept,
    landlock,
    leftovers,
    log_of,
    refs,
    running_id,
    show,
    start_dream,
    tree_files,
    wait_for,
)
from gitmemfs.dream import pidns

pytestmark = landlock

KEYS = {"ok", "status", "id", "branch", "base", "head", "commits", "merged", "kept_ref", "message", "log",
        "duration_s"}


def fsck_clean(repo: Path) -> None:
    res = git("fsck", "--no-progress", "--no-dangling", cwd=repo, check=False)
    assert res.returncode == 0 and "invalid" not in res.stderr + res.stdout, res.stdout + res.stderr


# -- 1.1 refs that make git act on main -------------------------------------------------------

@pytest.mark.parametrize("plant", ["symref", "side-symref", "folder-link", "file-link"])
def test_planted_refs_never_touch_main(repo: Path, plant: str) -> None:
    before = snapshot(repo)
    main = head(repo)
    out = dream_json(repo, "--agent", agent("plant_ref.sh", plant))
    assert "DENIED: memory-dream-refs" in log_of(out) and f"PLANTED {plant}" in log_of(out), log_of(out)
    main_now = git("rev-parse", "-q", "--verify", "refs/heads/main", cwd=repo, check=False).stdout.strip()
    assert main_now == main, f"main is {main_now or 'gone'}"
    assert snapshot(repo) == before
    assert out["_code"] == 1 and out["status"] == "failed" and "tampered" in out["message"], out
    # The work done before the plant is kept, from the branch or the worktree's reflog.
    assert out["kept_ref"] and "notes/planted.md" in tree_files(repo, out["kept_ref"])
    folder = common_dir(repo) / "refs" / "heads" / "dream"
    assert not folder.exists() or not list(folder.iterdir())
    assert_cleaned_up(repo)
    fsck_clean(repo)


def test_parent_stays_fully_usable_while_the_agent_works(repo: Path, tmp_path: Path) -> None:
    """The agent's branch, HEAD and objects live in the run's private repository: while
    it has committed and works on, the memory's fetch, fsck, gc and log --all are fine."""
    upstream = tmp_path / "upstream.git"
    git("clone", "-q", "--bare", str(repo), str(upstream), cwd=tmp_path)
    git("remote", "add", "origin", str(upstream), cwd=repo)
    flag = tmp_path / "go"
    proc = start_dream(repo, "--agent", agent("wait_flag.sh", str(flag)))
    dream_id = running_id(repo)
    log = common_dir(repo) / "dream" / "logs" / f"{dream_id}.log"
    wait_for(lambda: "Memory str_replace committed" in log.read_text(), what="the agent's commit")
    for args in (["fetch", "-q", "origin"], ["fsck", "--no-progress"], ["log", "--all", "--oneline"],
                 ["gc", "-q"], ["worktree", "list"]):
        res = git(*args, cwd=repo, check=False)
        assert res.returncode == 0, (args, res.stderr)
    assert git("worktree", "list", "--porcelain", cwd=repo).stdout.count("worktree ") == 1
    assert not refs(repo, "refs/heads/dream/"), "no dream branch in the memory while it runs"
    flag.touch()
    out = finish(proc)
    assert out["status"] == "merged", out
    assert_cleaned_up(repo)


# -- 1.2 the object store -------------------------------------------------------------------------

def test_agent_cannot_rewrite_or_destroy_committed_objects(repo: Path) -> None:
    git("gc", "-q", cwd=repo)  # history in a pack, which the agent will try to delete
    persona = show(repo, "HEAD", "system/persona.md")
    main = head(repo)
    out = dream_json(repo, "--agent", agent("swap_object.sh"), code=0)
    log = log_of(out)
    for what in ("swap-object", "delete-pack", "alternates", "commit-graph"):
        assert f"DENIED: {what}\n" in log, f"{what} was not denied:\n{log}"
    assert "WROTE: quarantine-swap" in log, log
    assert out["status"] == "merged" and out["commits"] == 1
    assert git("rev-parse", "HEAD^1", cwd=repo).stdout.strip() == main
    assert show(repo, "HEAD", "system/persona.md") == persona
    assert show(repo, main, "system/persona.md") == persona
    assert not (common_dir(repo) / "objects" / "info" / "alternates").exists()
    assert_cleaned_up(repo)
    fsck_clean(repo)


def test_forged_object_fails_the_import_and_leaves_the_parent_alone(repo: Path) -> None:
    before = snapshot(repo)
    packs = sorted((common_dir(repo) / "objects" / "pack").glob("*"))
    out = dream_json(repo, "--agent", agent("forge_own.sh"), code=1)
    assert out["status"] == "failed" and "did not pass verification" in out["message"], out
    quarantine = Path(out["quarantine"])
    assert quarantine.is_dir() and str(quarantine) in out["message"]
    assert quarantine == common_dir(repo) / "dream" / "runs" / out["id"] / "git"
    forged = git(f"--git-dir={quarantine}", "log", "--format=%s", f"dream/{out['id']}", cwd=repo).stdout
    assert forged.startswith("Add a note"), "the agent's branch can be inspected there"
    assert snapshot(repo) == before
    assert sorted((common_dir(repo) / "objects" / "pack").glob("*")) == packs, "nothing came in"
    # The files the agent left are kept as plain files, hashed by us: the real text.
    assert out["kept_ref"] and show(repo, out["kept_ref"], "notes/forged.md").endswith("The real text.\n")
    record = json.loads((common_dir(repo) / "dream" / "runs" / out["id"] / "run.json").read_text())
    assert record["quarantine"] == str(quarantine)
    assert_cleaned_up(repo)
    fsck_clean(repo)
    listed = json.loads(subprocess.run(["git", "dream", "list", "--json"], cwd=repo, text=True,
                                       capture_output=True).stdout)["runs"]
    assert [r["id"] for r in listed] == [out["id"]]


def test_agent_objects_arrive_as_one_verified_pack(repo: Path) -> None:
    cmd = 'git memory create notes/q.md "Through the quarantine." -d "Quarantined" -m "Note via quarantine"'
    loose_before = sorted(p.name for p in (common_dir(repo) / "objects").iterdir() if len(p.name) == 2)
    out = dream_json(repo, "--agent", cmd + ' && echo "OBJDIR=$(git rev-parse --git-path objects)"', code=0)
    assert out["status"] == "merged"
    assert f"OBJDIR={common_dir(repo)}/dream/runs/{out['id']}/git/objects" in log_of(out)
    assert not (common_dir(repo) / "dream" / "runs" / out["id"] / "git").exists(), "the private repository is gone"
    branch_commit = git("rev-parse", "HEAD^2", cwd=repo).stdout.strip()
    packed = git("verify-pack", "-v", *map(str, (common_dir(repo) / "objects" / "pack").glob("*.idx")),
                 cwd=repo).stdout
    assert branch_commit in packed
    # No loose object of the agent's landed in the repository by any other way.
    loose_after = sorted(p.name for p in (common_dir(repo) / "objects").iterdir() if len(p.name) == 2)
    new_loose = set(loose_after) - set(loose_before)
    assert not any((common_dir(repo) / "objects" / d / branch_commit[2:]).exists() for d in new_loose)
    fsck_clean(repo)


# -- 1.3 processes that escape without the marker ------------------------------------------------

def test_escaped_processes_without_the_marker_are_stopped(repo: Path) -> None:
    out = dream_json(repo, "--agent", agent("escape_setsid.sh"), "--timeout", "20", code=0)
    assert out["status"] == "no_changes"
    found = re.search(r"^LEFT: (\d+) (\d+)$", log_of(out), re.M)
    assert found, log_of(out)
    left = leftovers(out["id"])
    try:
        assert not left, f"{left} outlived the dream:\n{log_of(out)}"
        if not pidns.available()[0]:  # in its own PID namespace the kernel stops them with the agent
            assert re.search(r"stopped [2-9] leftover process", log_of(out))
    finally:
        for pid in left:
            os.kill(pid, signal.SIGKILL)


# -- section 2: chmod -----------------------------------------------------------------------------

def test_chmod_and_chown_of_the_parent_are_denied(repo: Path) -> None:
    def modes() -> dict[str, int]:
        paths = [repo / "system", common_dir(repo) / "refs" / "heads", common_dir(repo) / "config",
                 repo / "system" / "human.md"]
        return {str(p): stat.S_IMODE(os.stat(p).st_mode) for p in paths}

    before = modes()
    out = dream_json(repo, "--agent", agent("chmod.sh"), code=0)
    log = log_of(out)
    for what in ("chmod-system", "chmod-refs", "chmod-config", "chown-config", "chmod-own", "python-chmod"):
        assert f"DENIED: {what}\n" in log, f"{what} was not denied:\n{log}"
    assert modes() == before
    assert out["status"] == "no_changes"


def test_allow_chmod_lets_the_agent_change_modes_in_its_checkout(repo: Path) -> None:
    git("config", "dream.sandbox.allowChmod", "true", cwd=repo)
    cmd = ("mkdir -p drafts/deep && echo idea > drafts/deep/a.md && chmod 000 drafts/deep && chmod 500 drafts "
           "&& echo CHMOD-OK")
    out = dream_json(repo, "--agent", cmd, code=1)
    assert "CHMOD-OK" in log_of(out)
    assert out["status"] == "dirty_uncommitted" and out["uncommitted"] == ["drafts/deep/a.md"]
    assert show(repo, out["kept_ref"], "drafts/deep/a.md") == "idea\n"
    assert_cleaned_up(repo)


# -- 1.6 history rewritten -------------------------------------------------------------------------

def test_orphan_branch_is_failed_kept_and_fully_reported(repo: Path) -> None:
    before = snapshot(repo)
    out = dream_json(repo, "--agent", agent("orphan.sh"), code=1)
    assert KEYS <= set(out), out
    assert out["status"] == "failed" and "rewrote history" in out["message"], out
    assert out["id"] and out["kept_ref"] == f"refs/dreams/kept/{out['id']}"
    assert "notes/a.md" in tree_files(repo, out["kept_ref"])
    assert snapshot(repo) == before
    record = json.loads((common_dir(repo) / "dream" / "runs" / out["id"] / "run.json").read_text())
    assert record["kept_ref"] == out["kept_ref"] and record["status"] == "failed"
    state = json.loads((common_dir(repo) / "dream" / "state.json").read_text())
    assert state["backoff"]["failures"] == 1
    assert_cleaned_up(repo)


def test_finish_merge_refuses_an_orphan_without_raising(repo: Path) -> None:
    out = dream_json(repo, "--agent", agent("orphan.sh"), code=1)
    before = snapshot(repo)
    done = dream_json(repo, "finish", out["id"], "--merge", code=1)
    assert done["status"] == "failed" and "does not descend" in done["message"]
    assert snapshot(repo) == before
    assert kept(repo, out["id"]) and out["kept_ref"] in refs(repo, "refs/dreams/kept/")
