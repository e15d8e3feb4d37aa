"""--auto, --background and the post-commit entry point `trigger.maybe_launch`."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import git, memory, snapshot
from dreamkit import common_dir, dream, dream_json, landlock, wait_for
from gitmemfs.core.errors import UsageError
from gitmemfs.dream import sandbox, state, trigger

KEYS = {"ok", "status", "id", "branch", "base", "head", "commits", "merged", "kept_ref", "message", "log",
        "duration_s"}


def records(repo: Path) -> list[dict]:
    dirs = state.Dirs(str(common_dir(repo)))
    return [state.load_record(dirs, i) or {} for i in state.record_ids(dirs)]


def settled(repo: Path, count: int) -> bool:
    done = [r for r in records(repo) if r.get("status") not in (None, "running")]
    return len(done) >= count and not trigger.running(str(common_dir(repo)))


def edit(repo: Path, n: int) -> None:
    assert memory("create", f"notes/n{n}.md", "x", "-d", f"Note {n}", "-m", f"Note {n}", cwd=repo).returncode == 0


def test_auto_is_not_due_unless_the_trigger_is_on(repo: Path) -> None:
    out = dream_json(repo, "--auto", "--agent", "true", code=0)
    assert out["status"] == "not_due" and "dream.trigger is 'off'" in out["message"]
    assert records(repo) == []


def auto(repo: Path, agent: str, code: int) -> dict:
    """`git dream --auto` with the trigger on only for this call: with it on while the test
    edits, the post-commit hook would start its own dream and race this one."""
    git("config", "dream.trigger", "commits", cwd=repo)
    try:
        return dream_json(repo, "--auto", "--agent", agent, code=code)
    finally:
        git("config", "dream.trigger", "off", cwd=repo)


@landlock
def test_auto_counts_memory_commits_since_the_last_consuming_dream(repo: Path) -> None:
    git("config", "dream.every", "3", cwd=repo)
    edit(repo, 1)
    git("commit", "-q", "--allow-empty", "-m", "not a memory commit", cwd=repo)
    out = auto(repo, "true", 0)
    assert out["status"] == "not_due" and "2 of 3 memory commits" in out["message"], "init + 1 edit"
    edit(repo, 2)
    assert auto(repo, "true", 0)["status"] == "no_changes"
    out = auto(repo, "true", 0)
    assert out["status"] == "not_due" and "0 of 3" in out["message"]
    for n in (3, 4, 5):
        edit(repo, n)
    assert auto(repo, "exit 1", 1)["status"] == "failed"
    held = auto(repo, "true", 0)
    assert held["status"] == "not_due" and "1 dream(s) in a row did not finish cleanly" in held["message"]
    assert "waits 5 more minute(s)" in held["message"]
    assert dream_json(repo, "--agent", "true", code=0)["status"] == "no_changes", "manual dreams are not held"
    assert "backoff" not in json.loads((common_dir(repo) / "dream" / "state.json").read_text())


def test_backoff_grows_and_caps() -> None:
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "dream"))
        path = os.path.join(tmp, "dream", "state.json")
        for failures, wait in ((1, 300), (2, 600), (4, 2400), (20, 86400)):
            with open(path, "w") as fh:
                json.dump({"backoff": {"failures": failures, "last": 1000.0}}, fh)
            assert trigger.backoff_left(tmp, now=1000.0) == (failures, wait)
            assert trigger.backoff_left(tmp, now=1000.0 + wait) == (failures, 0.0)


def test_commits_since_and_due(repo: Path) -> None:
    root, common = str(repo), str(common_dir(repo))
    assert trigger.due(root, common) == (False, 0, 25, "off")
    git("config", "dream.trigger", "commits", cwd=repo)
    git("config", "dream.every", "nonsense", cwd=repo)
    with pytest.raises(UsageError, match="dream.every must be a whole number"):  # not read as 25
        trigger.due(root, common)
    git("config", "--unset", "dream.every", cwd=repo)
    assert trigger.due(root, common) == (False, 1, 25, "commits"), "init's commit counts; unset every -> 25"
    git("config", "dream.every", "1", cwd=repo)
    assert trigger.due(root, common)[0] is True


@landlock
def test_maybe_launch_starts_a_detached_dream(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert trigger.maybe_launch(str(repo)) is False
    assert trigger.maybe_launch(str(repo), {"dream.trigger": "off"}) is False
    git("config", "dream.trigger", "commits", cwd=repo)
    git("config", "dream.every", "1", cwd=repo)
    git("config", "dream.agent", 'git memory create notes/auto.md "Auto." -d "From the hook" -m "Auto dream"',
        cwd=repo)
    monkeypatch.setenv("DREAM_ID", "20250101000000-00000000")
    assert trigger.maybe_launch(str(repo)) is False, "never from inside a dream"
    monkeypatch.delenv("DREAM_ID")
    monkeypatch.setenv("GIT_INDEX_FILE", str(repo / ".git" / "bogus-index"))  # as inside a hook
    assert trigger.maybe_launch(str(repo)) is True
    wait_for(lambda: settled(repo, 1), what="the background dream")
    assert [r["status"] for r in records(repo)] == ["merged"]
    assert (repo / "notes/auto.md").exists()
    assert (common_dir(repo) / "dream" / "logs" / "background.log").exists()
    monkeypatch.delenv("GIT_INDEX_FILE")
    assert trigger.maybe_launch(str(repo)) is False, "the merge reset the count"


@landlock
def test_background_returns_at_once_and_runs_detached(repo: Path, tmp_path: Path) -> None:
    src = tmp_path / "t.jsonl"
    src.write_text('{"kind": "user", "text": "I prefer green tea.", "source_message_id": "a"}\n')
    rel = src.relative_to(tmp_path)
    proc = dream(tmp_path, "--memory-dir", str(repo), "--background", "--json", "--from", f"transcript:{rel}",
                 "--agent", "builtin:notes")
    assert proc.returncode == 0, proc.stderr
    started = json.loads(proc.stdout)
    assert started["status"] == "started" and started["pid"] > 0 and started["ok"] is True
    assert KEYS <= set(started) and started["id"] is None and started["merged"] is False
    assert started["log"].endswith("background.log")
    wait_for(lambda: settled(repo, 1), what="the background dream")
    assert [r["status"] for r in records(repo)] == ["merged"]
    assert "Prefers green tea." in (repo / "system/human.md").read_text()


def test_background_checks_its_arguments_before_detaching(repo: Path, tmp_path: Path) -> None:
    before = snapshot(repo)
    for args, code, text in ((["--timeout", "soon"], 2, "invalid timeout"),
                             (["--to", "/"], 2, "expected a file path"),
                             (["--from", "transcript:nowhere.jsonl"], 1, "no such file"),
                             (["--agent", "builtin:nope"], 2, "unknown built-in agent")):
        proc = dream(repo, "--background", "--json", *(["--agent", "true"] if "--agent" not in args else []), *args)
        assert proc.returncode == code, (args, proc.stdout, proc.stderr)
        assert text in json.loads(proc.stdout)["error"], (args, proc.stdout)
    off = dream(repo, "--background", "--json", "--agent", "true", env={"GIT_DREAM_LANDLOCK_ABI": "0"})
    assert off.returncode == 4 and json.loads(off.stdout)["status"] == "sandbox_unavailable"
    git("config", "dream.trigger", "commits", cwd=repo)
    not_yet = dream(repo, "--background", "--json", "--auto", "--agent", "true")
    assert not_yet.returncode == 0 and json.loads(not_yet.stdout)["status"] == "not_due"
    assert snapshot(repo) == before
    assert records(repo) == [] and not (common_dir(repo) / "dream" / "logs" / "background.log").exists()


def test_running_probes_without_taking_the_lock(repo: Path) -> None:
    common = common_dir(repo)
    lock = common / "dream" / "lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    assert trigger.running(str(common)) is False
    lock.write_text(f"pid {os.getpid()} since 2025-01-01T00:00:00Z\n")
    import fcntl
    with open(lock, "r+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a dream holds it
        assert trigger.running(str(common)) is True
        fcntl.flock(fh, fcntl.LOCK_UN)
    lock.write_text("")  # released (a finished dream empties it)
    assert trigger.running(str(common)) is False
    lock.write_text("pid 4194303 since 2025-01-01T00:00:00Z\n")  # a holder that is gone
    assert trigger.running(str(common)) is False


@landlock
def test_the_lock_file_names_the_holder_only_while_held(repo: Path, tmp_path: Path) -> None:
    from dreamkit import agent, finish, running_id, start_dream
    flag = tmp_path / "go"
    proc = start_dream(repo, "--agent", agent("wait_flag.sh", str(flag)))
    running_id(repo)
    assert trigger.running(str(common_dir(repo))) is True
    flag.touch()
    assert finish(proc)["status"] == "merged"
    assert trigger.running(str(common_dir(repo))) is False
    assert (common_dir(repo) / "dream" / "lock").read_text() == ""


def test_post_commit_hook_launches_a_due_dream(repo: Path) -> None:
    """End to end: plain memory edits fire the installed post-commit hook, which
    starts the due dream in the background; the edits themselves never wait."""
    git("config", "dream.trigger", "commits", cwd=repo)
    git("config", "dream.every", "2", cwd=repo)
    git("config", "dream.agent", 'git memory create notes/dreamt.md "From the hook." -d "Dreamt" '
        '-m "Dream from the post-commit hook"', cwd=repo)
    env = {} if sandbox.probe_abi()[0] >= sandbox.MIN_ABI else {"GIT_DREAM_SANDBOX": "0"}
    for n in range(2):
        assert memory("create", f"notes/n{n}.md", "x", "-d", f"Note {n}", "-m", f"Note {n}", cwd=repo,
                      env=env).returncode == 0
    wait_for(lambda: settled(repo, 1), what="the dream the hook started")
    assert [r["status"] for r in records(repo)] == ["merged"]
    assert (repo / "notes/dreamt.md").exists()
    assert git("log", "-1", "--format=%s", cwd=repo).stdout.startswith("merge(dream):")
