"""One dream pass, start to finish (DESIGN §9). `dream()` reads as the sequence:

    lock      DreamLock: one pass per repository, held from the first step to the last
    prepare   leftovers, (--auto: due?), settings, sandbox check, parent clean, source
              slice, --to sync, attributes check: a `Pass`, or an outcome that ends here
    worktree  the agent's private checkout on dream/<id>
    payload   the prompt (and transcript file), secrets masked
    agent     the command, confined, with its allow-listed environment
    finalize  refs disarmed, objects imported (recovery.gather), validated
    merge/keep   merged, pending, or kept at refs/dreams/kept/<id>; cursor and --to
              write-back; the run record

The lock (`<common>/dream/lock`, flock) means two dreams never overlap and only
the holder writes dream state. A run record
is written before the worktree exists; a pass killed outright is found by the
next one, which keeps whatever the agent had done at refs/dreams/kept/<id> (or,
if it had merged, finishes its bookkeeping). Once the record exists, any error
ends in a `failed` outcome with the work kept, never in a bare exception.
"""
from __future__ import annotations

import os
import platform
import shutil
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from gitmemfs.core import snapshot as snap
from gitmemfs.core.errors import EnvironmentProblem, MemfsError, UsageError
from gitmemfs.core.redact import mask_secrets, redact
from gitmemfs.core.repo import FileLock, Repo
from gitmemfs.core.visible import visible
from gitmemfs.core.writer import WriteSession
from gitmemfs.dream import (
    environment,
    finalize,
    masking,
    payload,
    readable,
    recovery,
    resolve,
    runner,
    sandbox,
    sources,
    state,
    target,
    trigger,
)
from gitmemfs.dream import worktree as wtmod
from gitmemfs.dream.finalize import Result

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
    notices: bool = True  # recovery notes: still on stderr with --json (not with -q)
    reread: bool = False  # --reread: the source again from where the last consuming dream began


@dataclass
class Pass:
    """What `prepare` decided, for the steps after it: one object instead of fourteen
    parameters."""
    repo: Repo
    dirs: state.Dirs
    opts: Options
    env: Mapping[str, str]
    base: str
    command: str
    command_env: dict[str, str]
    agent_spec: str
    timeout: float
    merge_mode: str
    sandboxed: bool
    chosen: sources.Slice | None
    doc: target.Target | None
    started: float
    listing: snap.Snapshot


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


def validate(repo: Repo, opts: Options, env: Mapping[str, str]) -> Result | None:
    """Everything that can be judged before a pass starts: usage errors raise, a
    missing sandbox is a Result (used by --background before it detaches, too)."""
    agent_spec, _timeout, _merge = settings(repo, opts, env)
    runner.command_for(agent_spec)
    if opts.source:
        source = sources.parse(opts.source, project_of(repo, env))
        if opts.reread and source.kind == "auto":
            raise UsageError("git dream: --reread needs one source, not auto (which sessions it read is not "
                             "kept); name it, e.g. --from claude-code:SESSION.jsonl --reread")
    elif opts.reread:
        raise UsageError("git dream: --reread reads a source again; name it with --from SOURCE")
    if opts.to is not None:
        target.resolve(opts.to)
    allowed_ports(repo)
    if sandbox_wanted(opts, env):
        problem = sandbox_problem(repo)
        if problem:
            return Result("sandbox_unavailable", message=f"{problem}. Run the agent unconfined with "
                          "--no-sandbox (or GIT_DREAM_SANDBOX=0) if you trust it.")
    return None


def not_due(repo: Repo) -> Result | None:
    """For --auto: the `not_due` outcome, or None when a dream is due."""
    is_due, n, every, mode = trigger.due(repo.root, repo.common_dir)
    if is_due:
        return None
    if mode == "backoff":
        failures, left = trigger.backoff_left(repo.common_dir)
        why = (f"{failures} dream(s) in a row did not finish cleanly; the next automatic one waits "
               f"{left / 60:.0f} more minute(s) (see git dream list)")
    elif mode != "commits":
        why = f"dream.trigger is {mode!r}, not 'commits'"
    else:
        why = f"{n} of {every} memory commits since the last dream"
    return Result("not_due", message=f"No dream due: {why}.")


