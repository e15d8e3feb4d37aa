"""Where a dream keeps its files, run ids, run records and the persistent state.

Everything lives under `<git-common-dir>/dream/`, so it is shared by all work
trees of the repository, never shows up in `git status`, and goes away with
the repository:

    dream/lock                 the cross-process lock (flock), held for a whole pass
    dream/state.json           source cursors and the last consuming dream
    dream/worktrees/<id>/      the agent's worktree while it runs
    dream/runs/<id>/           run.json (the record), prompt.md, transcript.json
    dream/logs/<id>.log        what the pass and the agent printed
    dream/logs/background.log  output of detached (--background / hook) launches

Only a process holding the lock writes state.json or a run record.
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import time
from typing import Any

KEPT_PREFIX = "refs/dreams/kept/"
BRANCH_PREFIX = "dream/"
KEEP_RECORDS = 100   # finished runs without kept work beyond this are pruned
KEEP_LOGS = 100


class Dirs:
    def __init__(self, common_dir: str):
        self.common = common_dir
        self.root = os.path.join(common_dir, "dream")
        self.lock = os.path.join(self.root, "lock")
        self.state = os.path.join(self.root, "state.json")
        self.worktrees = os.path.join(self.root, "worktrees")
        self.runs = os.path.join(self.root, "runs")
        self.logs = os.path.join(self.root, "logs")

    def ensure(self) -> None:
        for path in (self.root, self.worktrees, self.runs, self.logs):
            os.makedirs(path, exist_ok=True)

    def run_dir(self, dream_id: str) -> str:
        return os.path.join(self.runs, dream_id)

    def log(self, dream_id: str) -> str:
        return os.path.join(self.logs, f"{dream_id}.log")

    def worktree(self, dream_id: str) -> str:
        return os.path.join(self.worktrees, dream_id)


def new_id(now: float | None = None) -> str:
    """`YYYYMMDDHHMMSS-<8 hex>` in UTC."""
    stamp = time.strftime("%Y%m%d%H%M%S", time.gmtime(time.time() if now is None else now))
    return f"{stamp}-{secrets.token_hex(4)}"


def is_id(text: str) -> bool:
    stamp, _, suffix = text.partition("-")
    return len(stamp) == 14 and stamp.isdigit() and len(suffix) == 8 and all(c in "0123456789abcdef" for c in suffix)


def utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def write_json(path: str, data: Any) -> None:
    """Atomic replace, so a killed pass never leaves half a file."""
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2, sort_keys=True, ensure_ascii=False)
        fh.write("\n")
    os.replace(tmp, path)


def read_json(path: str) -> Any:
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return None


# -- state.json -------------------------------------------------------------------------

def load_state(dirs: Dirs) -> dict[str, Any]:
    data = read_json(dirs.state)
    if not isinstance(data, dict):
        data = {}
    data.setdefault("schema", 1)
    if not isinstance(data.get("sources"), dict):
        data["sources"] = {}
    return data


def save_state(dirs: Dirs, data: dict[str, Any]) -> None:
    dirs.ensure()
    write_json(dirs.state, data)


# -- run records ------------------------------------------------------------------------

def save_record(dirs: Dirs, record: dict[str, Any]) -> None:
    folder = dirs.run_dir(record["id"])
    os.makedirs(folder, exist_ok=True)
    write_json(os.path.join(folder, "run.json"), record)


def load_record(dirs: Dirs, dream_id: str) -> dict[str, Any] | None:
    data = read_json(os.path.join(dirs.run_dir(dream_id), "run.json"))
    return data if isinstance(data, dict) else None


def record_ids(dirs: Dirs) -> list[str]:
    try:
        names = os.listdir(dirs.runs)
    except FileNotFoundError:
        return []
    return sorted(n for n in names if is_id(n))


def consume(dirs: Dirs, head: str, source_key: str | None, end_id: str | None, cursor_before: str | None,
            dream_id: str | None, parts: list[dict[str, Any]] | None = None) -> None:
    """A consuming dream (merged or no_changes) finished: advance its source's cursor (and
    keep where it began, which --reread starts from) and remember the parent HEAD it
    left, which the automatic trigger counts from. A source of several sessions
    (`parts`) advances one cursor per session file instead."""
    data = load_state(dirs)
    for part in parts or []:
        entry = data["sources"].setdefault(part["key"], {})
        if part.get("end") and entry.get("cursor") == part.get("cursor_before"):
            entry.update(cursor=part["end"], previous=part.get("cursor_before"), updated_at=utc_now(),
                         dream=dream_id)
    if source_key and end_id and not parts:
        entry = data["sources"].setdefault(source_key, {})
        if entry.get("cursor") == cursor_before:  # a newer dream may have moved it meanwhile
            # `previous`: where this dream began reading, for `git dream --reread`
            entry.update(cursor=end_id, previous=cursor_before, updated_at=utc_now(), dream=dream_id)
    data["last_dream"] = {"id": dream_id, "head": head, "at": utc_now()}
    save_state(dirs, data)


def prune(dirs: Dirs, keep: set[str]) -> None:
    """Drop the oldest run folders and logs, never those in `keep` (runs holding work)."""
    ids = [i for i in record_ids(dirs) if i not in keep]
    for dream_id in ids[:max(0, len(ids) - KEEP_RECORDS)]:
        shutil.rmtree(dirs.run_dir(dream_id), ignore_errors=True)
    try:
        logs = sorted(n for n in os.listdir(dirs.logs) if n.endswith(".log") and is_id(n[:-4]))
    except FileNotFoundError:
        return
    logs = [n for n in logs if n[:-4] not in keep]
    for name in logs[:max(0, len(logs) - KEEP_LOGS)]:
        try:
            os.unlink(os.path.join(dirs.logs, name))
        except OSError:
            pass
