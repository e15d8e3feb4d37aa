"""The result of an operation: text for people, commit and paths for --json."""
from __future__ import annotations

TYPE_CHECKING = False  # `typing` costs ~7 ms of every command's start-up
if TYPE_CHECKING:
    from typing import Any


class Outcome:
    """What an edit did: the message for people, the commit and paths for --json."""

    def __init__(self, message: str, commit: str | None = None, paths: list[str] | None = None,
                 extra: dict[str, Any] | None = None):
        self.message = message
        self.commit = commit
        self.paths = paths if paths is not None else []
        self.extra = extra if extra is not None else {}

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ok": True, "message": self.message}
        if self.commit is not None:
            out["commit"] = self.commit
            out["paths"] = self.paths
        out.update(self.extra)
        return out
