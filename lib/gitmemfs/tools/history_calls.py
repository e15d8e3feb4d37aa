"""The read and undo operations in `git memory call` (Letta schema): `search`, `log`,
`show`, `diff`, `undo` and `restore` as `command` values beside the memory tool's own.

    {"command": "search", "query": "phone", "paths": ["system/"], "limit": 5, "history": false}
    {"command": "log", "file_path": "system/contacts.md", "limit": 10, "op": "str_replace"}
    {"command": "undo", "commit": "abc1234" | "last": true | "dream_id": "...", "reason": "..."}
    {"command": "restore", "file_path": "notes/x.md", "rev": "abc1234", "reason": "..."}

Only undo and restore write, so only they need a reason. Answers are the same
objects the CLI prints with --json.
"""
from __future__ import annotations

from typing import Any, Callable

from gitmemfs.core.errors import MemfsError
from gitmemfs.core.repo import Repo

COMMANDS = ("search", "log", "show", "diff", "undo", "restore")


def _opt_str(args: dict[str, Any], key: str) -> str | None:
    value = args.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise MemfsError(f"memory {args.get('command')}: '{key}' must be a string")
    return value


def _paths(args: dict[str, Any]) -> list[str]:
    value = args.get("paths", args.get("file_path", args.get("path")))
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    raise MemfsError(f"memory {args.get('command')}: 'paths' must be a string or a list of strings")


def _int(args: dict[str, Any], key: str, default: int | None) -> int | None:
    value = args.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise MemfsError(f"memory {args.get('command')}: '{key}' must be a positive integer")
    return value


def call(command: str, args: dict[str, Any], open_repo: Callable[[], Repo]) -> Any:
    if command == "search":
        from gitmemfs.view.search import search

        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            raise MemfsError("memory search: 'query' must be a non-empty string")
        return search(open_repo(), query, _paths(args), regex=bool(args.get("regex")),
                      where=_opt_str(args, "in") or "all", rev=_opt_str(args, "rev"),
                      history=bool(args.get("history")), limit=_int(args, "limit", 20) or 20,
                      lines=_int(args, "lines", 3) or 3, budget=_int(args, "budget", None),
                      pinned=_opt_str(args, "pinned") or "rank")
    if command == "log":
        from gitmemfs.view.history import log

        return log(open_repo(), _paths(args), n=_int(args, "limit", None), since=_opt_str(args, "since"),
                   op=_opt_str(args, "op"), dreams=bool(args.get("dreams")))
    if command == "show":
        from gitmemfs.view.history import show

        path = _opt_str(args, "file_path") or _opt_str(args, "path")
        if path is None:
            raise MemfsError("memory show: 'file_path' must be a non-empty string")
        return show(open_repo(), path, _opt_str(args, "rev"))
    if command == "diff":
        from gitmemfs.view.history import diff

        return diff(open_repo(), _opt_str(args, "rev"), _paths(args))
    from gitmemfs.edit import undo as ops

    dry_run = bool(args.get("dry_run"))
    if command == "undo":
        return ops.undo(open_repo(), _opt_str(args, "commit"), last=bool(args.get("last")),
                        dream=_opt_str(args, "dream_id"), reason=args.get("reason"), dry_run=dry_run)
    path = _opt_str(args, "file_path") or _opt_str(args, "path")
    rev = _opt_str(args, "rev")
    if path is None or rev is None:
        raise MemfsError("memory restore: 'file_path' and 'rev' must be non-empty strings")
    return ops.restore(open_repo(), path, rev, args.get("reason"), dry_run=dry_run)
