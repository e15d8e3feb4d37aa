"""What a run left behind, collected without trusting it: right after the agent,
or by the next dream when a pass was killed outright.

    gather             disarm what the agent planted among the dream refs, read its
                       branches, import their objects from the quarantine, verified
    salvage            keep an interrupted run's commits and (if its agent ran) files
    recover_leftovers  the next dream's sweep: stop the old agent (only if it is
                       still the agent), finish the bookkeeping of a pass that had
                       already merged, else keep its work

Until `gather` has run, nothing reads a dream branch in the repository: its tip
may name objects only the quarantine holds, and a planted symref or folder
symlink would make git act on `main`.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from ..repo import Repo
from . import finalize, quarantine, runner, state, target
from . import worktree as wtmod

BRANCHES = "refs/heads/" + state.BRANCH_PREFIX


@dataclass
class Harvest:
    tip: str | None                       # dream/<id>, its objects in the repository
    side: dict[str, str] = field(default_factory=dict)   # other dream branches it made or moved
    planted: list[str] = field(default_factory=list)     # symrefs/symlinks removed from the ref folders
    import_error: str | None = None       # the quarantine did not hold up
    quarantine: str = ""
    dropped: list[str] = field(default_factory=list)     # side branches whose objects could not come in

    def trouble(self) -> list[str]:
        return [f"{what}, removed" for what in self.planted]


def _head_commit(wt: wtmod.Worktree, tips: dict[str, str]) -> str | None:
    """The commit the worktree's HEAD file names, as written (a dream branch or a sha)."""
    text = wtmod.head_text(wt)
    if text.startswith("ref: " + BRANCHES):
        return tips.get(text[len("ref: " + BRANCHES):].strip())
    return text if re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", text) else None


def gather(repo: Repo, dirs: state.Dirs, wt: wtmod.Worktree, before: dict[str, str] | None) -> Harvest:
    """Make the run's refs safe and its commits real in the repository.

    `before`: the dream branches as they were when the run started; every other
    branch changed since counts as the agent's. None (recovery, where that is not
    known): branches named like a run id belong to their own run."""
    planted = wtmod.disarm_refs(repo.common_dir)
    q = quarantine.folder(dirs.run_dir(wt.id))
    env = quarantine.agent_env(q, repo.common_dir) if os.path.isdir(q) else None
    tips = wtmod.refs(repo, BRANCHES, env=env)
    own = tips.get(wt.id)
    if before is None:
        side = {n: s for n, s in tips.items() if n != wt.id and not state.is_id(n)}
    else:
        side = {n: s for n, s in tips.items() if n != wt.id and before.get(n) != s}
    mine = [own, _head_commit(wt, tips), wtmod.last_reflog_sha(wt)]
    have = [wt.base, "HEAD"]
    out = Harvest(own, side, planted, quarantine=q)
    try:
        quarantine.bring_in(repo, q, mine + list(side.values()), have)
        return out
    except quarantine.Tampered as exc:
        error = str(exc)
    if side and before is None:  # recovery: a side branch may come from another run's quarantine
        try:
            quarantine.bring_in(repo, q, mine, have)
            out.dropped = sorted(side)
            out.side = {}
            return out
        except quarantine.Tampered as exc:
            error = str(exc)
    return Harvest(None, {}, planted, error, q, sorted(side))


def settle_branches(repo: Repo, wt: wtmod.Worktree, before: dict[str, str], harvest: Harvest) -> list[str]:
    """Branches the agent made or moved beside its own go to refs/dreams/extra/<id>/<name>
    (kept, out of the branch namespace); branches of other runs it moved or deleted are
    put back; ones that could not be imported are removed. Returns the kept refs."""
    moved = []
    for name, sha in sorted(harvest.side.items()):
        keep_as = f"refs/dreams/extra/{wt.id}/{name}"
        if repo.git("update-ref", keep_as, sha, check=False).code == 0:
            moved.append(keep_as)
    current = wtmod.refs(repo, BRANCHES)
    for name in set(harvest.side) | set(harvest.dropped) | set(before):
        if name == wt.id:
            continue
        ref = BRANCHES + name
        if name in before:
            if current.get(name) != before[name]:
                repo.git("update-ref", "--no-deref", ref, before[name], check=False)
        elif name in current or name in harvest.dropped:
            wtmod.delete_ref(repo, ref)
    return moved


def checkout_intact(wt: wtmod.Worktree) -> bool:
    """The worktree was fully created (its agent could have run in it)."""
    return os.path.isdir(wt.admin) and wtmod.admin_of(wt.path) == os.path.realpath(wt.admin)


