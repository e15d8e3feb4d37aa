"""What each harness event does. Every answer is quick (a dream or a sync is started
detached, never run here), quiet when there is nothing to say, and never an error:
a busy, dirty, missing or offline memory is said once per session (a line in the
memory's `dream/said`) and the session goes on.

    Claude Code  session-start  the compiled memory as additionalContext (every source:
                                startup, resume, clear, compact)
                 stop           count a step; at dream.every (trigger `steps`) start
                                `git dream --from claude-code:<transcript>` in the background
                 pre-compact    trigger `compaction`: the same dream, before the compaction
                 session-end    `git memory sync` in the background, where a remote is set
                 (both)         pre-compact and session-end also compile HEAD in the
                                background for the next session-start (event `warm`)
    Codex        notify         agent-turn-complete: a step (over the session's rollout file),
                                the AGENTS.md block refreshed, then the chained notify program
"""
from __future__ import annotations

import json
import os
import sys
import time

from gitmemfs.core import detach, git
from gitmemfs.core.errors import MemfsError
from gitmemfs.dream import trigger

TYPE_CHECKING = False  # `typing` costs ~3 ms of every hook
if TYPE_CHECKING:
    from typing import Any, Mapping

SAID_FILE = os.path.join("dream", "said")
SAID_KEEP = 200  # lines kept: one per (session, reason)


class Answer:
    def __init__(self, out: dict[str, Any] | None = None, note: str = ""):
        self.out = out
        self.note = note  # said on stderr (Codex) or as Claude Code's systemMessage

    def text(self) -> str:
        out = dict(self.out or {})
        if self.note:
            out["systemMessage"] = self.note
        return json.dumps(out) if out else ""


def compiled(repo: Any) -> str:
    from gitmemfs.harness import context

    return context.compiled(repo)


def _open(memory_dir: str | None) -> Any:
    from gitmemfs.core.repo import open_repo

    return open_repo(memory_dir)


def once(repo: Any, session: str, reason: str, text: str) -> str:
    """`text` the first time this session meets `reason`, else ''. Hooks of one session
    run at the same moment (a Stop beside a PreCompact): the look and the note are made
    under a lock on the file, so only one of them says it."""
    path = os.path.join(repo.common_dir, SAID_FILE)
    key = f"{session or '-'} {reason}"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    except OSError:
        return text  # nowhere to note it: better said twice than never
    try:
        import fcntl  # only when there is something to say

        fcntl.flock(fd, fcntl.LOCK_EX)
        with os.fdopen(os.dup(fd), "r+", encoding="utf-8") as fh:
            lines = fh.read().splitlines()
            if key in lines:
                return ""
            fh.seek(0)
            fh.truncate()
            fh.write("\n".join([*lines, key][-SAID_KEEP:]) + "\n")
    except (OSError, ValueError):
        pass
    finally:
        os.close(fd)  # and the lock with it
    return text


# --no-optional-locks: a hook runs beside the agent's edits; a status refreshing the index would
# take index.lock from under a `git add` in progress (and write an index nobody asked for).
STATUS = ["--no-optional-locks", "status", "--porcelain", "-z", "--untracked-files=normal"]


def dirty(repo: Any, started: Any = None) -> bool:
    """Uncommitted changes in the memory (or a status that failed); `started`: the
    status already running (`git.start(STATUS)`)."""
    res = started.result(timeout=10) if started is not None else \
        git.run(STATUS, cwd=repo.root, check=False, timeout=10)
    return res.code != 0 or bool(res.out.strip("\0"))


