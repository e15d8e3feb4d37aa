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
    "hook_compile_1000_ms": (None, "ms", "for scale, same run: git memory compile of that memory"),
    "hook_floor_ms": (None, "ms", "for scale, same run: the venv's python -I -S -c pass"),
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

    python = os.path.join(env["PATH"].split(os.pathsep)[0], "python")
    return {"hook_session_start_1000_ms": median_ms(lambda _: hook("SessionStart"), repeat),
            "hook_stop_ms": median_ms(lambda _: hook("Stop"), repeat),
            "hook_compile_1000_ms": median_ms(lambda _: sh("git", "memory", "compile", cwd=repo, env=env), repeat),
            "hook_floor_ms": median_ms(lambda _: sh(python, "-I", "-S", "-c", "pass", cwd=repo, env=env), repeat)}
