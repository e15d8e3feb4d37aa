"""`git memory protect PATH… -m REASON` and `unprotect`: a person's way to add or lift
protection, in one commit.

In the letta layout a Markdown file gets (or loses) `read_only: true` in its
frontmatter; anything else (plain, and non-Markdown files) is listed in (or removed
from) `protectedPaths` in `.memfs.config.json`. The letta-root layout has neither
that Letta accepts, so `protect` refuses there (`unprotect` still lifts a listing).
The command is the person's approval (core/approval.py): its commit carries
`Memory-Approved: protect`, and is signed when the person asks (`--sign`) or signs
commits anyway (commit.gpgsign), so a gate with allowed signers can tell it from an
agent's. No tool an agent is given (call, MCP, the SDK class, dreams) runs it, and
every gate refuses an agent commit that adds or lifts protection.
"""
from __future__ import annotations

import json
import os
from typing import Sequence

from gitmemfs.core import approval, constraints, memfile, paths
from gitmemfs.core import layout as layouts
from gitmemfs.core.errors import MemfsError, UsageError
from gitmemfs.core.outcome import Outcome
from gitmemfs.core.repo import Repo
from gitmemfs.core.writer import Change, WriteSession

# Letta's own validator refuses `read_only` in a root-index memory's frontmatter and
# every key of .memfs.config.json it does not know (protectedPaths among them), so
# either record would make every later Letta commit fail (issue 27, item 11).
ROOT_REFUSAL = ("protect: protection cannot exist in the letta-root layout: Letta Code refuses read_only in "
                "its frontmatter and protectedPaths in .memfs.config.json, so every Letta commit would fail; "
                "keep files that need protection in a system/-layout or plain memory (git memory unprotect "
                "still lifts an existing protectedPaths entry)")


def _paths(repo: Repo, raw: Sequence[str], command: str) -> list[str]:
    if not raw:
        raise UsageError(f"{command}: name at least one PATH")
    out = []
    for item in raw:
        try:
            label = paths.normalize_label(item, "path", repo.root, tool=command)
            # `human`, `human.md` and a file of any other name all work
            rel = label if os.path.isfile(os.path.join(repo.root, label)) else paths.file_of(label)
            paths.check_jail(repo.root, rel, tool=command)
        except paths.PathError as exc:
            raise MemfsError(str(exc)) from None
        out.append(rel)
    return list(dict.fromkeys(out))


def _config(data: bytes | None) -> dict[str, object]:
    if data is None:
        return {"version": 1}
    try:
        return constraints.parse(data)
    except constraints.ConstraintsError as exc:
        raise MemfsError(f"{constraints.FILE} {exc}; fix it first (git memory doctor)") from None


def _with_read_only(data: bytes, rel: str, on: bool) -> bytes:
    mf = memfile.parse(memfile.decode_strict(data, rel))
    mf.entries = [e for e in mf.entries if e.key != "read_only"]
    if on:
        mf.entries.append(memfile.Entry("read_only", "true", "read_only: true"))
    mf.head = None  # the frontmatter changes: render it, don't keep the old bytes
    return memfile.render_file(mf).encode()


def change(repo: Repo, raw: Sequence[str], reason: str, *, protect: bool, sign: bool = False) -> Outcome:
    command = "protect" if protect else "unprotect"
    if not reason or not reason.strip():
        raise UsageError(f"{command}: give the reason with -m")
    with WriteSession(repo, tool=command) as session:
        layout = layouts.of_repo(repo)[0]
        if protect and layout == layouts.ROOT:
            raise MemfsError(ROOT_REFUSAL)
        rels = _paths(repo, raw, command)
        edits: dict[str, bytes | None] = {}
        listed: list[str] = []
        for rel in rels:
            data = session.read(rel)
            if data is None:
                raise MemfsError(f"{command}: {rel} does not exist")
            if layout == layouts.LETTA and layouts.is_markdown(rel):
                try:
                    edits[rel] = _with_read_only(data, rel, protect)
                except (memfile.FrontmatterError, memfile.EncodingProblem) as exc:
                    raise MemfsError(f"{command}: {rel} has no readable frontmatter ({exc})") from None
            else:
                listed.append(rel)
        old_config = session.read(constraints.FILE)
        settings = _config(old_config)
        listed_before = settings.get(constraints.PROTECTED_KEY)
        current = [p for p in listed_before if isinstance(p, str)] if isinstance(listed_before, list) else []
        if protect:
            current += [p for p in listed if p not in current]
        else:
            current = [p for p in current if p not in listed]
        if current:
            settings[constraints.PROTECTED_KEY] = current
        else:
            settings.pop(constraints.PROTECTED_KEY, None)
        if listed:
            edits[constraints.FILE] = (json.dumps(settings, indent=2) + "\n").encode()
        changes = [Change(rel, data) for rel, data in edits.items() if data != session.read(rel)]
        if not changes:
            state = "protected" if protect else "unprotected"
            raise MemfsError(f"{command}: {', '.join(rels)} already {state}; nothing to commit")
        sha = session.commit(changes, op=command, reason=reason, paths=rels, label=f"memory {command}",
                             approvals=frozenset({approval.PROTECT}), sign=sign)
    return Outcome(f"Memory {command} committed ({sha[:7]}).", sha, rels)