def agent_identity(repo: Repo, env: Mapping[str, str]) -> tuple[str, str]:
    """(AGENT_ID, AGENT_NAME) for the agent: the identity its commits would carry."""
    author = repo.author(env)
    return (author.id, author.name) if author else ("", "")


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
        if self.lock.fd is not None:  # an empty file says "nobody" to trigger.running()
            os.ftruncate(self.lock.fd, 0)
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
            prepared = prepare(repo, dirs, opts, env, started)
            if isinstance(prepared, Result):  # refused before a run began
                note_attempt(dirs, prepared.status)
                return prepared
            return run_pass(prepared)
    except Busy as exc:
        return busy_result(repo, str(exc))


def _progress_only(opts: Options) -> Callable[[str], None]:
    import sys

    def say(text: str) -> None:
        if opts.progress or opts.notices:
            sys.stderr.write(f"git dream: {visible(redact(text))}\n")
    return say


def prepare(repo: Repo, dirs: state.Dirs, opts: Options, env: Mapping[str, str],
            started: float) -> Pass | Result:
    """Everything before the run record: the `Pass` to run, or the outcome that ends
    the dream here (nothing was started)."""
    say = _progress_only(opts)
    recovery.recover_leftovers(repo, dirs, say)
    if opts.auto:
        waiting = not_due(repo)
        if waiting is not None:
            return waiting
    refused = validate(repo, opts, env)
    if refused is not None:
        return refused
    agent_spec, timeout, merge_mode = settings(repo, opts, env)
    command, command_env = runner.command_for(agent_spec)
    sandboxed = sandbox_wanted(opts, env)
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
        source = sources.parse(opts.source, project_of(repo, env))
        chosen = pick_slice(dirs, source, opts.reread)
        if chosen is None:
            where = f"the sessions of {source.path}" if source.kind == "auto" else source.path
            return Result("no_payload", base=base,
                          message=f"No new transcript content to reflect on in {where}.",
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
    listing = snap.Snapshot(repo.root, base, snap.parse_ls_tree(
        repo.git("ls-tree", "-r", "-z", "--full-tree", base).raw))
    converted = wtmod.conversions(repo, [e.path for e in listing.files])
    if converted:
        shown = ", ".join(converted[:5]) + (f" and {len(converted) - 5} more" if len(converted) > 5 else "")
        raise EnvironmentProblem(f"git dream: git attributes would change {shown} on checkout (eol=crlf, ident, "
                                 "a filter or working-tree-encoding), and a dream compares files byte for byte; "
                                 "remove those attributes for the memory repository")
    return Pass(repo, dirs, opts, env, base=base, command=command, command_env=command_env,
                agent_spec=agent_spec, timeout=timeout, merge_mode=merge_mode, sandboxed=sandboxed,
                chosen=chosen, doc=doc, started=started, listing=listing)


def project_of(repo: Repo, env: Mapping[str, str]) -> str:
    """The project whose sessions `--from auto` reads: $GIT_DREAM_PROJECT, dream.project,
    else the directory git dream was started in."""
    return (env.get("GIT_DREAM_PROJECT") or repo.cfg("dream.project") or os.getcwd()).strip()


def pick_slice(dirs: state.Dirs, source: sources.Source, reread: bool = False) -> sources.Slice | None:
    """The new content past the source's cursors. `auto` looks at the sessions it has
    cursors for and those written since the last consuming dream began (all of the
    project's sessions the first time)."""
    data = state.load_state(dirs)
    since = None
    if source.kind == "auto":
        last = data.get("last_dream") or {}
        began = (state.load_record(dirs, last["id"]) or {}).get("started_at") if last.get("id") else None
        at = sources.parse_time(began or last.get("at"))
        since = at - 1 if at is not None else None  # whole seconds: err towards reading
    return sources.slice_for(source, data["sources"], since, reread)


def sandbox_problem(repo: Repo) -> str | None:
    abi, reason = sandbox.probe_abi()
    if abi < sandbox.MIN_ABI:
        return reason or (f"Landlock ABI {abi} is too old for the dream sandbox (ABI {sandbox.MIN_ABI}, "
                          "Linux 5.19, is needed)")
    if (repo.cfg("extensions.refstorage") or "files").lower() != "files":
        return ("the repository stores refs in reftable, where the sandbox cannot limit the agent to its "
                "own branch")
    return None


def run_pass(p: Pass) -> Result:
    """worktree -> payload -> agent -> finalize -> merge or keep, under a run record.
    Once the record exists, any error ends in a `failed` outcome with the work kept."""
    repo, dirs = p.repo, p.dirs
    dream_id = state.new_id()
    run_dir = dirs.run_dir(dream_id)
    os.makedirs(run_dir, exist_ok=True)
    log = runner.Log(dirs.log(dream_id), echo_agent=p.opts.verbose, echo_progress=p.opts.progress)
    record = new_record(p, dream_id, log)
    state.save_record(dirs, record)
    environment.register_secrets(p.env)  # masked in the payload and the log
    tmpdir = tempfile.mkdtemp(prefix=f"git-dream-{dream_id}-")
    wt = None
    try:
        log.progress(f"{dream_id}: base {p.base[:7]}, agent {p.agent_spec}, "
                     f"{'sandboxed' if p.sandboxed else 'NOT sandboxed'}, timeout {p.timeout:g}s")
        files = payload.memory_files(p.listing)
        wt = wtmod.create(repo, dirs, dream_id, p.base)                                   # worktree
        log.progress(f"checked out {wt.branch} at {wt.path}")
        prompt_path, transcript_path = write_payload(run_dir, files, p.chosen, p.doc,      # payload
                                                     p.opts.instruction)
        log.progress(f"prompt ready: {prompt_path} ({os.path.getsize(prompt_path):,} bytes"
                     + (f", {p.chosen.messages} transcript messages" if p.chosen else ", no transcript") + ")")
        network = network_note(p)
        log.progress(f"network: {network}", echo=not network.startswith("TCP"))
        log.progress("running the agent")
        agent = launch(p, record, wt, prompt_path, p.base, tmpdir, log,                   # agent
                       transcript=transcript_path, extra=p.command_env)
        out = conclude(repo, dirs, wt, agent, merge_mode=p.merge_mode, sandboxed=p.sandboxed,  # finalize
                       chosen=p.chosen, log=log)
        out.extra["network"] = network
        out.extra["reads"] = reads_note(p)
        if out.extra.get("quarantine"):
            record["quarantine"] = out.extra["quarantine"]
        wtmod.remove(repo, wt, keep_repo=bool(out.extra.get("quarantine")))
        wt = None
        if out.status == "merge_conflict" and resolve.mode(repo) == "agent" and not out.extra.get("quarantine"):
            out = resolve_conflict(p, out, record, log)
    except Exception as exc:  # noqa: BLE001 - any failure becomes a `failed` outcome, work kept
        out = internal_failure(repo, dirs, wt, record, exc, log)
    except BaseException as exc:
        # Interrupted outside the agent, or exiting: keep the work, record, re-raise.
        internal_failure(repo, dirs, wt, record, exc, log)
        log.close()
        raise
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    out.log = log.path
    out.duration_s = time.monotonic() - p.started
    log.progress(f"{out.status}: {out.message}", echo=False)  # the caller prints the outcome
    after(repo, dirs, out, p.chosen, p.doc, record, log)                                    # merge or keep
    log.close()
    return out


def new_record(p: Pass, dream_id: str, log: runner.Log) -> dict[str, Any]:
    """The run record, written before the worktree exists (recovery starts from it)."""
    chosen, doc = p.chosen, p.doc
    return {
        "id": dream_id, "status": "running", "started_at": state.utc_now(), "pid": os.getpid(),
        "base": p.base, "branch": state.BRANCH_PREFIX + dream_id, "agent": p.agent_spec, "sandbox": p.sandboxed,
        "merge": p.merge_mode, "log": log.path,
        "source": None if chosen is None else {
            "key": chosen.source.key, "start": chosen.start_id, "end": chosen.end_id,
            "messages": chosen.messages, "cursor_before": chosen.cursor_before,
            **({"parts": [{"key": q.source.key, "end": q.end_id, "cursor_before": q.cursor_before}
                          for q in chosen.parts]} if chosen.parts else {})},
        "to": None if doc is None else doc.path,
    }


def launch(p: Pass, record: dict[str, Any], wt: wtmod.Worktree, prompt_path: str, base: str, tmpdir: str,
           log: runner.Log, *, transcript: str | None, extra: Mapping[str, str]) -> runner.AgentRun:
    """Run the agent in `wt`: its environment, its sandbox, its pid in the record."""
    agent_id, agent_name = agent_identity(p.repo, p.env)
    child_env = environment.agent_env(
        worktree=wt.path, dream_id=wt.id, prompt=prompt_path, base=base, branch=wt.branch,
        agent_id=agent_id, agent_name=agent_name, tmpdir=tmpdir, transcript=transcript, extra=extra,
        config={"gc.auto": "0", "maintenance.auto": "false", **wtmod.NO_EOL}, base_env=p.env,
        pass_env=[v.strip() for v in p.repo.cfg_all("dream.passEnv")])
    plan = sandbox_plan(p.repo, wt, tmpdir, log, command=p.command, env=child_env) if p.sandboxed else None

    def on_start(pid: int, start: int | None) -> None:
        record.update(agent_pid=pid, agent_start=start)
        state.save_record(p.dirs, record)

    return runner.run(p.command, cwd=wt.path, env=child_env, prompt_file=prompt_path, log=log,
                      timeout=p.timeout, sandbox_plan=plan, marker=f"DREAM_ID={wt.id}", on_start=on_start)


def resolve_conflict(p: Pass, out: Result, record: dict[str, Any], log: runner.Log) -> Result:
    """dream.resolve=agent: the dream still conflicts after its replay. Run the agent once
    more in a new (sandboxed) worktree at the memory's HEAD with the conflicts in its
    prompt, and merge what it commits through the same gate (`merged_after_resolve`).
    Otherwise the dream stays kept as it was, and the attempt's own work, if any, is
    kept at refs/dreams/extra/<id>/resolve."""
    repo, dirs = p.repo, p.dirs
    original = out.head or ""
    dream_id = out.id or ""
    head_now = repo.git("rev-parse", "-q", "--verify", "HEAD", check=False).out.strip()
    found = resolve.conflicts(repo, out.base or "", head_now, original)
    if not head_now or not found:
        return out
    log.progress(f"dream.resolve=agent: running the agent again on {head_now[:7]} to resolve "
                 + ", ".join(f["path"] for f in found[:5]))
    kept_before = out.kept_ref
    tmpdir = tempfile.mkdtemp(prefix=f"git-dream-{dream_id}-resolve-")
    wt = None
    try:
        listing = snap.Snapshot(repo.root, head_now, snap.parse_ls_tree(
            repo.git("ls-tree", "-r", "-z", "--full-tree", head_now).raw))
        prompt_path = os.path.join(dirs.run_dir(dream_id), "resolve-prompt.md")
        with open(prompt_path, "w", encoding="utf-8") as fh:
            fh.write(resolve.prompt(found, resolve.intent(repo, out.base or "", original),
                                    payload.memory_files(listing)))
        wt = wtmod.create(repo, dirs, dream_id, head_now)
        agent = launch(p, record, wt, prompt_path, head_now, tmpdir, log, transcript=None,
                       extra={**p.command_env, "DREAM_RESOLVE": "1",
                              "DREAM_CONFLICTS": "\n".join(f["path"] for f in found)})
        second = conclude(repo, dirs, wt, agent, merge_mode=p.merge_mode, sandboxed=p.sandboxed,
                          chosen=p.chosen, log=log)
        wtmod.remove(repo, wt, keep_repo=bool(second.extra.get("quarantine")))
        wt = None
    except Exception as exc:  # noqa: BLE001 - the dream's own work is kept whatever happens here
        second = Result("failed", dream_id, message=f"the resolving run failed: {redact(str(exc))}")
        if wt is not None:
            try:
                wtmod.remove(repo, wt)
            except Exception:  # noqa: BLE001 - the next dream cleans up what is left
                pass
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    kept_ref = state.KEPT_PREFIX + dream_id
    if second.merged:
        wtmod.delete_ref(repo, kept_ref, original)  # the resolution carries the dream's work
        second.status = "merged_after_resolve"
        second.base = out.base
        second.kept_ref = None
        second.message = (f"The dream's changes conflicted with newer memory in "
                          f"{', '.join(f['path'] for f in found[:10])}; the agent resolved them on top of "
                          f"{head_now[:7]} and the result merged ({(second.head or '')[:7]}).")
        second.extra.update(conflicts=out.extra.get("conflicts"), resolved_from=original)
        return second
    attempt = wtmod.rev(repo, kept_ref)
    if attempt and attempt != original:  # keep the attempt beside the dream, not over it
        repo.git("update-ref", f"refs/dreams/extra/{dream_id}/resolve", attempt, check=False)
        repo.git("update-ref", kept_ref, original, check=False)
        out.extra["side_branches"] = [*out.extra.get("side_branches", []), f"refs/dreams/extra/{dream_id}/resolve"]
    out.kept_ref = kept_before
    out.extra["resolve"] = {"status": second.status, "message": second.message}
    out.message += f" A resolving run (dream.resolve=agent) ended {second.status}: {second.message}"
    return out


def sandbox_plan(repo: Repo, wt: wtmod.Worktree, tmpdir: str, log: runner.Log, *, command: str,
                 env: Mapping[str, str]) -> runner.SandboxPlan:
    """Where the confined agent may write: its checkout, and in the run's private
    repository git's files for it, its objects and dream branches; its TMPDIR; and
    dream.sandbox.allowWrite (never through it a folder holding other memories or
    credentials). Nothing of the memory's own git dir. What it may read: see
    read_plan."""
    writable = [*wtmod.writable(wt), tmpdir]
    files: list[str] = []
    protected = readable.protected_paths(repo.root, repo.common_dir, env)
    for extra in repo.cfg_all("dream.sandbox.allowWrite"):
        path = os.path.realpath(readable.expand(extra.strip(), {"HOME": os.path.expanduser("~"), **env}))
        parts = readable.carve(path, protected) if os.path.exists(path) else []
        if parts != [path] and parts:
            log.progress(f"dream.sandbox.allowWrite {path} holds other memories or credentials: writable are "
                         f"{len(parts)} of its entries, not it")
        for part in parts:
            (writable if os.path.isdir(part) else files).append(part)  # a file: e.g. ~/.claude.json
        if not os.path.exists(path):
            log.progress(f"dream.sandbox.allowWrite {path} does not exist; not granted")
    deny_chmod = not repo.cfg_bool("dream.sandbox.allowChmod", False)
    if deny_chmod and not sandbox.chmod_filter_supported():
        log.progress(f"chmod and chown are not confined on {platform.machine()} (no seccomp filter for it)")
        deny_chmod = False
    ports = allowed_ports(repo)
    plan = runner.SandboxPlan(writable, probe=os.path.join(repo.common_dir, "config"), write_files=files,
                              deny_chmod=deny_chmod,
                              allow_ports=ports if sandbox.probe_abi()[0] >= sandbox.NET_ABI else None)
    reads = read_plan(repo, wt, command, env, [*writable, *files], log)
    if reads is not None:
        plan.read_dirs, plan.read_files = reads.dirs, reads.files
        plan.read_probe = os.path.join(repo.common_dir, "HEAD")
    return plan


def read_plan(repo: Repo, wt: wtmod.Worktree, command: str, env: Mapping[str, str], writable: list[str],
              log: runner.Log) -> readable.Grants | None:
    """What the confined agent may read (dream/readable.py): what it may write, its run
    folder (prompt, transcript, private repository), of the memory's git dir only the
    objects, config and hooks its git needs, the system, the toolkit, the script its
    command runs and what that declares, and dream.sandbox.allowRead. None with
    `dream.sandbox.allowRead any`: reads are not confined."""
    configured = [v.strip() for v in repo.cfg_all("dream.sandbox.allowRead") if v.strip()]
    if "any" in (v.lower() for v in configured):  # as reads_note says
        log.progress("reads: not confined (dream.sandbox.allowRead any)")
        return None
    common = os.path.abspath(repo.common_dir)
    objects = os.path.join(common, "objects")
    own = [os.path.dirname(wt.repo), objects, *readable.alternates(objects), os.path.join(common, "config"),
           wtmod.hooks_dir(repo)]
    grants = readable.plan(readable.Request(command=command, env=env, own=own, memory_root=repo.root,
                                            common_dir=common, configured=configured, extra=writable),
                           lambda text: log.progress(f"reads: {text}"))
    log.progress(f"reads: confined to {len(grants.dirs)} folder(s) and {len(grants.files)} file(s): "
                 + ", ".join([*grants.dirs, *grants.files]), echo=False)
    return grants


def allowed_ports(repo: Repo) -> list[int] | None:
    """The TCP ports a confined agent may connect to (dream.sandbox.allowPort, repeatable;
    443 when unset), or None for `any` (the network is not confined)."""
    raw = [v.strip().lower() for v in repo.cfg_all("dream.sandbox.allowPort") if v.strip()]
    if "any" in raw:
        return None
    ports = []
    for value in raw or ["443"]:
        if not value.isdigit() or not 0 < int(value) < 65536:
            raise UsageError(f"invalid dream.sandbox.allowPort {value!r}: give a TCP port (1-65535) or any")
        ports.append(int(value))
    return sorted(set(ports))


def network_note(p: Pass) -> str:
    """What the agent's network may reach, for the log and the outcome."""
    if not p.sandboxed:
        return "not confined (no sandbox)"
    ports = allowed_ports(p.repo)
    if ports is None:
        return "not confined (dream.sandbox.allowPort any)"
    abi = sandbox.probe_abi()[0]
    if abi < sandbox.NET_ABI:
        return (f"not confined: Landlock ABI {abi} has no TCP rules (ABI {sandbox.NET_ABI}, Linux 6.7, is "
                "needed), so the agent can reach loopback services such as git memory mcp --http")
    return "TCP connections to port(s) " + ", ".join(map(str, ports)) + " only"


def reads_note(p: Pass) -> str:
    """What the agent could read, for the outcome (the log lists every grant)."""
    if not p.sandboxed:
        return "not confined (no sandbox)"
    if "any" in (v.strip().lower() for v in p.repo.cfg_all("dream.sandbox.allowRead")):
        return "not confined (dream.sandbox.allowRead any)"
    return "its own work, the system, the toolkit and what its recipe and dream.sandbox.allowRead grant"


def conclude(repo: Repo, dirs: state.Dirs, wt: wtmod.Worktree, agent: runner.AgentRun, *, merge_mode: str,
             sandboxed: bool, chosen: sources.Slice | None, log: runner.Log) -> Result:
    """After the agent: make its refs safe, bring its objects in verified, then finalize."""
    if agent.sandbox_error:
        log.progress(f"sandbox refused: {agent.sandbox_error}")
        return Result("sandbox_unavailable", wt.id, wt.branch, wt.base, wt.base,
                      message=f"The sandbox could not confine the agent: {agent.sandbox_error}. Run it "
                              "unconfined with --no-sandbox (or GIT_DREAM_SANDBOX=0) if you trust it.")
    log.progress(f"{agent.describe()} after {agent.duration:.1f}s"
                 + (f"; stopped {agent.killed} leftover process(es)" if agent.killed else ""))
    tampered = wtmod.tampering(wt)
    harvest = recovery.gather(repo, dirs, wt)
    if harvest.import_error:
        out = untrusted(repo, wt, harvest, agent)
    else:
        trailers = []
        if chosen:
            trailers += [f"Dream-Source: {chosen.source.key}", f"Dream-Through: {chosen.end_id}"]
        if not sandboxed:
            trailers.append("Dream-Sandbox: off")
        fin = finalize.Finalizer(repo, wt, merge_mode=merge_mode, trailers=trailers, progress=log.progress)
        out = fin.run(agent, tampered + harvest.trouble(), tip=harvest.tip, head=harvest.head)
    side = recovery.keep_side_branches(repo, wt, harvest)
    if side:
        out.extra["side_branches"] = side
        log.progress("the agent made other branches; kept at " + ", ".join(side))
    return out


def untrusted(repo: Repo, wt: wtmod.Worktree, harvest: recovery.Harvest, agent: runner.AgentRun) -> Result:
    """The agent's objects failed verification: nothing of its history comes in. Its files
    are kept (hashed by us, on the base) and its quarantine is left for inspection."""
    kept = recovery.salvage(repo, wt, harvest, agent_ran=True, say=lambda _t: None)
    out = Result("failed", wt.id, wt.branch, wt.base, wt.base, kept_ref=kept,
                 message=f"Dream failed: the agent's git objects did not pass verification ({harvest.import_error}); "
                         f"nothing was merged. Its repository is left in {harvest.quarantine} for inspection "
                         f"(git --git-dir={harvest.quarantine} log --all)"
                         + (f"; the files it left are kept at {kept}." if kept else "."))
    out.extra.update(quarantine=harvest.quarantine, timed_out=agent.timed_out)
    return out


def internal_failure(repo: Repo, dirs: state.Dirs, wt: wtmod.Worktree | None, record: dict[str, Any],
                     exc: BaseException, log: runner.Log) -> Result:
    """Whatever broke, the agent's work must survive: keep it, remove the worktree and
    say so in a `failed` outcome (never raises)."""
    what = redact(f"{type(exc).__name__}: {exc}" if not str(exc) else str(exc))
    log.progress(f"internal failure: {what}")
    kept = None
    if wt is not None:
        try:
            harvest = recovery.gather(repo, dirs, wt)
            kept = recovery.salvage(repo, wt, harvest, agent_ran=bool(record.get("agent_pid")),
                                    say=log.progress)
            if harvest.import_error:
                record["quarantine"] = harvest.quarantine
            wtmod.remove(repo, wt, keep_repo=bool(harvest.import_error))
        except Exception as inner:  # noqa: BLE001 - the next dream recovers what is left
            log.progress(f"could not clean up after the failure ({inner}); the next dream will")
    record.update(status="failed", finished_at=state.utc_now(), kept_ref=kept,
                  message=f"internal failure: {what}")
    state.save_record(dirs, record)
    return Result("failed", record["id"], record["branch"], record["base"], kept or record["base"], kept_ref=kept,
                  message=f"Dream failed: {what}; nothing was merged."
                          + (f" The work is kept at {kept} (git dream show {record['id']})." if kept else ""))


def write_payload(run_dir: str, files: list[tuple[str, bytes]], chosen: sources.Slice | None,
                  doc: target.Target | None, instruction: str | None) -> tuple[str, str | None]:
    transcript_text = None
    transcript_path = None
    if chosen is not None:
        records = masking.mask_obj(sources.normalise(chosen))
        transcript_path = os.path.join(run_dir, "transcript.json")
        state.write_json(transcript_path, records)
        transcript_text = payload.transcript_section(records, chosen.source.path, chosen.messages)
    directive = None
    if doc is not None:
        directive = payload.to_directive(doc.name, doc.agents_md, any(p == doc.rel for p, _ in files))
    text = payload.build(files, transcript=transcript_text, instruction=masking.mask(instruction or "") or None,
                         directive=directive)
    text = mask_secrets(text)  # a registered value anywhere, the memory's own text included
    prompt_path = os.path.join(run_dir, "prompt.md")
    with open(prompt_path, "w", encoding="utf-8") as fh:
        fh.write(text)
    return prompt_path, transcript_path


def after(repo: Repo, dirs: state.Dirs, out: Result, chosen: sources.Slice | None,
          doc: target.Target | None, record: dict[str, Any], log: runner.Log) -> None:
    """Advance the cursor, write the --to target back, and finish the record."""
    if out.status in finalize.CONSUMING:
        consume(repo, dirs, chosen.source.key if chosen else None, chosen.end_id if chosen else None,
                record.get("source", {}).get("cursor_before") if chosen else None, out.id,
                parts=(record.get("source") or {}).get("parts"))
        if out.status == "no_changes" and chosen is not None:
            # Letta's rule: a pass that changed nothing still consumed what it read. Say so,
            # and how to have it read again (a better agent, a fixed prompt).
            again = (f"git dream --from {chosen.source.key} --reread" if chosen.source.kind != "auto"
                     else "git dream --from claude-code:SESSION --reread (one session)")
            out.extra["reread"] = again
            out.message += (f" The {chosen.messages} message(s) it read from {chosen.source.path} count as "
                            f"read: the next dream starts after them ({again} reads them again).")
        if doc is not None:
            try:
                if target.write_back(repo, doc):
                    out.extra["target_written"] = True
                    log.progress(f"wrote {doc.path}")
            except OSError as exc:
                # The memory merged (and the cursor moved): that stays. Only the copy failed.
                out.extra["target_error"] = f"cannot write --to target {doc.path}: {exc.strerror}"
                out.message += f" But writing {doc.path} failed: {exc.strerror}."
    if doc is not None:
        out.extra.setdefault("target", doc.path)
        out.extra.setdefault("target_written", False)
    note_attempt(dirs, out.status)
    record.update(status=out.status, finished_at=state.utc_now(), head=out.head, commits=out.commits,
                  merged=out.merged, kept_ref=out.kept_ref, message=out.message,
                  duration_s=round(out.duration_s, 3), **{k: v for k, v in out.extra.items()
                                                         if k in ("problems", "conflicts", "uncommitted",
                                                                  "timed_out", "target_error", "rebase",
                                                                  "resolve", "resolved_from")})
    state.save_record(dirs, record)
    keep_ids = set()
    for run in state.record_ids(dirs):
        kept = state.load_record(dirs, run) or {}
        if kept.get("kept_ref") or kept.get("quarantine"):
            keep_ids.add(run)
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
            cursor_before: str | None, dream_id: str | None, parts: list[dict[str, Any]] | None = None) -> None:
    head = repo.git("rev-parse", "-q", "--verify", "HEAD", check=False).out.strip()
    state.consume(dirs, head, source_key, end_id, cursor_before, dream_id, parts=parts)