def salvage(repo: Repo, wt: wtmod.Worktree, harvest: Harvest, *, agent_ran: bool,
            say: Callable[[str], None]) -> str | None:
    """Keep what an interrupted run left at refs/dreams/kept/<id>: its commits and, if its
    agent ran in a complete checkout, its files. Never raises."""
    try:
        tip = wtmod.rev(repo, harvest.tip) if harvest.tip else None
        head = (None if harvest.import_error else wtmod.work_head(repo, wt, tip)) or tip or wt.base
        snap = None
        if agent_ran and head and os.path.isdir(wt.path) and checkout_intact(wt):
            snap, _ = wtmod.snapshot(repo, wt, head, lambda: finalize.identity_env(repo),
                                     f"dream {wt.id}: files left by an interrupted run\n\nDream-Id: {wt.id}\n")
        keep_sha = snap or (head if head and head != wt.base else None)
        return finalize.keep(repo, wt.id, keep_sha) if keep_sha else None
    except Exception as exc:  # noqa: BLE001 - leave things in place rather than lose them
        say(f"could not keep the work of {wt.id} ({exc})")
        return None


def merged_as(repo: Repo, dream_id: str) -> str | None:
    """The merge commit in HEAD's history that carries `Dream-Id: <id>`, if any."""
    res = repo.git("log", "-1", "--merges", "--format=%H", f"--grep=^Dream-Id: {dream_id}$", "HEAD", check=False)
    return res.out.strip() or None


def recover_leftovers(repo: Repo, dirs: state.Dirs, say: Callable[[str], None]) -> None:
    """Runs a killed pass left behind (we hold the dream lock, so every `running`
    record and every worktree is stale): stop their agents, keep their work, clean up."""
    try:
        names = {n for n in os.listdir(dirs.worktrees) if state.is_id(n)}
    except FileNotFoundError:
        names = set()
    for dream_id in state.record_ids(dirs):
        if dream_id not in names and (state.load_record(dirs, dream_id) or {}).get("status") == "running":
            names.add(dream_id)
    for dream_id in sorted(names):
        recover_one(repo, dirs, dream_id, say)
    # A branch whose worktree is gone and that is not waiting for review: keep its work.
    wtmod.disarm_refs(repo.common_dir)
    for dream_id, sha in wtmod.refs(repo, BRANCHES).items():
        record = state.load_record(dirs, dream_id) or {}
        if record.get("status") == "pending" or os.path.isdir(dirs.worktree(dream_id)):
            continue
        if wtmod.rev(repo, sha) is None:  # names nothing the repository holds
            wtmod.delete_ref(repo, BRANCHES + dream_id, sha)
            continue
        if sha != record.get("base") and not wtmod.rev(repo, state.KEPT_PREFIX + dream_id):
            finalize.keep(repo, dream_id, sha)
        wtmod.delete_ref(repo, BRANCHES + dream_id, sha)


def recover_one(repo: Repo, dirs: state.Dirs, dream_id: str, say: Callable[[str], None]) -> None:
    record: dict[str, Any] = state.load_record(dirs, dream_id) or {"id": dream_id}
    marker = f"DREAM_ID={dream_id}"
    pid = int(record.get("agent_pid") or 0)
    runner.stop_stragglers(pid if runner.owns_group(pid, record.get("agent_start"), marker) else -1, marker, 1.0)
    base = record.get("base") or ""
    wt = wtmod.leftover(repo, dirs, dream_id, base)
    harvest = gather(repo, dirs, wt, None)
    merge = merged_as(repo, dream_id)
    if merge:
        wtmod.remove(repo, wt)
        quarantine.discard(harvest.quarantine)
        finish_merged(repo, dirs, record, merge)
        say(f"recovered dream {dream_id}: it had merged ({merge[:7]}) before it stopped; its cursor is updated")
        return
    kept = salvage(repo, wt, harvest, agent_ran=bool(record.get("agent_pid")), say=say)
    wtmod.remove(repo, wt)
    for name in harvest.dropped:
        wtmod.delete_ref(repo, BRANCHES + name)
    message = "Interrupted: the dream process stopped before finishing."
    if kept:
        message += f" The work is kept at {kept}."
    if harvest.import_error:
        record["quarantine"] = harvest.quarantine
        message += (f" Its objects did not pass verification ({harvest.import_error}); they are left in "
                    f"{harvest.quarantine}.")
    else:
        quarantine.discard(harvest.quarantine)
    say(f"recovered interrupted dream {dream_id}" + (f"; its work is kept at {kept}" if kept else ""))
    record.update(status="failed", finished_at=state.utc_now(), kept_ref=kept, message=message)
    state.save_record(dirs, record)


def finish_merged(repo: Repo, dirs: state.Dirs, record: dict[str, Any], merge: str) -> None:
    """A pass killed after its merge: advance the cursor and write the --to target back,
    as it would have."""
    source = record.get("source") or {}
    head = repo.git("rev-parse", "-q", "--verify", "HEAD", check=False).out.strip()
    state.consume(dirs, head, source.get("key"), source.get("end"), source.get("cursor_before"), record["id"])
    if record.get("to"):
        try:
            target.write_back(repo, target.resolve(record["to"]))
        except Exception:  # noqa: BLE001 - the next consuming dream writes it again
            pass
    record.update(status="merged", merged=True, finished_at=state.utc_now(), head=merge, kept_ref=None,
                  message=f"Dreamed and merged ({merge[:7]}); the dream process stopped before recording it, "
                          "and the next dream finished its bookkeeping.")
    state.save_record(dirs, record)