def start_dream(repo: Any, source: str, session: str, why: str) -> tuple[bool, str]:
    """Start `git dream --from SOURCE` detached if it can run now: (started, what to say once)."""
    from gitmemfs.dream import lifecycle

    if trigger.running(repo.common_dir):
        return False, once(repo, session, "dream-running", f"git-memory: a dream is running; the {why} "
                           "dream waits for the next step")
    if trigger.backoff_left(repo.common_dir)[1] > 0:
        return False, once(repo, session, "backoff", "git-memory: the last dreams did not finish cleanly; "
                           "automatic dreams wait (see git dream list)")
    if dirty(repo):
        return False, once(repo, session, "dirty", f"git-memory: the memory ({repo.root}) has uncommitted "
                           f"changes; the {why} dream waits until they are committed or undone")
    refused = lifecycle.validate(repo, lifecycle.Options(source=source), os.environ)
    if refused is not None:
        return False, once(repo, session, "refused", f"git-memory: no {why} dream: {refused.message}")
    trigger.launch_detached(repo.root, repo.common_dir, ["--from", source])
    return True, ""


def _project(payload: Mapping[str, Any]) -> str | None:
    cwd = payload.get("cwd")
    return cwd if isinstance(cwd, str) and os.path.isdir(cwd) else None


def _session(payload: Mapping[str, Any]) -> str:
    for key in ("session_id", "thread-id", "thread_id"):
        value = payload.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def step(repo: Any, payload: Mapping[str, Any], source: str | None) -> str:
    cfg = trigger.settings(repo.root, _project(payload))
    if "steps" not in trigger.triggers_of(cfg):
        return ""
    every = trigger.every_of(cfg)
    due, n = trigger.bump_steps(repo.common_dir, repo.root, every)
    if not due:
        return ""
    if source is None:  # Claude Code may write the session file just after Stop: wait a little
        source = _transcript(payload, wait=2.0)
    if source is None:
        trigger.give_back_steps(repo.common_dir, repo.root, n)  # nothing to dream over yet: keep the count
        return ""
    started, said = start_dream(repo, source, _session(payload), "step")
    if not started:
        trigger.give_back_steps(repo.common_dir, repo.root, n)  # the next step tries again
    return said


def _transcript(payload: Mapping[str, Any], *, wait: float = 0.0) -> str | None:
    """The session's transcript as a dream source; with `wait`, poll (bounded) for a
    file the harness names but has not written yet (only when a dream is due)."""
    path = payload.get("transcript_path")
    if not isinstance(path, str) or not path:
        return None
    path = os.path.abspath(os.path.expanduser(path))
    deadline = time.monotonic() + wait
    while not os.path.isfile(path):
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.05)
    return f"claude-code:{path}"


def claude_code(event: str, payload: Mapping[str, Any], memory_dir: str | None) -> Answer:
    session = _session(payload)
    try:
        repo = _open(memory_dir)
    except MemfsError as exc:
        return Answer(note=f"git-memory: {exc}" if event == "session-start" else "")
    try:
        if event == "session-start":
            status = git.start(STATUS, cwd=repo.root)  # git looks at the work tree while we compile
            try:
                ctx = {"hookEventName": "SessionStart", "additionalContext": compiled(repo)}
            except BaseException:
                status.stop()
                raise
            note = once(repo, session, "dirty", f"git-memory: the memory ({repo.root}) has uncommitted "
                        "changes: they are not in this context") if dirty(repo, status) else ""
            return Answer({"hookSpecificOutput": ctx}, note)
        if event == "stop":
            return Answer(note=step(repo, payload, _transcript(payload)))
        if event == "pre-compact":
            start_warm(repo)  # SessionStart (compact) follows the summary the model now writes
            cfg = trigger.settings(repo.root, _project(payload))
            source = _transcript(payload)
            if "compaction" not in trigger.triggers_of(cfg) or source is None:
                return Answer()
            started, said = start_dream(repo, source, session, "compaction")
            if started:
                trigger.set_steps(repo.common_dir, repo.root, 0)  # this dream reads those steps too
            return Answer(note=said)
        if event == "session-end":
            start_sync(repo)
            start_warm(repo)
            return Answer()
        if event == "warm":  # started by the two above: compile HEAD now, for the next SessionStart
            compiled(repo)
            return Answer()
    except Exception as exc:  # noqa: BLE001 - a hook never fails the session
        return Answer(note=once(repo, session, "error", f"git-memory: {event}: {exc}"))
    return Answer()


