"""`git dream list | show ID | finish ID | drop ID`: the runs that hold work.

A run holds work when `refs/dreams/kept/<id>` exists (anything not merged), it
is `pending` (explicit merge mode; its branch `dream/<id>` is left for review), or
its agent's objects failed verification and their quarantine was left in its run
folder (`drop` deletes it).
`finish` verifies a run reached the memory's HEAD, or with `--merge` merges it
through the same gate as a dream (rule check of its commits and of the merge
result; nothing touches the parent unless that passes). That merge is the person's:
signed where the person signs commits (commit.gpgsign) or the memory has allowed
signers, as a person's approved commit is (core/writer.py). `expect`: the run's
commit the person looked at (the review page sends it); another is refused. `drop --note` keeps the run
record (status `dropped`, the note, the last commit) and deletes the rest.
`preview` is what `finish --merge` would do to today's main, changing nothing: the
merge's conflicts, or its diff and the gate's two checks on it.
"""
from __future__ import annotations

import os
import shutil
from typing import Any

from gitmemfs.core.errors import MemfsError
from gitmemfs.core.outcome import Outcome
from gitmemfs.core.repo import Repo
from gitmemfs.dream import finalize, state
from gitmemfs.dream import worktree as wtmod
from gitmemfs.dream.finalize import Result
from gitmemfs.dream.lifecycle import Busy, DreamLock, busy_result, consume
from gitmemfs.dream.recovery import BRANCHES
from gitmemfs.gate import approved, check


def kept_refs(repo: Repo) -> dict[str, str]:
    return wtmod.refs(repo, state.KEPT_PREFIX)


def branches(repo: Repo) -> dict[str, str]:
    return wtmod.refs(repo, "refs/heads/" + state.BRANCH_PREFIX)


def side_branches(repo: Repo) -> dict[str, list[str]]:
    """{run id: [refs/dreams/extra/<id>/<name>, …]} for branches agents made beside their own."""
    out: dict[str, list[str]] = {}
    for name in wtmod.refs(repo, "refs/dreams/extra/"):
        dream_id, _, _rest = name.partition("/")
        out.setdefault(dream_id, []).append("refs/dreams/extra/" + name)
    return out


def resolve(repo: Repo, dirs: state.Dirs, text: str) -> str:
    """A full run id from an id or a unique prefix of one."""
    known = set(state.record_ids(dirs)) | set(kept_refs(repo)) | set(branches(repo))
    if text in known:
        return text
    hits = sorted(i for i in known if i.startswith(text)) if text else []
    if len(hits) == 1:
        return hits[0]
    if hits:
        raise MemfsError(f"git dream: '{text}' matches several runs ({', '.join(hits[:5])}); give more of the id")
    raise MemfsError(f"git dream: no dream run '{text}'; see git dream list")


def describe(repo: Repo, dirs: state.Dirs, dream_id: str) -> dict[str, Any]:
    kept = kept_refs(repo).get(dream_id)
    branch = branches(repo).get(dream_id)
    # A pass makes its run folder (the log) just before its record: no record and no
    # refs yet is a pass starting, not a run that ended unmerged.
    record = state.load_record(dirs, dream_id) or {
        "id": dream_id, "status": "unknown" if kept or branch else "running"}
    work = kept or branch
    base = record.get("base")
    info = {k: record.get(k) for k in ("id", "status", "started_at", "finished_at", "base", "agent", "sandbox",
                                       "merge", "message", "source", "to", "log", "problems", "conflicts",
                                       "uncommitted", "timed_out", "quarantine", "target_error", "rebase",
                                       "resolve", "resolved_from", "note", "dropped", "dropped_at")}
    info.update(side_branches=side_branches(repo).get(dream_id),
                kept_ref=state.KEPT_PREFIX + dream_id if kept else None,
                branch=state.BRANCH_PREFIX + dream_id if branch else None, head=work,
                commits=finalize.count(repo, base, work) if base and work else record.get("commits", 0))
    return {k: v for k, v in info.items() if v is not None}


