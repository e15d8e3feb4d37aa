"""The post-commit mirror (memory.mirrorUrl / letta.memoryRepository.url).

Placeholder until the hooks issue lands; `status(repo) -> dict` is the interface
`git memory status` uses.
"""
from __future__ import annotations

from typing import Any

from .repo import Repo


def status(repo: Repo) -> dict[str, Any]:
    return {"url": None, "last_push": None}
