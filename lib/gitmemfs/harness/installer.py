"""Install and uninstall, for both harnesses: plan the files, write them, keep the record.

Each file has a `put` (the text with our entries, from the text as it is) and a `strip`
(the text without them). Uninstall puts the bytes from before the install back when
the file, our entries taken out, is what it was right after the install (so a file we
refreshed since, like AGENTS.md, still comes back byte for byte); when someone else
changed it too, it writes the file with only our entries taken out.
"""
from __future__ import annotations

import os
from typing import Any, Callable

from gitmemfs.harness import claude_code, codex, record
from gitmemfs.mcp import install as mcp_install

Edit = Callable[[bytes | None], bytes]


class File:
    def __init__(self, path: str, put: Edit, strip: Edit):
        self.path, self.put, self.strip = path, put, strip


class Done:
    """What install or uninstall did (or, dry, would do)."""

    def __init__(self, harness: str, verb: str, files: list[dict[str, Any]], note: str = ""):
        self.harness, self.verb, self.files, self.note = harness, verb, files, note

    def as_dict(self) -> dict[str, Any]:
        return {"harness": self.harness, "action": self.verb, "files": self.files, "note": self.note}

    def message(self) -> str:
        lines = [f"{f['action']} {f['path']}" for f in self.files] or [f"{self.verb}: nothing to do"]
        return "\n".join(lines + ([f"({self.note})"] if self.note else []))


def git_memory() -> list[str]:
    return mcp_install.server_command(None, None)[:-1]  # the git-memory on PATH, else `git memory`


def _json_edit(fn: Callable[[dict[str, Any]], dict[str, Any]], path: str) -> Edit:
    return lambda text: claude_code.dump(fn(claude_code.load(path, text)))


def claude_files(memory_root: str, scope: str, project: str, name: str, env: Any) -> list[File]:
    settings, mcp_json = claude_code.paths(scope, project, env)
    base = git_memory()
    server = mcp_install.server_command(memory_root, None)
    return [
        File(settings, _json_edit(lambda d: claude_code.with_ours(d, base, memory_root, scope, name), settings),
             _json_edit(lambda d: claude_code.without_ours(d, name if scope == "project" else None), settings)),
        File(mcp_json, _json_edit(lambda d: claude_code.with_server(d, mcp_json, name, server), mcp_json),
             _json_edit(lambda d: claude_code.without_server(d, name), mcp_json)),
    ]


def codex_files(memory_root: str, name: str, env: Any, compiled: str, previous: dict[str, Any]) -> list[File]:
    home = codex.home(env)
    config, agents = os.path.join(home, "config.toml"), os.path.join(home, "AGENTS.md")
    base = git_memory()
    server = mcp_install.server_command(memory_root, None)
    notify = [*base, "--memory-dir", memory_root, "hook", "codex", "notify"]

    def put_config(text: bytes | None) -> bytes:
        out, chained = codex.config_with_ours((text or b"").decode(), name, server, notify)
        previous["notify"] = chained
        codex.check(out)
        return out.encode()

    def strip_config(text: bytes | None) -> bytes:
        return codex.config_without_ours((text or b"").decode(), name, previous.get("notify")).encode()

    return [
        File(config, put_config, strip_config),
        File(agents, lambda t: codex.agents_with((t or b"").decode(), compiled).encode(),
             lambda t: codex.agents_without((t or b"").decode()).encode()),
    ]


def install(harness: str, key: str, files: list[File], *, dry_run: bool, env: Any,
            extra: dict[str, Any] | None = None) -> Done:
    rec_path = record.record_path(harness, key, env)
    rec = record.load(rec_path)
    kept: dict[str, Any] = rec.get("files") or {}
    out: list[dict[str, Any]] = []
    plans = []
    for f in files:
        current = record.read_bytes(f.path)
        new = f.put(current)
        plans.append((f, current, new))
        out.append({"path": f.path, "action": ("would write" if dry_run else "wrote") if new != current
                    else "unchanged", "content": new.decode(errors="replace")})
    if dry_run:
        return Done(harness, "install", out, "dry run: nothing written")
    for f, current, new in plans:
        made = record.write_file(f.path, new) if new != current else []
        old = kept.get(f.path)
        if old is not None and _ours_since(f, current, old):  # a re-install: the first "before" stays
            kept[f.path] = {**old, "after": record.entry(None, new, [])["after"]}
        else:  # changed by someone since an earlier install: "before" is theirs, without ours
            before = current if old is None or current is None else f.strip(current)
            kept[f.path] = record.entry(before, new, made if old is None else old.get("made_dirs") or [])
    record.save(rec_path, kept, {"extra": {**(rec.get("extra") or {}), **(extra or {})}})
    return Done(harness, "install", [{k: v for k, v in o.items() if k != "content"} for o in out])


def uninstall(harness: str, key: str, files: list[File], *, dry_run: bool, env: Any) -> Done:
    rec_path = record.record_path(harness, key, env)
    rec = record.load(rec_path)
    kept: dict[str, Any] = rec.get("files") or {}
    out: list[dict[str, Any]] = []
    for f in files:
        current = record.read_bytes(f.path)
        item = kept.get(f.path)
        if item is not None and _ours_since(f, current, item):
            action = "restored"
            if not dry_run:
                record.restore(f.path, item)
        elif current is not None:
            stripped = f.strip(current)
            if stripped == current:
                continue
            action = "removed our entries from"
            if not dry_run:
                record.write_file(f.path, stripped)
        else:
            continue
        out.append({"path": f.path, "action": ("would be " if dry_run else "") + action})
    if not dry_run:
        try:
            os.unlink(rec_path)
        except FileNotFoundError:
            pass
    note = "" if kept or not out else "no install record: only our entries were taken out"
    return Done(harness, "uninstall", out, note)


def _ours_since(f: File, current: bytes | None, item: dict[str, Any]) -> bool:
    """Whether `current` is the file as our last install left it, our entries aside."""
    after = record.after_of(item)
    return current == after or (current is not None and f.strip(current) == f.strip(after))


def previous_notify(harness_key: str, env: Any) -> dict[str, Any]:
    rec = record.load(record.record_path("codex", harness_key, env))
    extra = rec.get("extra") or {}
    return {"notify": extra.get("notify")} if isinstance(extra, dict) else {}

