"""One dream pass, start to finish (DESIGN §9).

    lock -> leftovers -> (--auto: due?) -> settings -> sandbox check -> parent clean
    -> source slice -> --to sync -> worktree -> prompt -> agent -> finalize
    -> cursor and --to write-back -> record

The lock (`<common>/dream/lock`, flock) is held from the first step to the last,
so two dreams never overlap and only the holder writes dream state. A run record
is written before the worktree exists; a pass killed outright is found by the
next one, which keeps whatever the agent had done at refs/dreams/kept/<id>.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Mapping

from ..errors import MemfsError, UsageError
from ..redact import redact
from ..repo import FileLock, Repo
from ..writer import WriteSession
from . import finalize, payload, runner, sandbox, sources, state, target, trigger
from . import worktree as wtmod
from .finalize import Result

DEFAULT_TIMEOUT = 1500.0
_OFF = ("0", "false", "off", "no")


@dataclass
class Options:
    agent: str | None = None
    source: str | None = None
    to: str | None = None
    instruction: str | None = None
    timeout: str | None = None
    merge: str | None = None
    no_sandbox: bool = False
    auto: bool = False
    verbose: bool = False
    progress: bool = True


def sandbox_wanted(opts: Options, env: Mapping[str, str]) -> bool:
    return not (opts.no_sandbox or (env.get("GIT_DREAM_SANDBOX", "").strip().lower() in _OFF))


def settings(repo: Repo, opts: Options, env: Mapping[str, str]) -> tuple[str, float, str]:
    """(agent spec, timeout, merge mode): flag, then environment, then git config."""
    agent = (opts.agent or env.get("GIT_DREAM_AGENT") or repo.cfg("dream.agent") or "").strip()
    if not agent:
        raise UsageError("no dream agent configured: pass --agent CMD, set $GIT_DREAM_AGENT, or "
                         "git config dream.agent CMD (builtin:tidy and builtin:notes need no LLM)")
    raw = opts.timeout if opts.timeout is not None else repo.cfg("dream.timeout")
    try:
        timeout = float(raw) if raw not in (None, "") else DEFAULT_TIMEOUT
    except ValueError:
        timeout = -1.0
    if not timeout > 0 or timeout != timeout or timeout == float("inf"):
        raise UsageError(f"invalid timeout {raw!r}: give a number of seconds greater than 0")
    merge = (opts.merge or repo.cfg("dream.merge") or "auto").strip().lower()
    if merge not in ("auto", "explicit"):
        raise UsageError(f"invalid merge mode {merge!r}: use auto or explicit")
    return agent, timeout, merge


def agent_identity(repo: Repo, env: Mapping[str, str]) -> tuple[str, str]:
    def first(*names: str) -> str:
        for name in names:
            value = (env.get(name) or "").strip()
            if value:
                return value
        return ""

    agent_id = first("AGENT_ID", "LETTA_AGENT_ID") or (repo.cfg("memory.agentId") or "").strip()
    name = first("AGENT_NAME") or (repo.cfg("memory.agentName") or "").strip() or agent_id
    return agent_id, name


class Busy(Exception):
    pass


class DreamLock:
    """The one-dream-per-repository lock; its file names the holder for the busy message."""

    def __init__(self, dirs: state.Dirs, root: str):
        dirs.ensure()
        self.dirs = dirs
        self.lock = FileLock(dirs.lock, root, timeout=0)

    def __enter__(self) -> DreamLock:
        if not self.lock.acquire(wait=False):
            try:
                with open(self.dirs.lock, encoding="utf-8") as fh:
                    holder = fh.read().strip()
            except OSError:
                holder = ""
            raise Busy(holder)
        assert self.lock.fd is not None
        os.ftruncate(self.lock.fd, 0)
        os.pwrite(self.lock.fd, f"pid {os.getpid()} since {state.utc_now()}\n".encode(), 0)
        return self

    def __exit__(self, *exc: object) -> None:
        self.lock.release()


def busy_result(repo: Repo, holder: str) -> Result:
    who = f" ({holder})" if holder else ""
    return Result("busy", message=f"git dream is already running in {repo.root}{who}; retry later")


def dream(repo: Repo, opts: Options, env: Mapping[str, str] | None = None) -> Result:
    env = os.environ if env is None else env
    dirs = state.Dirs(repo.common_dir)
    started = time.monotonic()
    try:
        with DreamLock(dirs, repo.root):
            out = _locked(repo, dirs, opts, env, started)
            if out.id is None:  # refused before a run began (a run notes itself in after())
                note_attempt(dirs, out.status)
            return out
    except Busy as exc:
        return busy_result(repo, str(exc))


def _progress_only(opts: Options):  # type: ignore[no-untyped-def]
    import sys

    def say(text: str) -> None:
        if opts.progress:
            sys.stderr.write(f"git dream: {redact(text)}\n")
    return say


def _locked(repo: Repo, dirs: state.Dirs, opts: Options, env: Mapping[str, str], started: float) -> Result:
    say = _progress_only(opts)
    recover_leftovers(repo, dirs, say)
    if opts.auto:
        is_due, n, every, mode = trigger.due(repo.root, repo.common_dir)
        if not is_due:
            if mode == "backoff":
                failures, left = trigger.backoff_left(repo.common_dir)
                why = (f"{failures} dream(s) in a row did not finish cleanly; the next automatic one waits "
                       f"{left / 60:.0f} more minute(s) (see git dream list)")
            elif mode != "commits":
                why = f"dream.trigger is {mode!r}, not 'commits'"
            else:
                why = f"{n} of {every} memory commits since the last dream"
            return Result("not_due", message=f"No dream due: {why}.")
    agent_spec, timeout, merge_mode = settings(repo, opts, env)
    command, command_env = runner.command_for(agent_spec)
    sandboxed = sandbox_wanted(opts, env)
    if sandboxed:
        problem = sandbox_problem(repo)
        if problem:
            return Result("sandbox_unavailable", message=f"{problem}. Run the agent unconfined with "
                          "--no-sandbox (or GIT_DREAM_SANDBOX=0) if you trust it.")
    # Parent preflight, under the writer lock so a half-done edit is recovered first.
    try:
        with WriteSession(repo, tool="git dream") as session:
            base = session.head
    except MemfsError as exc:
        if exc.code == 3:
            return Result("busy", message=str(exc))
        return Result("parent_dirty", message=finalize.parent_problem(exc) + " Nothing was started.")
    if base is None:
        raise MemfsError("git dream: the memory repository has no commits yet; make one first")
    chosen = None
    source = None
    if opts.source:
        source = sources.parse(opts.source)
        rows = sources.load(source)
        saved = state.load_state(dirs)["sources"].get(source.key, {})
        chosen = sources.select(source, rows, saved.get("cursor"))
        if chosen is None:
            return Result("no_payload", base=base,
                          message=f"No new transcript content to reflect on in {source.path}.",
                          extra={"source": source.key})
        for note in chosen.notes:
            say(note)
    doc = target.resolve(opts.to) if opts.to else None
    if doc is not None:
        try:
            synced = target.sync(repo, doc)
            if synced:
                say(f"synced {doc.path} into {doc.rel} ({synced[:7]})")
                base = synced
        except MemfsError as exc:
            say(f"could not sync {doc.path} into memory ({exc}); the dream may create it")
    return _run(repo, dirs, opts, env, base=base, command=command, command_env=command_env,
                agent_spec=agent_spec, timeout=timeout, merge_mode=merge_mode, sandboxed=sandboxed,
                chosen=chosen, doc=doc, started=started)


def sandbox_problem(repo: Repo) -> str | None:
    abi, reason = sandbox.probe_abi()
    if abi < sandbox.MIN_ABI:
        return reason or (f"Landlock ABI {abi} is too old for the dream sandbox (ABI {sandbox.MIN_ABI}, "
                          "Linux 5.19, is needed)")
    if (repo.cfg("extensions.refstorage") or "files").lower() != "files":
        return ("the repository stores refs in reftable, where the sandbox cannot limit the agent to its "
                "own branch")
    return None


def _run(repo: Repo, dirs: state.Dirs, opts: Options, env: Mapping[str, str], *, base: str, command: str,
         command_env: dict[str, str], agent_spec: str, timeout: float, merge_mode: str, sandboxed: bool,
         chosen: sources.Slice | None, doc: target.Target | None, started: float) -> Result:
    dream_id = state.new_id()
    run_dir = dirs.run_dir(dream_id)
    os.makedirs(run_dir, exist_ok=True)
    log = runner.Log(dirs.log(dream_id), echo_agent=opts.verbose, echo_progress=opts.progress)
    saved = state.load_state(dirs)["sources"].get(chosen.source.key, {}) if chosen else {}
    record: dict[str, Any] = {
        "id": dream_id, "status": "running", "started_at": state.utc_now(), "pid": os.getpid(),
        "base": base, "branch": state.BRANCH_PREFIX + dream_id, "agent": agent_spec, "sandbox": sandboxed,
        "merge": merge_mode, "log": log.path,
        "source": None if chosen is None else {
            "key": chosen.source.key, "start": chosen.start_id, "end": chosen.end_id,
            "messages": chosen.messages, "cursor_before": saved.get("cursor")},
        "to": None if doc is None else doc.path,
    }
    state.save_record(dirs, record)
    tmpdir = tempfile.mkdtemp(prefix=f"git-dream-{dream_id}-")
    branches_before = wtmod.refs(repo, "refs/heads/" + state.BRANCH_PREFIX)
    wt = None
    try:
        log.progress(f"{dream_id}: base {base[:7]}, agent {agent_spec}, "
                     f"{'sandboxed' if sandboxed else 'NOT sandboxed'}, timeout {timeout:g}s")
        wt = wtmod.create(repo, dirs, dream_id, base)
        log.progress(f"checked out {wt.branch} at {wt.path}")
        prompt_path, transcript_path = write_payload(repo, run_dir, base, chosen, doc, opts.instruction)
        log.progress(f"prompt ready: {prompt_path} ({os.path.getsize(prompt_path):,} bytes"
                     + (f", {chosen.messages} transcript messages" if chosen else ", no transcript") + ")")
        agent_id, agent_name = agent_identity(repo, env)
        child_env = runner.agent_env(
            worktree=wt.path, dream_id=dream_id, prompt=prompt_path, base=base, branch=wt.branch,
            agent_id=agent_id, agent_name=agent_name, tmpdir=tmpdir, transcript=transcript_path,
            extra=command_env, config={"gc.auto": "0", "maintenance.auto": "false"}, base_env=env)
        plan = None
        if sandboxed:
            writable = [wt.path, wt.admin, os.path.join(repo.common_dir, "objects"), *wtmod.sandbox_dirs(repo),
                        tmpdir]
            files: list[str] = []
            for extra in repo.cfg_all("dream.sandbox.allowWrite"):
                path = os.path.abspath(os.path.expanduser(extra.strip()))
                if os.path.isdir(path):
                    writable.append(path)
                elif os.path.isfile(path):
                    files.append(path)  # e.g. an agent CLI's ~/.claude.json
                else:
                    log.progress(f"dream.sandbox.allowWrite {path} does not exist; not granted")
            plan = runner.SandboxPlan(writable, probe=os.path.join(repo.common_dir, "config"), write_files=files)

        def on_start(pid: int) -> None:
            record["agent_pid"] = pid
            state.save_record(dirs, record)

        log.progress("running the agent")
        agent = runner.run(command, cwd=wt.path, env=child_env, prompt_file=prompt_path, log=log,
                           timeout=timeout, sandbox_plan=plan, marker=f"DREAM_ID={dream_id}", on_start=on_start)
        if agent.sandbox_error:
            log.progress(f"sandbox refused: {agent.sandbox_error}")
            out = Result("sandbox_unavailable", dream_id, wt.branch, base, base,
                         message=f"The sandbox could not confine the agent: {agent.sandbox_error}. Run it "
                                 "unconfined with --no-sandbox (or GIT_DREAM_SANDBOX=0) if you trust it.")
        else:
            log.progress(f"{agent.describe()} after {agent.duration:.1f}s"
                         + (f"; stopped {agent.killed} leftover process(es)" if agent.killed else ""))
            tampered = wtmod.tampering(wt, repo.common_dir)
            trailers = []
            if chosen:
                trailers += [f"Dream-Source: {chosen.source.key}", f"Dream-Through: {chosen.end_id}"]
            if not sandboxed:
                trailers.append("Dream-Sandbox: off")
            fin = finalize.Finalizer(repo, wt, merge_mode=merge_mode, trailers=trailers, progress=log.progress)
            out = fin.run(agent, tampered)
        side = wtmod.adopt_side_branches(repo, wt, branches_before)
        if side:
            out.extra["side_branches"] = side
            log.progress("the agent made other branches; kept at " + ", ".join(side))
        wtmod.remove(repo, wt, delete_branch=out.status != "pending")
        wt = None
    except BaseException as exc:
        # Whatever broke, the agent's work must survive: keep it, then report.
        log.progress(f"internal failure: {type(exc).__name__}: {exc}")
        if wt is not None:
            salvage(repo, wt, log.progress)
        record.update(status="failed", finished_at=state.utc_now(),
                      message=redact(f"internal failure: {exc}"))
        state.save_record(dirs, record)
        log.close()
        raise
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    out.log = log.path
    out.duration_s = time.monotonic() - started
    log.progress(f"{out.status}: {out.message}", echo=False)  # the caller prints the outcome
    after(repo, dirs, out, chosen, doc, record, log)
    log.close()
    return out


def write_payload(repo: Repo, run_dir: str, base: str, chosen: sources.Slice | None,
                  doc: target.Target | None, instruction: str | None) -> tuple[str, str | None]:
    files = payload.memory_files(repo, base)
    transcript_text = None
    transcript_path = None
    if chosen is not None:
        records = sources.normalise(chosen)
        transcript_path = os.path.join(run_dir, "transcript.json")
        state.write_json(transcript_path, records)
        transcript_text = payload.transcript_section(records, chosen.source.path, chosen.messages)
    directive = None
    if doc is not None:
        directive = payload.to_directive(doc.name, doc.agents_md, any(p == doc.rel for p, _ in files))
    text = payload.build(files, transcript=transcript_text, instruction=instruction, directive=directive)
    prompt_path = os.path.join(run_dir, "prompt.md")
    with open(prompt_path, "w", encoding="utf-8") as fh:
        fh.write(text)
    return prompt_path, transcript_path


def salvage(repo: Repo, wt: wtmod.Worktree, say: Any) -> str | None:
    """Keep whatever an interrupted run left, then remove its worktree. Never raises."""
    try:
        head = wtmod.work_head(repo, wt) or wtmod.rev(repo, wt.ref) or wt.base
        snap, _ = wtmod.snapshot(repo, wt, head, lambda: finalize.identity_env(repo),
                                 f"dream {wt.id}: files left by an interrupted run\n\nDream-Id: {wt.id}\n") \
            if os.path.isdir(wt.path) else (None, [])
        keep_sha = snap or (head if head and head != wt.base else None)
        kept = finalize.keep(repo, wt.id, keep_sha) if keep_sha else None
        wtmod.remove(repo, wt)
        return kept
    except Exception as exc:  # noqa: BLE001 - leave the folder in place rather than lose it
        say(f"could not salvage {wt.path} ({exc}); it is left in place")
        return None


def recover_leftovers(repo: Repo, dirs: state.Dirs, say: Any) -> None:
    """Runs a killed pass left behind: stop their agents, keep their work, clean up."""
    try:
        names = sorted(os.listdir(dirs.worktrees))
    except FileNotFoundError:
        names = []
    for dream_id in names:
        if not state.is_id(dream_id):
            continue
        record = state.load_record(dirs, dream_id) or {"id": dream_id}
        runner.stop_stragglers(int(record.get("agent_pid") or 0) or -1, f"DREAM_ID={dream_id}", 1.0)
        base = record.get("base") or ""
        if not base:
            res = repo.git("merge-base", "HEAD", state.BRANCH_PREFIX + dream_id, check=False)
            base = res.out.strip()
        wt = wtmod.leftover(repo, dirs, dream_id, base)
        kept = salvage(repo, wt, say)
        say(f"recovered interrupted dream {dream_id}" + (f"; its work is kept at {kept}" if kept else ""))
        record.update(status="failed", finished_at=state.utc_now(), kept_ref=kept,
                      message="Interrupted: the dream process stopped before finishing."
                              + (f" The work is kept at {kept}." if kept else ""))
        state.save_record(dirs, record)
    # A branch whose worktree is gone and that is not waiting for review: keep its work.
    res = repo.git("for-each-ref", "--format=%(refname:lstrip=3) %(objectname)", "refs/heads/dream/", check=False)
    for line in res.lines():
        dream_id, _, sha = line.partition(" ")
        record = state.load_record(dirs, dream_id) or {}
        if record.get("status") == "pending" or os.path.isdir(dirs.worktree(dream_id)):
            continue
        if sha != record.get("base") and not repo.git("rev-parse", "-q", "--verify",
                                                       state.KEPT_PREFIX + dream_id, check=False).out.strip():
            finalize.keep(repo, dream_id, sha)
        repo.git("update-ref", "-d", f"refs/heads/dream/{dream_id}", sha, check=False)


def after(repo: Repo, dirs: state.Dirs, out: Result, chosen: sources.Slice | None,
          doc: target.Target | None, record: dict[str, Any], log: runner.Log) -> None:
    """Advance the cursor, write the --to target back, and finish the record."""
    if out.status in finalize.CONSUMING:
        consume(repo, dirs, chosen.source.key if chosen else None, chosen.end_id if chosen else None,
                record.get("source", {}).get("cursor_before") if chosen else None, out.id)
        if doc is not None:
            try:
                if target.write_back(repo, doc):
                    out.extra["target_written"] = True
                    log.progress(f"wrote {doc.path}")
            except OSError as exc:
                out.extra["target_error"] = f"cannot write --to target {doc.path}: {exc.strerror}"
                out.status = "failed"
                out.message += f" But writing {doc.path} failed: {exc.strerror}."
    if doc is not None:
        out.extra.setdefault("target", doc.path)
        out.extra.setdefault("target_written", False)
    note_attempt(dirs, out.status)
    record.update(status=out.status, finished_at=state.utc_now(), head=out.head, commits=out.commits,
                  merged=out.merged, kept_ref=out.kept_ref, message=out.message,
                  duration_s=round(out.duration_s, 3), **{k: v for k, v in out.extra.items()
                                                         if k in ("problems", "conflicts", "uncommitted",
                                                                  "timed_out")})
    state.save_record(dirs, record)
    keep_ids = {r for r in state.record_ids(dirs) if (state.load_record(dirs, r) or {}).get("kept_ref")}
    state.prune(dirs, keep_ids | {out.id or ""})


def note_attempt(dirs: state.Dirs, status: str) -> None:
    """Count dreams in a row that did not consume, for the automatic trigger's backoff."""
    if status not in finalize.CONSUMING and status not in finalize.RETRY_LATER:
        return
    data = state.load_state(dirs)
    if status in finalize.CONSUMING:
        if not data.pop("backoff", None):
            return
    else:
        failures = int((data.get("backoff") or {}).get("failures", 0)) + 1
        data["backoff"] = {"failures": failures, "last": time.time(), "status": status}
    state.save_state(dirs, data)


def consume(repo: Repo, dirs: state.Dirs, source_key: str | None, end_id: str | None,
            cursor_before: str | None, dream_id: str | None) -> None:
    data = state.load_state(dirs)
    if source_key and end_id:
        entry = data["sources"].setdefault(source_key, {})
        if entry.get("cursor") == cursor_before:  # a newer dream may have moved it meanwhile
            entry.update(cursor=end_id, updated_at=state.utc_now(), dream=dream_id)
    head = repo.git("rev-parse", "-q", "--verify", "HEAD", check=False).out.strip()
    data["last_dream"] = {"id": dream_id, "head": head, "at": state.utc_now()}
    state.save_state(dirs, data)
