"""What a redaction removed stays removed at the server gate.

A verified redaction (gate/redaction.py) rewrites a memory branch; the commits it
replaced (`old --not new`) still hold the text it took out. Another ref that reaches
one of them (a tag, another branch, a proposal) would keep that text on the server and
in every clone that fetches it, and a later push (a stale clone's tag) could bring one
back. So the gate

- refuses a redaction while a ref it leaves in place still reaches a replaced commit:
  that ref is deleted first, or moved in the same push;
- notes the replaced commits once it accepts the redaction (`memory-redacted` in the
  git directory), and refuses any later push that makes one of them reachable again.
"""
from __future__ import annotations

import os

from gitmemfs.core import git, rules
from gitmemfs.gate.branches import state_file

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Iterable, Sequence

ZERO = ("0" * 40, "0" * 64)
NOTE = "memory-redacted"
KEPT = ("still reaches commits this redaction replaces ({sha}): the redacted text would stay on the server; "
        "delete that ref first (git push origin :{ref}) or move it in the same push")
BACK = ("brings back commit {sha}, which a redaction replaced: the text it removed would be in this memory "
        "again (fetch the redacted history first: git memory sync)")


def replaced(cwd: str, old: str, new: str, env: dict[str, str] | None = None) -> list[str]:
    """The commits of `old`'s history that the redaction to `new` replaced."""
    res = git.run(["rev-list", "--parents", old, "--not", new], cwd=cwd, env=env)
    return [line.split(" ", 1)[0] for line in res.out.splitlines() if line]


def _roots(cwd: str, commits: Sequence[str], env: dict[str, str] | None) -> list[str]:
    """The replaced commits none of whose parents was replaced: every other one
    descends from one of them, so a ref reaches a replaced commit iff it reaches a root."""
    res = git.run(["rev-list", "--no-walk=unsorted", "--parents", "--stdin"], cwd=cwd, env=env,
                  input="\n".join(commits) + "\n")
    inside = set(commits)
    return [parts[0] for parts in (line.split(" ") for line in res.out.splitlines() if line)
            if not inside.intersection(parts[1:])]


def still_reaching(cwd: str, gone: Sequence[str], updates: Sequence[tuple[str, str, str]],
                   env: dict[str, str] | None = None) -> list[rules.Problem]:
    """The refs that, after this push, would still reach a commit in `gone`."""
    if not gone:
        return []
    moving = {ref: new for _old, new, ref in updates}
    found: dict[str, str] = {}
    for root in _roots(cwd, gone, env):
        res = git.run(["for-each-ref", "--format=%(refname)", f"--contains={root}"], cwd=cwd, env=env, check=False)
        for ref in res.out.split():
            if ref not in moving:
                found.setdefault(ref, root)
        for ref, new in moving.items():
            if new not in ZERO and ref not in found and git.run(
                    ["merge-base", "--is-ancestor", root, new], cwd=cwd, env=env, check=False).code == 0:
                found[ref] = root
    return [rules.Problem(ref, KEPT.format(sha=sha[:12], ref=ref)) for ref, sha in sorted(found.items())]


def brought_back(cwd: str, updates: Sequence[tuple[str, str, str]],
                 env: dict[str, str] | None = None) -> list[rules.Problem]:
    """The updates whose new tip reaches a commit an accepted redaction replaced."""
    known = noted(cwd, env)
    tips = [(new, ref) for _old, new, ref in updates if new not in ZERO]
    if not known or not tips:
        return []
    out = []
    for new, ref in tips:  # what the tip brings that no ref here reaches yet
        res = git.run(["rev-list", new, "--not", "--all"], cwd=cwd, env=env, check=False)
        back = [sha for sha in res.out.split() if sha in known]
        if back:
            out.append(rules.Problem(ref, BACK.format(sha=back[0][:12])))
    return out


def _path(cwd: str, env: dict[str, str] | None) -> str:
    return state_file(cwd, NOTE, env)


def noted(cwd: str, env: dict[str, str] | None = None) -> set[str]:
    try:
        with open(_path(cwd, env), encoding="ascii") as fh:
            return set(fh.read().split())
    except (OSError, ValueError):
        return set()


def note(cwd: str, gone: Iterable[str], env: dict[str, str] | None = None) -> None:
    """After the gate accepted a redaction: its replaced commits, for `brought_back`."""
    gone = set(gone)
    if not gone:
        return
    path = _path(cwd, env)
    found = noted(cwd, env) | gone
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="ascii") as fh:
        fh.write("".join(f"{sha}\n" for sha in sorted(found)))
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
