"""`make demo`: the main job end to end on a throwaway memory repository.

Everything happens in a temporary directory (HOME included), which is removed at
the end; the commands shown are the real ones, run through git.
"""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BOLD, DIM, RESET = ("\033[1m", "\033[2m", "\033[0m") if sys.stdout.isatty() else ("", "", "")


def say(text: str) -> None:
    print(f"\n{BOLD}{textwrap.fill(text, 88)}{RESET}")


def run(cmd: str, cwd: str, *, expect: int = 0, show: bool = True) -> str:
    if show:
        print(f"{DIM}${RESET} {cmd}")
    proc = subprocess.run(cmd, shell=True, cwd=cwd, text=True, capture_output=True)
    # Progress and refusals go to stderr, results to stdout: show them in that order.
    out = (proc.stderr + proc.stdout).rstrip()
    if show and out:
        print(textwrap.indent(out, "  "))
    if proc.returncode != expect:
        raise SystemExit(f"demo step failed (exit {proc.returncode}, expected {expect}): {cmd}")
    return proc.stdout


def main() -> int:
    started = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="git-memfs-demo-")
    try:
        home = os.path.join(tmp, "home")
        os.makedirs(home)
        with open(os.path.join(home, ".gitconfig"), "w") as fh:
            fh.write("[user]\n\tname = Demo User\n\temail = demo@example.com\n[init]\n\tdefaultBranch = main\n")
        for name in ("AGENT_ID", "LETTA_AGENT_ID", "MEMORY_DIR", "LETTA_MEMORY_DIR", "GIT_DIR"):
            os.environ.pop(name, None)
        os.environ.update(HOME=home, GIT_CONFIG_GLOBAL=os.path.join(home, ".gitconfig"),
                          GIT_CONFIG_NOSYSTEM="1", TMPDIR=tmp)
        mem = os.path.join(tmp, "memory")
        transcript = os.path.join(HERE, "session.jsonl")

        say("1. Create a memory repository. It is a plain git repo on main, with two seed files "
            "and the validating hooks installed.")
        run(f"git memory init {shlex.quote(mem)} --agent-id demo-agent --agent-name 'Demo Agent'", tmp)
        run("ls -R system", mem)

        say("2. The agent edits its memory. Every edit needs a reason, which becomes the commit subject.")
        run("git memory create system/project.md 'Working on: the git-memfs demo.' "
            "-d 'What I am working on right now' -m 'Start tracking the current project'", mem)
        run("git memory str_replace system/project.md 'the git-memfs demo' 'the git-memfs launch demo' "
            "-m 'Be precise about the project'", mem)
        run("git memory create reference/glossary.md '- MemFS: memory as files in git' "
            "-d 'Terms I use' -m 'Keep a glossary'", mem)
        run("git memory insert reference/glossary.md 2 '- Dream: a background tidy-up pass' "
            "-m 'Define dream'", mem)

        say("3. It is just git: the log shows each reason, with trailers naming the operation and paths.")
        run("git log --format='%h %an: %s%n%(trailers:only,unfold)' -3", mem)

        say("4. Plain git is checked by the same rules. A file without a description is refused "
            "by the pre-commit hook, and nothing is committed.")
        with open(os.path.join(mem, "system", "broken.md"), "w") as fh:
            fh.write("---\nlimit: 100\n---\nno description here\n")
        run("git add system/broken.md && git commit -m 'sneak in a broken file'", mem, expect=1)
        run("git reset -q && rm system/broken.md && git status --short", mem)

        say("5. What the agent sees: the system-prompt projection, built from the committed tree.")
        run("git memory compile", mem)

        say("6. Dream: a background pass reads the session transcript and updates memory on its own "
            "branch, in its own worktree, inside a sandbox. The built-in offline agent 'builtin:notes' "
            "picks out what the user asked to remember and their preferences.")
        run(f"head -c 600 {shlex.quote(transcript)}; echo", mem)
        sandbox = "" if _landlock() else " --no-sandbox"
        if sandbox:
            say("(This kernel has no Landlock, so the demo runs the agent without the sandbox.)")
        before = run("git rev-parse --short HEAD", mem, show=False).strip()
        run(f"git dream --agent builtin:notes --from transcript:{shlex.quote(transcript)}{sandbox}", mem)

        say("7. The result, merged into main after passing git memory check:")
        run(f"git log --format='%h %s' {before}..HEAD", mem)
        run(f"git diff {before} HEAD -- system/human.md", mem)
        run("git worktree list", mem)

        say(f"Done in {time.monotonic() - started:.1f}s. Everything lived in {tmp}, now removed.")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _landlock() -> bool:
    try:
        sys.path.insert(0, os.path.join(ROOT, "lib"))
        from gitmemfs.dream import sandbox

        return sandbox.probe_abi()[0] >= sandbox.MIN_ABI
    except Exception:  # noqa: BLE001 - the demo only needs a yes/no
        return False


if __name__ == "__main__":
    sys.exit(main())