def list_runs(repo: Repo, *, show_all: bool = False) -> Outcome:
    dirs = state.Dirs(repo.common_dir)
    ids = set(kept_refs(repo)) | set(branches(repo)) | set(side_branches(repo))
    for dream_id in state.record_ids(dirs):
        record = state.load_record(dirs, dream_id) or {}
        if show_all or record.get("status") in ("pending", "running") or record.get("quarantine"):
            ids.add(dream_id)
    runs = [describe(repo, dirs, i) for i in sorted(ids)]
    for run in runs:
        run.update(advice(run))
    if not runs:
        text = "No dream runs hold work." + ("" if show_all else " (git dream list --all shows every run.)")
    else:
        text = "\n".join(f"{r['id']}  {r.get('commits', 0):>3} commit(s)  {r['why']}"
                         + (f"\n    {'merge' if r['command'] == r.get('merge_command') else 'drop'}: {r['command']}"
                            if r.get("command") else "") for r in runs)
    return Outcome(text, extra={"runs": runs})


# Outcomes whose kept work the gate would refuse again as it is: drop them (or fix by hand).
_REFUSED = ("check_failed",)


def advice(run: dict[str, Any]) -> dict[str, Any]:
    """Why a run was kept, and the one command that merges or drops it: `finish --merge`
    where the work can go through the gate (it replays onto the new main first), `drop`
    where it cannot (rules broken, history tampered with, objects in quarantine)."""
    dream_id = run["id"]
    status = run.get("status") or "unknown"
    first = (run.get("message") or "").split(". ")[0].strip().rstrip(".")
    if status == "running":
        return {"why": "running: the dream is still working", "command": None,
                "merge_command": None, "drop_command": None}
    if status == "pending":
        reason = "waiting for review (dream.merge=explicit)"
    elif status == "merge_conflict":
        files = run.get("conflicts") or []
        reason = ("the dream conflicts with newer memory in " + ", ".join(files[:5]) if files
                  else "merging it into the memory failed")
        resolve = run.get("resolve") or {}
        if resolve.get("status"):
            reason += f"; the resolving run ended {resolve['status']}"
    elif status == "check_failed":
        problems = run.get("problems") or []
        reason = "its commits break the memory rules" + (
            f" ({problems[0].get('path')}: {problems[0].get('message')})" if problems else "")
    elif status == "dirty_uncommitted":
        reason = f"the agent left {len(run.get('uncommitted') or [])} file(s) uncommitted (kept as a commit)"
    elif status == "parent_dirty":
        reason = "the memory had uncommitted changes or stayed busy when the dream finished"
    elif run.get("quarantine"):
        reason = f"its git objects failed verification (left in {run['quarantine']})"
    else:
        reason = first or "it was not merged"
    merge_cmd = f"git dream finish {dream_id} --merge" if run.get("head") else None
    drop_cmd = f"git dream drop {dream_id}"
    mergeable = (merge_cmd is not None and status not in _REFUSED and not run.get("quarantine")
                 and "tampered" not in (run.get("message") or ""))
    return {"why": f"{status}: {reason}", "command": merge_cmd if mergeable else drop_cmd,
            "merge_command": merge_cmd if mergeable else None, "drop_command": drop_cmd}


def show(repo: Repo, text: str) -> Outcome:
    dirs = state.Dirs(repo.common_dir)
    dream_id = resolve(repo, dirs, text)
    info = describe(repo, dirs, dream_id)
    lines = [f"dream {dream_id}: {info.get('status')}"]
    for key in ("started_at", "finished_at", "agent", "base", "head", "kept_ref", "branch", "quarantine", "log"):
        if info.get(key) is not None:
            lines.append(f"  {key.replace('_', ' ')}: {info[key]}")
    if info.get("message"):
        lines.append(f"  message: {info['message']}")
    for problem in info.get("problems") or []:
        lines.append(f"  problem: {problem.get('path')}: {problem.get('message')}")
    commits: list[dict[str, str]] = []
    if info.get("base") and info.get("head"):
        res = repo.git("log", "--format=%H%x00%s", f"{info['base']}..{info['head']}", check=False)
        for line in res.lines():
            sha, _, subject = line.partition("\0")
            commits.append({"sha": sha, "subject": subject})
        stat = repo.git("diff", "--stat", f"{info['base']}..{info['head']}", check=False).out.rstrip()
        if commits:
            lines.append("")
            lines += [f"  {c['sha'][:7]} {c['subject']}" for c in commits]
        if stat:
            lines += ["", stat]
        info["diffstat"] = stat
    info["commit_list"] = commits
    if info.get("status") == "merge_conflict":
        lines += _conflict_help(repo, dream_id, info)
    return Outcome("\n".join(lines), extra=info)


