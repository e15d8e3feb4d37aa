"""The harness hooks `git memory install claude-code` writes, run as Claude Code runs
them (the installed command line through a shell, the event's JSON on stdin), from the
package as users install it (bench/common.py `installed`): SessionStart on a 1,000-file
memory (the compiled memory is its answer) and Stop when no dream is due (the step is
counted, trigger `steps`)."""
from __future__ import annotations

import json
import os
import subprocess

from common import installed, median_ms, memory_repo, sh

FIGURES = {
    "hook_session_start_1000_ms": (150, "ms", "Claude Code SessionStart hook: the compiled memory, 1,000 files"),
    "hook_stop_ms": (50, "ms", "Claude Code Stop hook: a step counted, no dream due"),
}


def run(workdir: str, repeat: int) -> dict[str, float]:
    env = dict(installed(workdir))
    home = os.path.join(workdir, "harness-home")
    os.makedirs(home)
    env["CLAUDE_CONFIG_DIR"] = os.path.join(home, ".claude")
    env["XDG_STATE_HOME"] = os.path.join(home, ".state")
    repo = memory_repo(os.path.join(workdir, "mem"), 1000, env=env)
    sh("git", "config", "dream.trigger", "steps", cwd=repo)
    sh("git", "config", "dream.every", "1000000", cwd=repo)
    sh("git", "memory", "--memory-dir", repo, "install", "claude-code", cwd=workdir, env=env)
    with open(os.path.join(env["CLAUDE_CONFIG_DIR"], "settings.json")) as fh:
        hooks = json.load(fh)["hooks"]
    payload = json.dumps({"session_id": "bench", "cwd": workdir, "source": "startup",
                          "transcript_path": os.path.join(workdir, "none.jsonl")})

    def hook(event: str) -> None:
        command = hooks[event][-1]["hooks"][0]["command"]
        proc = subprocess.run(command, shell=True, input=payload, capture_output=True, text=True, cwd=workdir,
                              env=env)
        if proc.returncode != 0:
            raise RuntimeError(f"{event} hook failed: {proc.stderr}")

    return {"hook_session_start_1000_ms": median_ms(lambda _: hook("SessionStart"), repeat),
            "hook_stop_ms": median_ms(lambda _: hook("Stop"), repeat)}
