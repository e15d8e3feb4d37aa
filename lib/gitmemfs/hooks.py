"""Git hook entry points and the hook installer.

Placeholder until the hooks issue lands: the interface other modules rely on is
`install_for_init(repo) -> str` (a note for init's output) and
`status(repo) -> dict` (whether our hooks are installed and will run).
"""
from __future__ import annotations

from typing import Any

from .repo import Repo


def install_for_init(repo: Repo) -> str:
    return ""


def status(repo: Repo) -> dict[str, Any]:
    return {"installed": False, "effective": False, "hooks_dir": None, "hooks": {}}
