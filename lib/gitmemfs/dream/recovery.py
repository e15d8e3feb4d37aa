"""What a run left behind, collected without trusting it: right after the agent,
or by the next dream when a pass was killed outright.

    gather             disarm what the agent planted among the dream refs, read its
                       branches, import their objects from the quarantine, verified
    salvage            keep an interrupted run's commits and (if its agent ran) files
    recover_leftovers  the next dream's sweep: stop the old agent (only if it is
                       still the agent), finish the bookkeeping of a pass that had
                       already merged, else keep its work

Until `gather` has run, nothing reads the run's work in the memory repository:
its branch lives in the run's private repository and names objects only the
quarantine holds.
"""
from __future__ import annotations

import os
from typing import Any, Callable

from gitmemfs.core.repo import Repo
from gitmemfs.dream import finalize, quarantine, runner, state, target
from gitmemfs.dream import worktree as wtmod

BRANCHES = "refs/heads/" + state.BRANCH_PREFIX


class Harvest:
    """What `gather` found (a plain class: a dataclass costs milliseconds to create)."""

    __slots__ = ("tip", "head", "side", "planted", "import_error", "quarantine")

    def __init__(self, tip: str | None, head: str | None, side: dict[str, str], planted: list[str],
                 import_error: str | None, quarantine: str):
        self.tip = tip                    # dream/<id> in the run's repository, its objects now ours
        self.head = head                  # the commit the worktree's HEAD names, resolved here
        self.side = side                  # other dream branches the agent made
        self.planted = planted            # symrefs/symlinks removed from the ref folders
        self.import_error = import_error  # the quarantine did not hold up
        self.quarantine = quarantine      # the run's private repository

    def trouble(self) -> list[str]:
        return [f"{what}, removed" for what in self.planted]


def _shared(repo: Repo, wt: wtmod.Worktree) -> bool:
    """A run made before private repositories: its refs are the memory's own."""
    return os.path.realpath(wt.repo) == os.path.realpath(repo.common_dir)


def gather(repo: Repo, dirs: state.Dirs, wt: wtmod.Worktree) -> Harvest:
    """Make the run's refs safe to read and its commits real in the memory repository."""
    planted, tips = wtmod.disarm_refs(wt.repo)
    own = tips.get(wt.id)
    if _shared(repo, wt):  # other runs' branches live there too: only non-id names are this one's
        side = {n: s for n, s in tips.items() if n != wt.id and not state.is_id(n)}
    else:
        side = {n: s for n, s in tips.items() if n != wt.id}
    named = [wtmod.head_names(wt, tips), wtmod.last_reflog_sha(wt)]
    try:
        quarantine.bring_in(repo, wt.objects, [own, *named, *side.values()], [wt.base, "HEAD"],
                            stage=os.path.join(dirs.run_dir(wt.id), "import"))
    except quarantine.Tampered as exc:
        return Harvest(None, None, {}, planted, str(exc), wt.repo)
    head = next((found for found in (c if c == wt.base else wtmod.rev(repo, c) for c in named if c) if found),
                None)
    return Harvest(own, head, side, planted, None, wt.repo)


def keep_side_branches(repo: Repo, wt: wtmod.Worktree, harvest: Harvest) -> list[str]:
    """Branches the agent made beside its own are kept at refs/dreams/extra/<id>/<name>."""
    moved = []
    for name, sha in sorted(harvest.side.items()):
        keep_as = f"refs/dreams/extra/{wt.id}/{name}"
        if repo.git("update-ref", keep_as, sha, check=False).code == 0:
            moved.append(keep_as)
        if _shared(repo, wt):
            wtmod.delete_ref(repo, BRANCHES + name, sha)
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
        head = harvest.head or tip or wt.base
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
    # A pass killed after removing its worktree left only a `running` record. Every dream
    # recovers what came before it, so only the newest record can be such a one.
    newest = state.record_ids(dirs)[-1:]
    if newest and (state.load_record(dirs, newest[0]) or {}).get("status") == "running":
        names.add(newest[0])
    for dream_id in sorted(names):
        recover_one(repo, dirs, dream_id, say)
    # A branch whose worktree is gone and that is not waiting for review: keep its work.
    wtmod.disarm_refs(repo.common_dir)  # planted by a run made before private repositories
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
    harvest = gather(repo, dirs, wt)
    merge = merged_as(repo, dream_id)
    if merge:
        wtmod.remove(repo, wt)
        finish_merged(repo, dirs, record, merge)
        say(f"recovered dream {dream_id}: it had merged ({merge[:7]}) before it stopped; its cursor is updated")
        return
    kept = salvage(repo, wt, harvest, agent_ran=bool(record.get("agent_pid")), say=say)
    keep_side_branches(repo, wt, harvest)
    wtmod.remove(repo, wt, keep_repo=bool(harvest.import_error))
    message = "Interrupted: the dream process stopped before finishing."
    if kept:
        message += f" The work is kept at {kept}."
    if harvest.import_error:
        record["quarantine"] = harvest.quarantine
        message += (f" Its objects did not pass verification ({harvest.import_error}); they are left in "
                    f"{harvest.quarantine}.")
    say(f"recovered interrupted dream {dream_id}" + (f"; its work is kept at {kept}" if kept else ""))
    record.update(status="failed", finished_at=state.utc_now(), kept_ref=kept, message=message)
    state.save_record(dirs, record)


def finish_merged(repo: Repo, dirs: state.Dirs, record: dict[str, Any], merge: str) -> None:
    """A pass killed after its merge: advance the cursor and write the --to target back,
    as it would have."""
    source = record.get("source") or {}
    head = repo.git("rev-parse", "-q", "--verify", "HEAD", check=False).out.strip()
    state.consume(dirs, head, source.get("key"), source.get("end"), source.get("cursor_before"), record["id"],
                  parts=source.get("parts"))
    if record.get("to"):
        try:
            target.write_back(repo, target.resolve(record["to"]))
        except Exception:  # noqa: BLE001 - the next consuming dream writes it again
            pass
    record.update(status="merged", merged=True, finished_at=state.utc_now(), head=merge, kept_ref=None,
                  message=f"Dreamed and merged ({merge[:7]}); the dream process stopped before recording it, "
                          "and the next dream finished its bookkeeping.")
    state.save_record(dirs, record)
