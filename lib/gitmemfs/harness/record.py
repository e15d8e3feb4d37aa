"""The install record: each file an install changed, as it was and as we left it.

Uninstall puts back the bytes from before the install when the file is still the one
we wrote (byte for byte); when someone changed it since, the installer's own removal
takes our entries out and keeps the rest. Records live in the user's state folder
(`$XDG_STATE_HOME/git-memory/installs`, else ~/.local/state/...), one per harness
and scope, so nothing extra is left in the harness's folders.
"""
from __future__ import annotations

import base64
import json
import os
from typing import Any

from gitmemfs.core.errors import MemfsError


def state_dir(env: Any = os.environ) -> str:
    base = env.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "git-memory", "installs")


def record_path(harness: str, scope_key: str, env: Any = os.environ) -> str:
    import hashlib

    digest = hashlib.sha256(scope_key.encode()).hexdigest()[:16]
    return os.path.join(state_dir(env), f"{harness}-{digest}.json")


def read_bytes(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        return None


def load(path: str) -> dict[str, Any]:
    data = read_bytes(path)
    if data is None:
        return {}
    try:
        out = json.loads(data)
    except ValueError:
        raise MemfsError(f"uninstall: the install record {path} is not valid JSON; move it away and "
                         "remove the entries by hand") from None
    return out if isinstance(out, dict) else {}


def save(path: str, files: dict[str, Any], extra: dict[str, Any]) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    write_file(path, json.dumps({"files": files, **extra}, indent=2).encode() + b"\n")


def entry(before: bytes | None, after: bytes, made_dirs: list[str]) -> dict[str, Any]:
    return {"before": _b64(before), "after": _b64(after), "made_dirs": made_dirs}


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()


def before_of(item: dict[str, Any]) -> bytes | None:
    raw = item.get("before")
    return None if raw is None else base64.b64decode(raw)


def after_of(item: dict[str, Any]) -> bytes | None:
    raw = item.get("after")
    return None if raw is None else base64.b64decode(raw)


def write_file(path: str, data: bytes) -> list[str]:
    """Write `data` atomically (keeping the old file's mode); the folders it had to make."""
    made: list[str] = []
    folder = os.path.dirname(path)
    while folder and not os.path.isdir(folder):
        made.append(folder)
        folder = os.path.dirname(folder)
    for d in reversed(made):
        os.mkdir(d)
    tmp = path + ".tmp-git-memory"
    with open(tmp, "wb") as fh:
        fh.write(data)
    if os.path.exists(path):
        os.chmod(tmp, os.stat(path).st_mode & 0o777)
    os.replace(tmp, path)
    return made


def restore(path: str, item: dict[str, Any]) -> None:
    """Put `path` back as it was before the install (gone, if it was not there)."""
    before = before_of(item)
    if before is None:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        for d in item.get("made_dirs") or []:
            try:
                os.rmdir(d)  # only if empty: something else may have moved in
            except OSError:
                break
    else:
        write_file(path, before)