def _conflict_help(repo: Repo, dream_id: str, info: dict[str, Any]) -> list[str]:
    """The paths that conflict with the current main, and the exact ways out."""
    ref = info.get("kept_ref") or info.get("branch")
    if not ref:
        return []
    paths = list(info.get("conflicts") or [])
    if not paths:  # older records: ask git which files the two sides both changed
        res = repo.git("merge-tree", "--write-tree", "--name-only", "--no-messages", "HEAD", ref, check=False)
        if res.code == 1:
            paths = list(dict.fromkeys(res.lines()[1:]))
    info["conflicts"] = paths
    steps = [f"git merge --no-ff {ref}",
             "(edit each file above: keep one version of each conflicting part, and valid frontmatter)",
             "git add -- " + " ".join(paths or ["PATH…"]), "git commit --no-edit",
             f"git dream drop {dream_id}"]
    retry = [f"git dream drop {dream_id}", "git dream   (a new pass, on top of the current main)"]
    info["resolve"] = steps[:1] + steps[2:]
    info["retry"] = retry
    return (["", "  conflicting paths (changed on main since the dream started):"]
            + [f"    {p}" for p in paths]
            + ["", "  to resolve by hand:"] + [f"    {c}" for c in steps]
            + ["  or to retry on top of the new main:"] + [f"    {c}" for c in retry])


def signs(repo: Repo) -> bool:
    """Whether a person's merge is signed here: where the person signs commits, or the
    memory lists allowed signers (so a gate can tell the person's merge from another)."""
    return repo.cfg_bool("commit.gpgsign") or approved.signers_configured(repo.root)


def finish(repo: Repo, text: str, *, merge: bool, sign: bool = False, expect: str | None = None) -> Result:
    dirs = state.Dirs(repo.common_dir)
    try:
        with DreamLock(dirs, repo.root):
            return _finish(repo, dirs, resolve(repo, dirs, text), merge, sign or signs(repo), expect)
    except Busy as exc:
        return busy_result(repo, str(exc))


def _finish(repo: Repo, dirs: state.Dirs, dream_id: str, merge: bool, sign: bool = False,
            expect: str | None = None) -> Result:
    record = state.load_record(dirs, dream_id) or {"id": dream_id}
    work = kept_refs(repo).get(dream_id) or branches(repo).get(dream_id)
    if not work:
        raise MemfsError(f"git dream: run {dream_id} holds no work to finish (status {record.get('status')})")
    if expect and expect != work:
        raise MemfsError(f"git dream: run {dream_id} changed since it was shown (its work is {work[:12]} now, "
                         f"not {expect[:12]}); nothing was merged: look at it again (git dream show {dream_id})")
    base = record.get("base") or repo.git("merge-base", "HEAD", work, check=False).out.strip()
    wt = wtmod.Worktree(dream_id, "", "", state.BRANCH_PREFIX + dream_id, base)
    source = record.get("source") or {}
    if repo.git("merge-base", "--is-ancestor", work, "HEAD", check=False).code == 0:
        out = Result("merged", dream_id, wt.branch, base, repo.git("rev-parse", "HEAD").out.strip(),
                     finalize.count(repo, base, work), merged=True,
                     message=f"Dream {dream_id} is part of the memory now; its kept refs are removed.")
    elif not merge:
        return Result("not_merged", dream_id, wt.branch, base, work, finalize.count(repo, base, work),
                      kept_ref=state.KEPT_PREFIX + dream_id,
                      message=f"Dream {dream_id} is not merged into the memory yet: review it with git dream "
                              f"show {dream_id}, then git dream finish {dream_id} --merge (or drop it).")
    else:
        trailers = []
        if source.get("key"):
            trailers += [f"Dream-Source: {source['key']}", f"Dream-Through: {source.get('end')}"]
        if record.get("sandbox") is False:
            trailers.append("Dream-Sandbox: off")
        fin = finalize.Finalizer(repo, wt, merge_mode="auto", trailers=trailers, progress=lambda _t: None,
                                 sign=sign)
        out = fin.integrate(work, allow_pending=False)
        if not out.merged:
            record.update(status=out.status, message=out.message, kept_ref=out.kept_ref,
                          **{k: v for k, v in out.extra.items() if k in ("problems", "conflicts")})
            state.save_record(dirs, record)
            return out
    wtmod.delete_ref(repo, state.KEPT_PREFIX + dream_id)
    wtmod.delete_ref(repo, BRANCHES + dream_id)
    if source.get("key"):
        consume(repo, dirs, source["key"], source.get("end"), source.get("cursor_before"), dream_id,
                parts=source.get("parts"))
    else:
        consume(repo, dirs, None, None, None, dream_id)
    record.update(status="merged", finished_at=state.utc_now(), message=out.message, kept_ref=None,
                  head=out.head, merged=True)
    state.save_record(dirs, record)
    return out


