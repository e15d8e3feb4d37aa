"""What each view of the page shows, read through the operations (view/, dream/, remote/).

Every function takes an open Repo and returns plain data for a template; nothing here
writes. Large memories stay fast: the overview reads one snapshot and one compile, the
history reads one page of `git log` (--skip/-n), the plots sample at most PLOT_POINTS
commits.
"""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from gitmemfs.core import cachedir, constraints
from gitmemfs.core import layout as layouts
from gitmemfs.core.errors import MemfsError
from gitmemfs.core.repo import Repo
from gitmemfs.core.snapshot import is_hidden, load, read_doc
from gitmemfs.dream import state
from gitmemfs.remote.status import status
from gitmemfs.review import pending
from gitmemfs.view import compile as compiler
from gitmemfs.view import history, tokens
from gitmemfs.view.search import search as ranked_search

PAGE = 50  # commits per history page
SCAN = 2000  # commits a kind filter looks through per page at most
PLOT_POINTS = 40
KINDS = ("agent", "dream", "human")


def _layout(repo: Repo, snap: Any) -> str:
    try:
        return compiler.layout_of(snap, repo.cfg(layouts.CONFIG_KEY))
    except ValueError as exc:
        raise MemfsError(f"{exc}; fix it with git config memory.layout letta") from None


def limits_of(snap: Any, layout: str) -> constraints.Constraints:
    entry = next((e for e in snap.files if e.path == constraints.FILE), None)
    data = snap.read([entry]).get(entry.oid) if entry else None
    try:
        found = constraints.load(data, layout)
    except constraints.ConstraintsError:
        found = None
    return found or constraints.Constraints({}, present=False)


# The prompt's figures of the last few commits shown: a commit never changes, and the
# overview is the page a person reloads (a 10,000-file compile is most of its time).
_PROMPTS: OrderedDict[tuple[str, str, str, str], dict[str, Any]] = OrderedDict()
_PROMPTS_KEPT = 8
_PROMPTS_LOCK = threading.Lock()  # requests run in worker threads


def prompt(repo: Repo, head: str | None = None) -> dict[str, Any]:
    """The compiled prompt's size against its limits, per pinned file, at HEAD (`head`
    when the caller has read it)."""
    # A commit and the configured layout decide everything below: look before listing it.
    store = compiler.hosted_store(repo.cfg)  # a hosted store's description is in the prompt too
    key = (repo.root, head or repo.head() or "", repo.cfg(layouts.CONFIG_KEY) or "", repr(store))
    with _PROMPTS_LOCK:
        if key in _PROMPTS:
            return _PROMPTS[key]
    snap = load(repo.root, key[1] or "HEAD")
    layout = _layout(repo, snap)
    projection, _ = compiler.project(snap, cache=repo.cache(cachedir.DESCRIPTIONS), layout=layout,
                                     hosted=store)
    report = tokens.count(projection, snap.revision, None, layout)
    limits = limits_of(snap, layout)
    rows = []
    for f in report.files:
        if f.in_context:
            limit = limits.limit_for(f.path)[0]
            rows.append((f.path, f.tokens, tokens.estimate(limit) if limit else None))
    found = {"revision": snap.revision, "layout": layout, "total": report.total_tokens,
             "budget": tokens.estimate(limits.max_core), "limits": limits, "rows": rows[:40],
             "pinned": sum(1 for f in report.files if f.in_context), "files": len(snap.files)}
    with _PROMPTS_LOCK:
        _PROMPTS[key] = found
        while len(_PROMPTS) > _PROMPTS_KEPT:
            _PROMPTS.popitem(last=False)
    return found


def overview(repo: Repo) -> dict[str, Any]:
    with ThreadPoolExecutor(1) as pool:  # git status works while the prompt compiles
        sync = pool.submit(lambda: status(Repo(repo.root, repo.git_dir, repo.common_dir, dict(repo.config))))
        head = repo.head()
        found = prompt(repo, head)
        items = pending.every(repo, head)
        return {**found, "pending": items, "dream": last_dream(repo), "sync": sync.result().data}


def last_dream(repo: Repo) -> dict[str, Any] | None:
    dirs = state.Dirs(repo.common_dir)
    ids = state.record_ids(dirs)
    return (state.load_record(dirs, ids[-1]) or {"id": ids[-1]}) if ids else None


def files(repo: Repo) -> dict[str, Any]:
    snap = load(repo.root, "HEAD")
    layout = _layout(repo, snap)
    shown = [e.path for e in snap.files if not is_hidden(e.path)]
    pinned = [p for p in shown if layouts.is_core(p, layout)]
    return {"pinned": pinned, "external": [p for p in shown if p not in set(pinned)], "layout": layout}


def one_file(repo: Repo, path: str) -> dict[str, Any]:
    shown = history.show(repo, path)
    doc = read_doc(shown.path, shown.data)
    meta = {}
    text = shown.data.decode("utf-8", "replace")
    if text.startswith("---\n") and "\n---" in text[4:]:
        head = text[4:].split("\n---", 1)[0]
        meta = {"raw": head}
    return {"path": shown.path, "doc": doc, "frontmatter": meta.get("raw"),
            "log": history.log(repo, [shown.path], n=50).entries}


