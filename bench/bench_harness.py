"""The harness hooks `git memory install claude-code` writes, run as Claude Code runs
them (the installed command line through a shell, the event's JSON on stdin), from the
package as users install it (bench/common.py `installed`): SessionStart on a 1,000-file
memory (the compiled memory is its answer), both when the memory is as the last
session start left it and right after a commit to it, and Stop when no dream is due
(the step is counted, trigger `steps`).

The hooks and their floors run interleaved, one of each per round, so all see the
same load: the budgeted figures are medians, the best of the same rounds is shown
beside them. The floors are what no hook can beat: the shell starting the venv's
Python with nothing to import, and starting one git."""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import time

from common import installed, median_ms, memory_repo, sh

FIGURES = {
    "hook_session_start_1000_ms": (150, "ms", "Claude Code SessionStart hook, 1,000 files, memory as the last "
                                              "start left it (median)"),
    "hook_session_start_changed_1000_ms": (150, "ms", "the same right after a commit to the memory (median)"),
    "hook_stop_ms": (50, "ms", "Claude Code Stop hook: a step counted, no dream due (median)"),
    "hook_session_start_best_ms": (None, "ms", "best SessionStart (unchanged) of the same rounds"),
    "hook_session_start_changed_best_ms": (None, "ms", "best SessionStart after a commit of the same rounds"),
    "hook_stop_best_ms": (None, "ms", "best Stop of the same rounds"),
    "hook_floor_ms": (None, "ms", "floor, same rounds: sh -c \"the venv's python -I -S -c pass\" (median)"),
    "hook_git_floor_ms": (None, "ms", "floor, same rounds: sh -c \"git rev-parse HEAD\" (median)"),
    "hook_compile_1000_ms": (None, "ms", "for scale, same run: git memory compile of that memory"),
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
    python = os.path.join(env["PATH"].split(os.pathsep)[0], "python")

    def timed(command: str) -> float:
        start = time.perf_counter()
        proc = subprocess.run(command, shell=True, input=payload, capture_output=True, text=True, cwd=workdir,
                              env=env)
        took = (time.perf_counter() - start) * 1000
        if proc.returncode != 0:
            raise RuntimeError(f"{command} failed: {proc.stderr}")
        return took

    def commit(i: int) -> None:  # one memory edit, as a session makes them (not timed)
        with open(os.path.join(repo, "reference", "bulk", "d000", "note00000.md"), "a") as fh:
            fh.write(f"Remembered in round {i}.\n")
        sh("git", "commit", "-q", "--no-verify", "-am", f"round {i}", cwd=repo, env=env)

    commands = {"start": hooks["SessionStart"][-1]["hooks"][0]["command"],
                "stop": hooks["Stop"][-1]["hooks"][0]["command"],
                "floor": f"{python} -I -S -c pass", "git": f"git -C {repo} rev-parse HEAD"}
    samples: dict[str, list[float]] = {name: [] for name in (*commands, "changed")}
    for i in range(-1, max(repeat, 15)):  # round -1 warms the page cache and the caches
        round_ = {name: timed(command) for name, command in commands.items()}
        commit(i)
        round_["changed"] = timed(commands["start"])
        if i >= 0:
            for name, took in round_.items():
                samples[name].append(took)
    med = {name: statistics.median(values) for name, values in samples.items()}
    return {"hook_session_start_1000_ms": med["start"], "hook_session_start_changed_1000_ms": med["changed"],
            "hook_stop_ms": med["stop"], "hook_session_start_best_ms": min(samples["start"]),
            "hook_session_start_changed_best_ms": min(samples["changed"]),
            "hook_stop_best_ms": min(samples["stop"]), "hook_floor_ms": med["floor"],
            "hook_git_floor_ms": med["git"],
            "hook_compile_1000_ms": median_ms(lambda _: sh("git", "memory", "compile", cwd=repo, env=env), repeat)}