def start_warm(repo: Any) -> None:
    """Compile HEAD into harness/context.py's cache in the background (`hook claude-code
    warm`), so the next SessionStart finds it there: the one after a compaction, the
    next session's first. Nothing is compiled when the cache already holds HEAD."""
    env = git.environment(scrub=True)
    env["PYTHONPATH"] = trigger.PACKAGE_PARENT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    detach.spawn([sys.executable, "-m", "gitmemfs.cli.memory", "--memory-dir", repo.root, "hook", "claude-code",
                  "warm"], cwd=repo.root, env=env)


def start_sync(repo: Any) -> bool:
    """`git memory sync` detached, when the memory has a remote; True if started."""
    if not git.run(["remote"], cwd=repo.root, check=False, timeout=10).out.strip():
        return False
    env = git.environment(scrub=True)
    env["PYTHONPATH"] = trigger.PACKAGE_PARENT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    log = os.path.join(repo.common_dir, "dream", "logs", "sync.log")
    os.makedirs(os.path.dirname(log), exist_ok=True)
    detach.spawn([sys.executable, "-m", "gitmemfs.cli.memory", "--memory-dir", repo.root, "sync"],
                 cwd=repo.root, env=env, log_path=log)
    return True


def rollout_of(codex_home: str, thread: str) -> str | None:
    """The rollout file of a Codex session (its file name ends with the thread id)."""
    import glob

    if not thread or not all(c.isalnum() or c == "-" for c in thread):
        return None
    found = sorted(glob.glob(os.path.join(glob.escape(codex_home), "sessions", "*", "*", "*",
                                          f"rollout-*{thread}.jsonl")))
    return found[-1] if found else None


def codex_notify(payload: Mapping[str, Any], memory_dir: str | None, codex_home: str) -> Answer:
    from gitmemfs.harness import codex

    if payload.get("type") != "agent-turn-complete":
        return Answer()
    try:
        repo = _open(memory_dir)
    except MemfsError as exc:
        return Answer(note=f"git-memory: {exc}")
    session = _session(payload)
    try:
        rollout = rollout_of(codex_home, session)
        said = step(repo, payload, f"codex:{rollout}" if rollout else None)
        refresh_agents(repo, os.path.join(codex_home, "AGENTS.md"), codex)
        return Answer(note=said)
    except Exception as exc:  # noqa: BLE001 - a hook never fails the session
        return Answer(note=once(repo, session, "error", f"git-memory: notify: {exc}"))


def refresh_agents(repo: Any, path: str, codex: Any) -> bool:
    """Rewrite the AGENTS.md block when the memory's HEAD moved since it was written."""
    head = git.run(["rev-parse", "-q", "--verify", "HEAD"], cwd=repo.root, check=False).out.strip()
    stamp = os.path.join(repo.common_dir, "dream", "agents-md-head")
    try:
        with open(stamp, encoding="ascii") as fh:
            if fh.read().strip() == f"{head} {path}":
                return False
    except OSError:
        pass
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        return False  # uninstalled, or never installed: not ours to create
    if codex.BEGIN not in text:
        return False
    new = codex.agents_with(text, compiled(repo))
    if new != text:
        from gitmemfs.harness import record

        record.write_file(path, new.encode())
    os.makedirs(os.path.dirname(stamp), exist_ok=True)
    with open(stamp, "w", encoding="ascii") as fh:
        fh.write(f"{head} {path}\n")
    return True


def chain(argv: list[str], payload: str) -> None:
    """Run the notify program that was set before ours, with the same argument, detached."""
    import shutil

    exe = argv[0] if os.path.isabs(argv[0]) else shutil.which(argv[0])
    if exe:
        detach.spawn([exe, *argv[1:], payload], cwd=os.getcwd(), env=dict(os.environ))
