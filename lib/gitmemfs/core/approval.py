"""A person's approval of one commit: what it approves, how it is given, how it is recorded.

Some changes are a person's to make, never an agent's: `protect` (adding, changing
or lifting `read_only` or `protectedPaths`), `constraints` (a change to
`.memfs.config.json`), `redact` (a history rewrite, `git memory redact`), `layout` (a commit that adds
or removes the root `MEMORY.md`, changing the layout). The rule
(DESIGN §0, third round): approvals are a person's act, never ambient.

- **Given by a command or an explicit flag.** `git memory protect` / `unprotect`
  grant `protect` to the one commit they make; an operation that needs approval
  passes it to `WriteSession.commit(approvals=…)`. Nothing an agent drives (the
  edit tools, `git memory call`, MCP, dreams, the Anthropic SDK class) reads an
  approval from the environment: the writer validates with exactly what its caller
  granted, and no git we start inherits the variables (`core.git.environment`), so
  an approval a shell exported cannot reach a hook through one of our commits.
- **Recorded in the commit**: the trailer `Memory-Approved: <words>` (`trailer`).
- **A person's plain `git commit`**: git gives the pre-commit hook no message to
  read, so the hook takes the approval from the committing shell (`from_shell`:
  `GIT_MEMORY_APPROVE=constraints`, or Letta's `LETTA_MEMORY_CONSTRAINTS_UPDATE=1`),
  and the person records it with `--trailer 'Memory-Approved: constraints'`.
- **Verified where it matters** (gate/approved.py): at the server gate and in
  `git memory check RANGE`, when the memory has allowed signers
  (`gpg.ssh.allowedSignersFile`), a commit's trailer counts only when git verifies
  the commit's signature by one of them; the checking process's environment then
  approves nothing. Without signers, as before: the environment of the check, and
  the trailers where `memory.approvalTrailers` is true.

A new kind of approval is a word in WORDS and a rule that asks for it. A person's
command grants it to its commit (`session.commit(…, approvals={REDACT})`: trailer,
hook environment, and a signature where the person signs commits), and a gate asks
`gate.approved.by_commit` which commits carry it, verified where signers are set.
"""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Iterable, Mapping

VAR = "GIT_MEMORY_APPROVE"
LETTA_VAR = "LETTA_MEMORY_CONSTRAINTS_UPDATE"
CONSTRAINTS = "constraints"
PROTECT = "protect"
REDACT = "redact"
LAYOUT = "layout"  # a commit that changes the repository's layout (core/layout.py)
WORDS = (CONSTRAINTS, PROTECT, REDACT, LAYOUT)
VARS = (VAR, LETTA_VAR)
TRAILER = "Memory-Approved"
NONE: frozenset[str] = frozenset()


def words(text: str) -> frozenset[str]:
    """The known words of a trailer value or a variable ("protect", "constraints, protect")."""
    found = set(text.replace(",", " ").lower().split())
    return frozenset(w for w in found if w in WORDS)


def from_shell(environ: Mapping[str, str]) -> frozenset[str]:
    """What a person's shell approved for a plain `git commit` (read by the pre-commit
    hook only), or for a check that has no signatures to go by."""
    found = set(words(environ.get(VAR) or ""))
    if (environ.get(LETTA_VAR) or "").strip().lower() in ("1", "true", "yes"):
        found.add(CONSTRAINTS)
    return frozenset(found)


def trailer(granted: Iterable[str]) -> str:
    """The line that records `granted` in the commit message."""
    return f"{TRAILER}: {' '.join(sorted(granted))}"


def for_git(granted: Iterable[str]) -> dict[str, str]:
    """The environment entries a git we start carries: exactly `granted` (read by our
    hooks if git runs them), and never Letta's variable."""
    return {VAR: " ".join(sorted(granted)), LETTA_VAR: ""}


def scrub(environ: Mapping[str, str]) -> dict[str, str]:
    """A copy of `environ` without approvals (for what an agent runs)."""
    return {k: v for k, v in environ.items() if k not in VARS}
