"""Dreams whose base moved underneath them: replayed onto the new main
(`merged_after_rebase`), resolved by the agent with dream.resolve=agent
(`merged_after_resolve`), or kept (`merge_conflict`) with the one command that merges
or drops them in `git dream list`."""
from __future__ import annotations

import json
from pathlib import Path

from conftest import git, head, memory, snapshot
from dreamkit import (
    agent,
    assert_cleaned_up,
    finish,
    kept,
    landlock,
    log_of,
    refs,
    running_id,
    show,
    start_dream,
)

pytestmark = landlock


def _moved_dream(repo: Path, tmp_path: Path, script: str, *args: str, meanwhile: list[list[str]]) -> dict:
    """Run the agent `script`; while it waits, make the memory commits `meanwhile`."""
    flag = tmp_path / "go"
    proc = start_dream(repo, "--agent", agent(script, str(flag), *args))
    running_id(repo)
    for command in meanwhile:
        proc_mem = memory(*command, cwd=repo)
        assert proc_mem.returncode == 0, proc_mem.stderr
    flag.touch()
    return finish(proc)


COFFEE = ["str_replace", "system/human.md", "Nothing recorded yet.", "The user drinks coffee.", "-m", "Record coffee"]


def test_non_overlapping_changes_merge_without_a_person(repo: Path, tmp_path: Path) -> None:
    out = _moved_dream(repo, tmp_path, "upstream_twice.sh", meanwhile=[
        ["create", "notes/meanwhile.md", "Written while dreaming.", "-d", "Parallel note", "-m", "Meanwhile"]])
    assert out["_code"] == 0 and out["status"] == "merged", out
    assert (repo / "notes/meanwhile.md").exists() and (repo / "notes/dream.md").exists()
    assert_cleaned_up(repo)


def test_conflict_is_replayed_onto_the_new_main_and_merges(repo: Path, tmp_path: Path) -> None:
    # main gets the dream's first change too (same patch), then refines that line: merging the
    # dream conflicts, replaying it drops the commit main has and applies the rest cleanly.
    out = _moved_dream(repo, tmp_path, "upstream_twice.sh", meanwhile=[
        ["str_replace", "system/human.md", "Nothing recorded yet.", "The user drinks tea.", "-m", "Tea"],
        ["str_replace", "system/human.md", "The user drinks tea.", "The user drinks green tea.", "-m", "Green"]])
    assert out["_code"] == 0 and out["status"] == "merged_after_rebase", out
    assert out["merged"] is True and out["kept_ref"] is None
    human = (repo / "system/human.md").read_text()
    assert "The user drinks green tea." in human
    assert (repo / "notes/dream.md").exists()
    body = git("log", "-1", "--format=%B", cwd=repo).stdout
    assert f"Dream-Id: {out['id']}" in body and "Dream-Rebased-From: " in body
    assert git("log", "-1", "--format=%s", "HEAD^2", cwd=repo).stdout.strip() == "Dream note"
    assert git("rev-list", "--count", "HEAD^1..HEAD^2", cwd=repo).stdout.strip() == "1", "the upstream one dropped"
    assert "replaying the dream's commits" in log_of(out)
    assert kept(repo, out["id"]) is None
    assert_cleaned_up(repo)


def test_overlap_without_resolve_is_kept_and_listed(repo: Path, tmp_path: Path) -> None:
    out = _moved_dream(repo, tmp_path, "resolve.sh", meanwhile=[COFFEE])
    assert out["_code"] == 1 and out["status"] == "merge_conflict", out
    assert out["rebase"]["conflicts"] == ["system/human.md"], "the replay was tried and conflicted too"
    listed = memory_list(repo)
    run = next(r for r in listed["runs"] if r["id"] == out["id"])
    assert run["why"].startswith("merge_conflict: the dream conflicts with newer memory in system/human.md")
    assert run["merge_command"] == f"git dream finish {out['id']} --merge"
    assert run["drop_command"] == f"git dream drop {out['id']}"
    text = git("dream", "list", cwd=repo).stdout
    assert text.splitlines() == [
        f"{out['id']}    1 commit(s)  merge_conflict: the dream conflicts with newer memory in system/human.md",
        f"    merge: git dream finish {out['id']} --merge"]
    assert_cleaned_up(repo)


def test_resolve_agent_result_merges(repo: Path, tmp_path: Path) -> None:
    git("config", "dream.resolve", "agent", cwd=repo)
    out = _moved_dream(repo, tmp_path, "resolve.sh", meanwhile=[COFFEE])
    assert out["_code"] == 0 and out["status"] == "merged_after_resolve", (out, log_of(out))
    assert out["merged"] is True and out["conflicts"] == ["system/human.md"]
    assert "The user drinks coffee and tea." in (repo / "system/human.md").read_text()
    assert git("log", "-1", "--format=%s", "HEAD^2", cwd=repo).stdout.strip() == "Reconcile: coffee and tea"
    prompt = (repo / ".git" / "dream" / "runs" / out["id"] / "resolve-prompt.md").read_text()
    assert "### system/human.md" in prompt and "<<<<<<< " in prompt and "Record that the user drinks tea" in prompt
    assert kept(repo, out["id"]) is None, "the resolution carries the dream's work"
    record = json.loads((repo / ".git" / "dream" / "runs" / out["id"] / "run.json").read_text())
    assert record["status"] == "merged_after_resolve"
    assert_cleaned_up(repo)


def test_resolve_agent_failure_keeps_the_dream_and_the_attempt(repo: Path, tmp_path: Path) -> None:
    git("config", "dream.resolve", "agent", cwd=repo)
    out = _moved_dream(repo, tmp_path, "resolve.sh", "fail", meanwhile=[COFFEE])
    before = snapshot(repo)
    assert out["_code"] == 1 and out["status"] == "merge_conflict", out
    assert out["resolve"]["status"] == "failed"
    assert "The user drinks tea." in show(repo, f"refs/dreams/kept/{out['id']}", "system/human.md")
    attempt = f"refs/dreams/extra/{out['id']}/resolve"
    assert attempt in refs(repo, "refs/dreams/extra/")
    assert "coffee and tea" in show(repo, attempt, "system/human.md")
    assert "The user drinks coffee." in (repo / "system/human.md").read_text()
    assert snapshot(repo) == before
    dropped = git("dream", "drop", out["id"], cwd=repo)
    assert dropped.returncode == 0 and not refs(repo, "refs/dreams/")


def memory_list(repo: Path) -> dict:
    proc = git("dream", "list", "--json", cwd=repo)
    return json.loads(proc.stdout)


def test_finish_merge_replays_a_kept_conflict_once_main_allows(repo: Path, tmp_path: Path) -> None:
    out = _moved_dream(repo, tmp_path, "resolve.sh", meanwhile=[COFFEE])
    assert out["status"] == "merge_conflict"
    assert memory("str_replace", "system/human.md", "The user drinks coffee.", "Nothing recorded yet.",
                  "-m", "Undo coffee", cwd=repo).returncode == 0
    merged = git("dream", "finish", out["id"], "--merge", "--json", cwd=repo, check=False)
    result = json.loads(merged.stdout)
    assert merged.returncode == 0 and result["merged"] is True, result
    assert "The user drinks tea." in (repo / "system/human.md").read_text()
    assert head(repo)
