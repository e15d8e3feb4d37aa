"""`git memory status`: the state of a memory repo at a glance, without network.

Clean or dirty (with the encoding diagnostics the write path gives), an
operation stopped half-way, ahead/behind against the upstream as of the last
fetch (and how long ago that was), the last sync, the hooks and the mirror.
"""
from __future__ import annotations

import datetime
import os
import time
from typing import Any

from gitmemfs.core import writer
from gitmemfs.core.repo import Repo
from gitmemfs.gate import hooks
from gitmemfs.remote import mirror
from gitmemfs.remote.sync import conflicted_paths, counts, load_record, upstream_of


class StatusReport:
    code = 0

    def __init__(self, message: str, data: dict[str, Any]):
        self.message = message
        self.data = data

    def as_dict(self) -> dict[str, Any]:
        return {"ok": True, "message": self.message, **self.data}


def status(repo: Repo, *, now: float | None = None) -> StatusReport:
    now = time.time() if now is None else now
    head, branch, dirty = writer.status(repo)
    operation = writer.operation_in_progress(repo)
    conflicts = conflicted_paths(repo) if (operation or dirty) else []
    issues = writer.encoding_issues(repo.root, dirty)
    up = upstream_of(repo, branch) if branch else None
    ahead, behind = counts(repo, up.tracking) if up else (None, None)
    record = load_record(repo)
    fetched = last_fetch(repo, record, up.remote if up else None)
    data: dict[str, Any] = {
        "branch": branch, "head": head, "operation": operation, "conflicts": conflicts,
        "dirty": bool(dirty), "dirty_paths": dirty, "encoding_issues": issues,
        "upstream": up.name if up else None, "ahead": ahead, "behind": behind,
        "last_fetch": _iso(fetched), "last_fetch_age_s": None if fetched is None else round(now - fetched),
        "last_sync": record.get("last_sync"),
        "hooks": hooks.status(repo), "mirror": mirror.status(repo),
    }
    lines = [_branch_line(branch, head, up.name if up else None, ahead, behind, fetched, now)]
    if operation or conflicts:
        listed = f" (conflicted: {', '.join(conflicts[:10])})" if conflicts else ""
        lines.append(f"{(operation or 'a merge').capitalize()} is in progress{listed}; finish or abort it.")
    lines.append(writer.describe_dirty(repo.root, dirty) if dirty else "Working tree clean.")
    last = record.get("last_sync")
    if isinstance(last, dict) and last.get("state"):
        when = _ago(now - float(last.get("time") or now))
        lines.append(f"Last sync: {last['state']}, {when}" +
                     (f" ({last['error']})" if last.get("error") else "") + ".")
    lines.append("Hooks: " + _hooks_text(data["hooks"]))
    lines.append("Mirror: " + _mirror_text(data["mirror"]))
    return StatusReport("\n".join(lines), data)


def last_fetch(repo: Repo, record: dict[str, Any], remote: str | None = None) -> float | None:
    """When the remote's state was last learned: our record (clone, sync), FETCH_HEAD
    (any git fetch) or the reflogs of its remote-tracking refs (a plain clone or
    push), whichever is newest."""
    times = []
    if isinstance(record.get("last_fetch"), (int, float)):
        times.append(float(record["last_fetch"]))
    paths = [os.path.join(folder, "FETCH_HEAD") for folder in {repo.git_dir, repo.common_dir}]
    if remote:
        logs = os.path.join(repo.common_dir, "logs", "refs", "remotes", remote)
        paths += [os.path.join(root, name) for root, _, names in os.walk(logs) for name in names]
    for path in paths:
        try:
            times.append(os.stat(path).st_mtime)
        except OSError:
            pass
    return max(times) if times else None


def _branch_line(branch: str | None, head: str | None, upstream: str | None, ahead: int | None,
                 behind: int | None, fetched: float | None, now: float) -> str:
    if branch is None:
        return f"HEAD is detached at {head[:7] if head else '(none)'}; check out a branch to sync."
    where = f"On branch {branch}" + ("" if head else " (no commits yet)")
    if upstream is None:
        return where + ", no upstream (git memory sync skips it)."
    freshness = f"as of the last fetch {_ago(now - fetched)}" if fetched is not None else "never fetched"
    return (f"{where}, tracking {upstream}: {ahead} ahead, {behind} behind ({freshness}; "
            "git memory sync fetches).")


def _ago(seconds: float) -> str:
    seconds = max(0, int(seconds))
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            n = seconds // size
            return f"{n} {unit}{'s' if n != 1 else ''} ago"
    return "just now"


def _iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return datetime.datetime.fromtimestamp(ts, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _hooks_text(info: dict[str, Any]) -> str:
    where = f" in {info['hooks_dir']}" if info.get("hooks_dir") else ""
    if info.get("installed") and info.get("effective"):
        return f"installed{where}."
    if info.get("installed"):
        problems = info.get("problems") or []
        reason = f": {problems[0]}" if problems else ""
        return f"installed{where} but git will not run them{reason}."
    return "not installed (git memory hooks install)."


def _mirror_text(info: dict[str, Any]) -> str:
    if not info.get("url"):
        return "none."
    last = info.get("last_push")
    if isinstance(last, dict):
        last = ", ".join(f"{k} {v}" for k, v in last.items() if isinstance(v, (str, int, float, bool)))
    return f"{info['url']}; last push: {last or 'none yet'}."
