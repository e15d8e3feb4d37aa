"""`dream.resolve=agent`: what a resolving run is told when a dream still conflicts.

When a dream's commits conflict with memory commits made while it ran, even replayed
on top of them, and `git config dream.resolve agent` is set, the agent runs once more
in a new sandboxed worktree checked out at the new HEAD. Its prompt carries, for every
conflicting file, the conflict hunks (the file as `git merge-tree` leaves it, with
conflict markers), the memory's current version and the dream's version, plus the
dream's commit messages (its intent). Its commits then go through the same gate as any
dream. This module builds that prompt; lifecycle.py runs the agent.
"""
from __future__ import annotations

from typing import Any, Sequence

from gitmemfs.core.repo import Repo
from gitmemfs.dream import payload

MODES = ("off", "agent")
FILE_LIMIT = 12_000  # characters per version shown; longer files are cut with a notice

HEADER = """\
# Dream pass: resolve a conflict with newer memory

An earlier dream pass changed this memory, but while it ran the memory moved on, and
its changes conflict with the newer commits. You are working in a fresh checkout of
the memory as it is NOW (`$MEMORY_DIR`, on branch `$DREAM_BRANCH`). Bring in what the
dream meant to change, reconciled with the newer memory:

- keep every newer fact unless the dream's change clearly supersedes it, and keep the
  dream's intent (its commit messages are below);
- edit only the files listed here, with `git memory` commands (or edit and `git commit`);
  never leave conflict markers in a file;
- commit when done, with a message that says what you reconciled. If nothing should
  change, commit nothing.

"""


def mode(repo: Repo) -> str:
    value = (repo.cfg("dream.resolve") or "off").strip().lower()
    return value if value in MODES else "off"


def _cut(text: str) -> str:
    if len(text) <= FILE_LIMIT:
        return text
    return text[:FILE_LIMIT] + f"\n… [cut: {len(text) - FILE_LIMIT} more characters; read the file itself]"


def _show(repo: Repo, spec: str) -> str | None:
    res = repo.git("cat-file", "blob", spec, check=False)
    return res.raw.decode("utf-8", "replace") if res.code == 0 else None


def conflicts(repo: Repo, base: str, target: str, head: str) -> list[dict[str, Any]]:
    """For each path that conflicts when `head` (the dream) merges into `target` (the
    memory now): the hunks (the file with conflict markers), both versions and the base."""
    res = repo.git("merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", target, head,
                   check=False, ok=(0, 1))
    fields = res.out.split("\0")
    if res.code != 1 or not fields[0].strip():
        return []
    tree = fields[0].strip()
    out = []
    for path in sorted({f for f in fields[1:] if f}):
        out.append({"path": path, "hunks": _show(repo, f"{tree}:{path}"), "memory": _show(repo, f"{target}:{path}"),
                    "dream": _show(repo, f"{head}:{path}"), "base": _show(repo, f"{base}:{path}")})
    return out


def intent(repo: Repo, base: str, head: str) -> list[str]:
    res = repo.git("log", "--reverse", "--format=%s%n%n%b%x00", f"{base}..{head}", check=False)
    return [m.strip() for m in res.out.split("\0") if m.strip()]


def _block(title: str, text: str | None) -> str:
    if text is None:
        return f"{title}: (the file does not exist on this side)\n"
    fence = "````" if "```" in text else "```"
    return f"{title}:\n\n{fence}\n{_cut(text)}{'' if text.endswith(chr(10)) else chr(10)}{fence}\n"


def prompt(found: Sequence[dict[str, Any]], messages: Sequence[str], files: Sequence[tuple[str, bytes]]) -> str:
    parts = [HEADER, "## The dream's commits (its intent)\n"]
    parts += [f"- {m.splitlines()[0]}" + ("".join(f"\n  {line}" for line in m.splitlines()[1:] if line.strip()))
              for m in messages] or ["- (no message)"]
    parts.append("\n## Conflicting files\n")
    for item in found:
        parts.append(f"### {item['path']}\n")
        parts.append(_block("Conflict hunks (the merge, with <<<<<<< ======= >>>>>>> markers; the first side "
                            "is the memory now, the second the dream)", item["hunks"]))
        parts.append(_block("The memory now (your checkout)", item["memory"]))
        parts.append(_block("The dream's version", item["dream"]))
    parts.append("## Snapshot of the memory now\n\n" + payload.snapshot(files) + "\n")
    return "\n".join(parts)
