"""The error model: every user-facing failure is a MemfsError with an exit code.

Exit codes are pinned by DESIGN §4: 0 done, 1 refused or failed, 2 usage,
3 busy (retry later), 4 environment (not a memory repo, git missing, no sandbox).
"""
from __future__ import annotations

TYPE_CHECKING = False  # `typing` costs start-up time; every command imports this module
if TYPE_CHECKING:
    from typing import Any

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_BUSY = 3
EXIT_ENV = 4


class MemfsError(Exception):
    """A failure we explain to the user in one line; `code` is the exit status."""

    code = EXIT_FAILED

    def __init__(self, message: str, *, code: int | None = None, details: dict[str, Any] | None = None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        # Extra machine-readable fields for --json output (e.g. the list of problems).
        self.details = details or {}

    def __str__(self) -> str:
        return self.message


class UsageError(MemfsError):
    code = EXIT_USAGE


class BusyError(MemfsError):
    code = EXIT_BUSY


class EnvironmentProblem(MemfsError):
    code = EXIT_ENV


PROPOSE_HINT = ("; only a person can approve this change, so it was not made. An agent may propose it "
                "instead (add --propose, or \"propose\": true in a tool call): a person then accepts or "
                "rejects it (git memory proposals)")


class NeedsPerson(MemfsError):
    """Refused only because a person must approve it: every other rule passes. `needs`
    holds the approval words (core/approval.py) it lacks; an agent may propose it."""

    def __init__(self, message: str, needs: frozenset[str], *, details: dict[str, Any] | None = None):
        super().__init__(message + PROPOSE_HINT,
                         details={**(details or {}), "needs_person": sorted(needs), "proposable": True})
        self.needs = needs


RESTORE = ("run git fsck --full to see what is lost, then restore the memory from a clone of its "
           "server (git memory clone URL) or its mirror")


def missing_object(oid: str, what: str = "object") -> EnvironmentProblem:
    """An object a tree or commit names that cannot be read: damage (exit 4), never a
    content problem such as "missing frontmatter" (core/integrity.py)."""
    return EnvironmentProblem(f"memory: {what} {oid[:12]} is missing from the object store: the memory is "
                              f"damaged; {RESTORE}")


def is_oid(spec: str) -> bool:
    """A full object id (SHA-1 or SHA-256), not a `rev:path`."""
    return len(spec) in (40, 64) and all(c in "0123456789abcdef" for c in spec)