def drop(repo: Repo, text: str, *, note: str | None = None) -> Outcome | Result:
    dirs = state.Dirs(repo.common_dir)
    note = (note or "").strip() or None
    try:
        with DreamLock(dirs, repo.root):
            dream_id = resolve(repo, dirs, text)
            kept = kept_refs(repo).get(dream_id)
            branch = branches(repo).get(dream_id)
            extras = {f"refs/dreams/extra/{dream_id}/{name}": sha
                      for name, sha in wtmod.refs(repo, f"refs/dreams/extra/{dream_id}/").items()}
            for ref, sha in ((state.KEPT_PREFIX + dream_id, kept), (BRANCHES + dream_id, branch), *extras.items()):
                if sha:
                    wtmod.delete_ref(repo, ref, sha)
            record = state.load_record(dirs, dream_id) if note else None
            shutil.rmtree(dirs.run_dir(dream_id), ignore_errors=True)  # with any quarantine kept there
            if note:  # the person's reason stays with the run: what was dropped, when, why
                record = record or {"id": dream_id}
                record.update(status="dropped", dropped_at=state.utc_now(), note=note, dropped=kept or branch,
                              quarantine=None, kept_ref=None)
                state.save_record(dirs, {k: v for k, v in record.items() if v is not None})
            try:
                os.unlink(dirs.log(dream_id))
            except FileNotFoundError:
                pass
    except Busy as exc:
        return busy_result(repo, str(exc))
    sha = kept or branch
    recover = (f" Its last commit was {sha}; recover it with git update-ref {state.KEPT_PREFIX}{dream_id} {sha} "
            "until git gc prunes it.") if sha else ""
    kept_note = " Its record keeps your note (git dream show)." if note else ""
    return Outcome(f"Dropped dream {dream_id}.{recover}{kept_note}",
                   extra={"id": dream_id, "dropped": sha, "note": note})


PREVIEW_IDENT = {"GIT_AUTHOR_NAME": "git-memfs", "GIT_AUTHOR_EMAIL": "preview@git-memfs",
                 "GIT_COMMITTER_NAME": "git-memfs", "GIT_COMMITTER_EMAIL": "preview@git-memfs",
                 "GIT_AUTHOR_DATE": "@0 +0000", "GIT_COMMITTER_DATE": "@0 +0000"}


def preview(repo: Repo, dream_id: str) -> dict[str, Any]:
    """What merging a kept run would do to today's main, changing nothing: {head, work,
    conflicts} and, without conflicts, {merge: a scratch merge commit no ref names,
    problems: the gate's checks of the run's commits and of the merge}."""
    work = kept_refs(repo).get(dream_id) or branches(repo).get(dream_id)
    head = repo.head()
    if not work or not head:
        return {"head": head, "work": work, "conflicts": [], "merge": None, "problems": []}
    dirs = state.Dirs(repo.common_dir)
    base = (state.load_record(dirs, dream_id) or {}).get("base") or repo.git(
        "merge-base", "HEAD", work, check=False).out.strip()
    res = repo.git("merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", head, work,
                   check=False, ok=(0, 1))
    fields = res.out.split("\0")
    if res.code != 0:
        return {"head": head, "work": work, "conflicts": sorted({f for f in fields[1:] if f}) or ["(merge failed)"],
                "merge": None, "problems": []}
    merge = repo.git("commit-tree", fields[0].strip(), "-p", head, "-p", work, "-m", "merge(dream): preview",
                     env=PREVIEW_IDENT).out.strip()
    problems = []
    for spec in ([f"{base}..{work}"] if base else []) + [f"{merge}^!"]:  # the gate's two checks, as finish runs them
        problems += [p.as_dict() for p in check.commit_range(repo.root, spec, approvals=frozenset()).problems]
    return {"head": head, "work": work, "conflicts": [], "merge": merge, "problems": problems}