def timeline(repo: Repo, page: int, path: str = "", kind: str = "", op: str = "") -> dict[str, Any]:
    paths = [path] if path else []
    skip = page * PAGE
    if kind not in KINDS:
        found = history.log(repo, paths, n=PAGE + 1, skip=skip, op=op or None).entries
    else:  # the kind is read from each commit, so look through a window of them
        found, seen, wanted = [], 0, skip + PAGE + 1
        while len(found) < wanted and seen < skip + SCAN:
            chunk = history.log(repo, paths, n=500, skip=seen, op=op or None).entries
            if not chunk:
                break
            seen += len(chunk)
            found += [e for e in chunk if e.kind == kind]
        found = found[skip:]
    return {"entries": found[:PAGE], "more": len(found) > PAGE, "page": page,
            "path": path, "kind": kind, "op": op}


def commit(repo: Repo, sha: str) -> dict[str, Any]:
    entries = history.log(repo, n=1, rev=sha).entries
    if not entries:
        raise MemfsError(f"review: no commit {sha[:12]} in this memory")
    entry = entries[0]
    parent = entry.parents[0] if entry.parents else None
    return {"entry": entry, "diff": history.tree_diff(repo, parent, entry.sha)}


def find(repo: Repo, query: str, in_history: bool) -> Any:
    return ranked_search(repo, query, history=in_history, limit=30) if query.strip() else None


# The token sizes of one commit's files: a commit never changes, and a reload samples
# mostly the same commits (the step grows only every PLOT_POINTS commits).
_SIZES: OrderedDict[tuple[str, str, str], dict[str, int]] = OrderedDict()
_SIZES_KEPT = 4 * PLOT_POINTS
WEEKS = 26
_PLACES: dict[str, dict[str, str]] = {}  # layout -> path -> "pinned", "external" or "" (hidden)
_PLACES_KEPT = 200_000
_KIND_FORMAT = "%ct%x1f%ae%x1f%(trailers:key=Dream-Id,valueonly,separator=%x2c)"


def sizes(repo: Repo, sha: str) -> dict[str, int]:
    """Tokens of the files at `sha`, pinned and external (each file as `tokens.estimate` counts it)."""
    key = (repo.common_dir, sha, repo.cfg(layouts.CONFIG_KEY) or "")
    with _PROMPTS_LOCK:
        if key in _SIZES:
            return _SIZES[key]
    listing = "\0" + repo.git("ls-tree", "-r", "-l", "-z", "--full-tree", sha, spool=True).out
    snap_layout = layouts.detect(repo.cfg(layouts.CONFIG_KEY), f"\t{layouts.INDEX}\0" in listing)
    parts = {"pinned": 0, "external": 0}
    where = _PLACES.setdefault(snap_layout, {})  # a path's place, for every sample of every plot
    for line in listing.split("\0"):
        meta, _, path = line.partition("\t")
        bits = meta.split(" ")
        if len(bits) < 4 or bits[1] != "blob" or not bits[-1].isdigit():
            continue
        size = bits[-1]
        place = where.get(path)
        if place is None:
            place = where[path] = ("" if is_hidden(path) else
                                   "pinned" if layouts.is_core(path, snap_layout) else "external")
        if place:
            parts[place] += tokens.estimate(int(size))
    if len(where) > _PLACES_KEPT:
        where.clear()
    with _PROMPTS_LOCK:
        _SIZES[key] = parts
        while len(_SIZES) > _SIZES_KEPT:
            _SIZES.popitem(last=False)
    return parts


def plots(repo: Repo) -> dict[str, Any]:
    """Size over time (pinned vs external, tokens of the files) and edits per week by kind."""
    res = repo.git("log", "--first-parent", "--format=%H %ct", check=False)
    commits = [line.split() for line in res.lines() if line.strip()][::-1]
    step = max(1, len(commits) // PLOT_POINTS)
    picked = commits[::step][-PLOT_POINTS:] if commits else []
    if commits and picked[-1] != commits[-1]:
        picked.append(commits[-1])
    size = [(time.strftime("%m-%d", time.gmtime(int(when))), sizes(repo, sha)) for sha, when in picked]
    # Who made each commit of the last weeks: its time, author and Dream-Id only (no diffs:
    # `history.log` lists each commit's paths, seconds of tree diffs for 5,000 commits).
    found = repo.git("log", f"--format={_KIND_FORMAT}", "-z", "-n5000", check=False)
    weeks: dict[str, dict[str, int]] = {}
    agents = history.agent_emails(repo)
    for record in found.out.split("\0"):
        when, _, rest = record.strip("\n").partition("\x1f")
        email, _, dream_id = rest.partition("\x1f")
        if not when.isdigit():
            continue
        kind = history.classify(email, {"Dream-Id": [dream_id]} if dream_id.strip() else {}, agents)
        week = time.strftime("%G-W%V", time.gmtime(int(when)))
        weeks.setdefault(week, {}).setdefault(kind, 0)
        weeks[week][kind] += 1
    return {"size": size, "weeks": sorted(weeks.items())[-WEEKS:]}
