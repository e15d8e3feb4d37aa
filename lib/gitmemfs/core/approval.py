"""What a person approved for one commit, from the environment of that commit.

`GIT_MEMORY_APPROVE` holds words separated by commas or spaces: `constraints` (a
change to `.memfs.config.json`), `protect` (adding or removing protection with
`git memory protect` / `unprotect`), `layout` (a commit that adds or removes
the root `MEMORY.md`, changing the layout). Letta's `LETTA_MEMORY_CONSTRAINTS_UPDATE=1`
approves `constraints` too. Paths an agent drives (`call`, MCP, a dream) drop these
variables before they run git (`scrub`), so only a person's shell can approve.
"""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping

VAR = "GIT_MEMORY_APPROVE"
LETTA_VAR = "LETTA_MEMORY_CONSTRAINTS_UPDATE"
CONSTRAINTS = "constraints"
PROTECT = "protect"
LAYOUT = "layout"  # a commit that changes the repository's layout (core/layout.py)
WORDS = (CONSTRAINTS, PROTECT, LAYOUT)
VARS = (VAR, LETTA_VAR)
TRAILER = "Memory-Approved"  # in commits of protect/unprotect; honoured where memory.approvalTrailers is true


def from_env(environ: Mapping[str, str]) -> frozenset[str]:
    words = set((environ.get(VAR) or "").replace(",", " ").lower().split())
    if (environ.get(LETTA_VAR) or "").strip().lower() in ("1", "true", "yes"):
        words.add(CONSTRAINTS)
    return frozenset(w for w in words if w in WORDS)


def scrub(environ: Mapping[str, str]) -> dict[str, str]:
    """A copy of `environ` without approvals (for what an agent runs)."""
    return {k: v for k, v in environ.items() if k not in VARS}
