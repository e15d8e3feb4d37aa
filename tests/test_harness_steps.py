"""The step counter, which concurrent Stop hooks never lose a step of."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from conftest import git
from dreamkit import common_dir
from gitmemfs.dream import trigger


def test_concurrent_stop_hooks_lose_no_step(repo: Path, tmp_path: Path) -> None:
    """Every step is due (dream.every 1) and none can start (the memory is dirty), so
    each hook takes the count and hands it back: concurrent hooks must add to it, not
    write their own count over another's."""
    git("config", "dream.trigger", "steps", cwd=repo)
    git("config", "dream.every", "1", cwd=repo)
    (repo / "scratch.txt").write_text("not committed\n")
    transcript = tmp_path / "session.jsonl"
    transcript.write_text(json.dumps({"type": "user", "message": {"role": "user", "content": "hi"}}) + "\n")
    payload = json.dumps({"session_id": "s1", "transcript_path": str(transcript), "cwd": str(tmp_path),
                          "hook_event_name": "Stop"})
    count = 12
    procs = [subprocess.Popen(["git", "memory", "--memory-dir", str(repo), "hook", "claude-code", "stop"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              cwd=tmp_path) for _ in range(count)]
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write(payload)
        proc.stdin.close()
    answers = []
    for proc in procs:
        assert proc.wait(timeout=120) == 0, proc.stderr.read() if proc.stderr else ""
        assert proc.stdout is not None
        answers.append(proc.stdout.read())
    assert trigger.read_steps(str(common_dir(repo))) == count
    said = [json.loads(a)["systemMessage"] for a in answers if a.strip()]
    assert said and all("uncommitted changes" in s for s in said), answers  # (once: best effort across processes)
    assert not os.path.exists(common_dir(repo) / "dream" / "logs" / "background.log"), "no dream was started"
