"""What a dream finds when an earlier one was killed, and how a run that breaks inside
`git dream` itself still ends in an outcome: a stale pid never hits a stranger, a
half-made worktree is not mistaken for work, a pass killed after its merge still
moves its cursor, and an internal error keeps the work and says `failed`."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import LIB, ROOT, git, head, snapshot
from dreamkit import alive, assert_cleaned_up, common_dir, dream_json, kept, landlock, tree_files, wait_for

pytestmark = landlock

SESSION = ROOT / "lib" / "gitmemfs" / "examples" / "session.jsonl"  # the file, not the checkout's link to it
FAKE_ID = "20250101000000-deadbeef"


def record_path(repo: Path, dream_id: str) -> Path:
    return common_dir(repo) / "dream" / "runs" / dream_id / "run.json"


def plant_record(repo: Path, dream_id: str, **fields: object) -> None:
    path = record_path(repo, dream_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"id": dream_id, "status": "running", "base": head(repo),
                                "branch": f"dream/{dream_id}", **fields}))


def start_time(pid: int) -> int:
    with open(f"/proc/{pid}/stat", "rb") as fh:
        return int(fh.read().rsplit(b")", 1)[1].split()[19])


# -- 1.4 a stale agent pid -----------------------------------------------------------------------

def test_recovery_never_kills_an_unrelated_process_group(repo: Path) -> None:
    """The record names a pid that now leads someone else's process group."""
    victim = subprocess.Popen(["sleep", "1000"], start_new_session=True)
    try:
        (common_dir(repo) / "dream" / "worktrees" / FAKE_ID).mkdir(parents=True)
        plant_record(repo, FAKE_ID, agent_pid=victim.pid, agent_start=1)
        out = dream_json(repo, "--agent", "true", code=0)
        assert out["status"] == "no_changes" and "recovered interrupted dream" in out["_stderr"]
        time.sleep(0.2)
        assert alive(victim.pid), "an unrelated process group was killed"
        assert json.loads(record_path(repo, FAKE_ID).read_text())["status"] == "failed"
        assert_cleaned_up(repo)
    finally:
        victim.kill()
        victim.wait()


def test_recovery_stops_what_is_left_of_the_agents_group(repo: Path) -> None:
    """The agent's shell is gone; a child it left in its group (without the marker) is not."""
    shell = subprocess.Popen(["sh", "-c", "sleep 1000 >/dev/null 2>&1 & echo $!"], start_new_session=True, text=True,
                             stdout=subprocess.PIPE, env={"PATH": os.environ["PATH"]})
    child = int(shell.communicate()[0])
    try:
        assert alive(child) and os.getpgid(child) == shell.pid
        (common_dir(repo) / "dream" / "worktrees" / FAKE_ID).mkdir(parents=True)
        plant_record(repo, FAKE_ID, agent_pid=shell.pid, agent_start=12345)
        dream_json(repo, "--agent", "true", code=0)
        wait_for(lambda: not alive(child), timeout=5, what="the agent's leftover child to stop")
    finally:
        if alive(child):
            os.kill(child, signal.SIGKILL)


# -- 1.7 a run that died while its worktree was being made --------------------------------------

def test_a_half_made_worktree_is_not_kept_as_work(repo: Path) -> None:
    path = common_dir(repo) / "dream" / "worktrees" / FAKE_ID
    git("worktree", "add", "-q", "-b", f"dream/{FAKE_ID}", str(path), "HEAD", cwd=repo)
    for name in ("system/human.md", "system/persona.md"):  # the checkout never finished
        (path / name).unlink()
    plant_record(repo, FAKE_ID)  # no agent_pid: the agent never started
    before = snapshot(repo)
    out = dream_json(repo, "--agent", "true", code=0)
    assert out["status"] == "no_changes"
    assert kept(repo, FAKE_ID) is None, "a commit deleting every file was kept"
    assert snapshot(repo)[0] == before[0]
    assert_cleaned_up(repo)


def test_an_interrupted_agents_files_are_still_kept(repo: Path) -> None:
    path = common_dir(repo) / "dream" / "worktrees" / FAKE_ID
    git("worktree", "add", "-q", "-b", f"dream/{FAKE_ID}", str(path), "HEAD", cwd=repo)
    (path / "notes").mkdir()
    (path / "notes" / "draft.md").write_text("---\ndescription: Draft\n---\nhalf a thought\n")
    plant_record(repo, FAKE_ID, agent_pid=2 ** 22 - 1)  # it ran; it is long gone
    dream_json(repo, "--agent", "true", code=0)
    assert kept(repo, FAKE_ID) and tree_files(repo, f"refs/dreams/kept/{FAKE_ID}") == \
        sorted(tree_files(repo, "HEAD") + ["notes/draft.md"])


# -- 1.8 killed after the merge -------------------------------------------------------------------

def test_a_pass_killed_after_its_merge_still_consumes_its_slice(repo: Path) -> None:
    state_file = common_dir(repo) / "dream" / "state.json"
    first = dream_json(repo, "--from", f"transcript:{SESSION}", "--agent", "builtin:notes", code=0)
    assert first["status"] == "merged"
    # As if the process died between the fast-forward and its bookkeeping:
    state_file.write_text(json.dumps({"schema": 1, "sources": {}}))
    record = json.loads(record_path(repo, first["id"]).read_text())
    record.update(status="running", merged=False, head=None)
    record_path(repo, first["id"]).write_text(json.dumps(record))
    again = dream_json(repo, "--from", f"transcript:{SESSION}", "--agent", "builtin:notes", code=0)
    assert "it had merged" in again["_stderr"], again["_stderr"]
    assert again["status"] == "no_payload", again
    cursor = json.loads(state_file.read_text())["sources"][f"transcript:{SESSION}"]
    assert cursor["dream"] == first["id"]
    assert json.loads(record_path(repo, first["id"]).read_text())["status"] == "merged"


# -- 1.6 an internal error after the worktree exists ------------------------------------------------

DRIVER = """
import json, sys
sys.path.insert(0, {lib!r})
from gitmemfs.dream import finalize, lifecycle
from gitmemfs.core.repo import open_repo

def broken(self, *args, **kwargs):
    raise RuntimeError("injected failure in finalize")

finalize.Finalizer.run = broken
out = lifecycle.dream(open_repo(sys.argv[1]), lifecycle.Options(agent=sys.argv[2], progress=False))
print(json.dumps(out.as_dict()))
"""


def test_an_internal_error_is_a_failed_outcome_that_keeps_the_work(repo: Path) -> None:
    before = snapshot(repo)
    cmd = 'git memory create notes/w.md "Work." -d "Work before the crash" -m "Work before the crash"'
    proc = subprocess.run([sys.executable, "-c", DRIVER.format(lib=str(LIB)), str(repo), cmd],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["status"] == "failed" and "injected failure in finalize" in out["message"]
    assert out["id"] and out["kept_ref"] == f"refs/dreams/kept/{out['id']}"
    assert "notes/w.md" in tree_files(repo, out["kept_ref"])
    record = json.loads(record_path(repo, out["id"]).read_text())
    assert record["status"] == "failed" and record["kept_ref"] == out["kept_ref"]
    assert json.loads((common_dir(repo) / "dream" / "state.json").read_text())["backoff"]["failures"] == 1
    assert snapshot(repo) == before
    assert_cleaned_up(repo)
