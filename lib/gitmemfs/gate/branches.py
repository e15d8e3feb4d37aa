"""The memory's branches at the server gate: deleting one, or creating one where the
memory already has history, is a rewrite like a force push (issue 34, attack 1).

Which branches hold the memory: `main`, the branch the server's HEAD names (what a
new clone checks out: `master` on a bare repository made with git's default) and
every `memory.branch` set on the server. Moving one of them so that commits drop
out (a force push, a deletion, a creation somewhere else after a deletion) needs a
verified redaction (gate/redaction.py) or a person's approval: a push signed with
`git push --signed` by a key git verifies (`gpg.ssh.allowedSignersFile` for ssh
keys, with `receive.certNonceSeed` set so the server asks for a signature), or
`memory.allowRewrite` set on the server. Creating a memory branch is judged as the
move from where the memory stood: the tip the gate noted for it (every push it
accepts notes where it leaves each memory branch, and a person's deletion where the
branch was, so a branch deleted on the server by hand is judged from its last
pushed tip too; installing the gate notes where each stands), else the tips of the
other memory branches; only a repository with no memory branch at all, and no note,
takes one at any commit (the first push).

A tag named like a memory branch (`main`, `origin/main`, `HEAD`) is refused: in every
clone that fetches it, `git rev-parse main` (and a CI's `git memory check
origin/main..HEAD`) reads the tag before the branch. Other tags and refs move freely:
each commit they bring is judged like any other, and none of them holds the memory.
"""
from __future__ import annotations

import os

from gitmemfs.core import git, rules

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping, Sequence

ZERO = ("0" * 40, "0" * 64)
MAIN = "refs/heads/main"
SETTING = "memory.branch"
ALLOW = "memory.allowRewrite"
# In the git dir: "ref tip [before]" for each memory branch: where the last accepted push
# left it (and where it stood before that push), or where a person deleted it.
DELETED = "memory-branches-deleted"
HOW = ("a person does it with a signed push (git push --signed, by a key in the server's "
       "gpg.ssh.allowedSignersFile; the server sets receive.certNonceSeed), or the server sets "
       f"git config {ALLOW} true")
DELETE_REFUSED = "deleting a memory branch is refused: its history would drop out past every gate; " + HOW
SHADOW_REFUSED = ("a tag named like the memory's branch {name} is refused: in a clone it would stand in for the "
                  "branch (git rev-parse reads a tag first); name the tag otherwise")
CREATE_REFUSED = ("creating a memory branch where the memory already has history is refused unless nothing "
                  "of it is lost (create it at {base} or at a commit after it); " + HOW)


def protected(cwd: str, env: Mapping[str, str] | None = None) -> set[str]:
    """The refs that hold the memory here (see the module doc)."""
    found = {MAIN}
    head = git.run(["symbolic-ref", "-q", "HEAD"], cwd=cwd, env=env, check=False).out.strip()
    if head.startswith("refs/heads/"):
        found.add(head)
    res = git.run(["config", "--get-all", SETTING], cwd=cwd, env=env, check=False)
    for name in res.out.split() if res.code == 0 else ():
        found.add(name if name.startswith("refs/") else f"refs/heads/{name}")
    return found


_COMMON: dict[str, str] = {}  # cwd -> its git common dir, asked of git once per process


def state_file(cwd: str, name: str, env: Mapping[str, str] | None = None) -> str:
    """`name` in the git common dir of the repository at `cwd`: where the gate keeps its
    notes (this module's, gate/redacted.py's)."""
    where = os.path.abspath(cwd)
    common = _COMMON.get(where) if env is None else None
    if common is None:
        common = os.path.join(where, git.run(["rev-parse", "--git-common-dir"], cwd=cwd, env=env).out.strip())
        if env is None:
            _COMMON[where] = common
    return os.path.join(common, name)


def note_tips(cwd: str, env: Mapping[str, str] | None = None) -> None:
    """When the gate is installed: where each memory branch stands, as if a push had
    left it there, so a branch deleted by hand before the gate took any push is
    created again only from there (a bare repository filled before its gate)."""
    guard = Guard(cwd, [], env)
    noted = guard._deleted()
    guard._write({ref: tip for ref, tip in guard._tips().items() if not noted.get(ref, "").startswith(tip)})


def rewrites_allowed(cwd: str, env: Mapping[str, str] | None = None) -> bool:
    res = git.run(["config", "--type=bool", "--get", ALLOW], cwd=cwd, env=env, check=False)
    return res.code == 0 and res.out.strip() == "true"


def signed_updates(cwd: str, environ: Mapping[str, str]) -> set[tuple[str, str, str]]:
    """The ref updates a good push certificate covers (`git push --signed`): git has
    verified its signature (G) and its nonce (OK); its command lines are read from the
    certificate itself, so only what was signed counts."""
    cert = environ.get("GIT_PUSH_CERT", "")
    if not cert or environ.get("GIT_PUSH_CERT_STATUS") != "G" or environ.get("GIT_PUSH_CERT_NONCE_STATUS") != "OK":
        return set()
    res = git.run(["cat-file", "blob", cert], cwd=cwd, check=False)
    if res.code != 0:
        return set()
    _, _, body = res.out.partition("\n\n")
    out = set()
    for line in body.splitlines():
        parts = line.split(" ")
        if len(parts) == 3 and len(parts[0]) in (40, 64):
            out.add((parts[0], parts[1], parts[2]))
    return out


class Guard:
    """One push's updates of memory branches: what is refused, which creations are
    judged as moves, and which updates a person approved (they are not judged tip to tip:
    the person's signature covers exactly that move)."""

    def __init__(self, cwd: str, updates: Sequence[tuple[str, str, str]], env: Mapping[str, str] | None = None,
                 environ: Mapping[str, str] | None = None):
        self.cwd, self.env = cwd, env
        self.protected = protected(cwd, env)
        mine = [u for u in updates if u[2] in self.protected]
        self.problems: list[rules.Problem] = []
        self.moves: list[tuple[str, str, str]] = []  # creations, as moves from where the memory stood
        signed = signed_updates(cwd, os.environ if environ is None else environ) if mine else set()
        self.allowed = bool(mine) and rewrites_allowed(cwd, env)  # still judged tip to tip
        self.approved = {ref for old, new, ref in mine if (old, new, ref) in signed}
        shorts = {r[len("refs/heads/"):] for r in self.protected if r.startswith("refs/heads/")} | {"HEAD"}
        for _old, new, ref in updates:
            name = ref[len("refs/tags/"):] if ref.startswith("refs/tags/") else None
            if name is not None and new not in ZERO and (name in shorts or name.partition("/")[2] in shorts):
                self.problems.append(rules.Problem(ref, SHADOW_REFUSED.format(name=name)))
        for old, new, ref in mine:
            if new in ZERO and old not in ZERO:
                if ref in self.approved or self.allowed:
                    self._note_deleted(ref, old)
                else:
                    self.problems.append(rules.Problem(ref, DELETE_REFUSED))
            elif old in ZERO and new not in ZERO and ref not in self.approved:
                self._creation(new, ref)

    def _creation(self, new: str, ref: str) -> None:
        # The noted tip, or where it stood before the noted push if that one never landed.
        noted = [t for t in self._deleted().get(ref, "").split(" ") if t and t not in ZERO]
        bases = [t for t in noted if self._exists(t)][:1]
        if not bases:
            bases = [tip for name, tip in self._tips().items() if name != ref]
        for base in bases:
            if git.run(["merge-base", "--is-ancestor", base, new], cwd=self.cwd, env=self.env,
                       check=False).code == 0:
                self.moves.append((base, new, ref))  # nothing lost: judged tip to tip
                continue
            from gitmemfs.gate import redaction

            if redaction.follow(self.cwd, new, [base], [base], dict(self.env) if self.env else None) is not None:
                self.moves.append((base, new, ref))  # judged as the redaction it may be
                continue
            if self.allowed:
                self.moves.append((base, new, ref))  # a rewrite the server takes, judged tip to tip
                continue
            self.problems.append(rules.Problem(ref, CREATE_REFUSED.format(base=base[:12])))
            return

    def _tips(self) -> dict[str, str]:
        res = git.run(["for-each-ref", "--format=%(refname) %(objectname)", *sorted(self.protected)],
                      cwd=self.cwd, env=self.env, check=False)
        return dict(line.split(" ", 1) for line in res.out.splitlines() if " " in line)

    def _exists(self, sha: str) -> bool:
        return git.run(["cat-file", "-e", f"{sha}^{{commit}}"], cwd=self.cwd, env=self.env, check=False).code == 0

    def _path(self) -> str:
        return state_file(self.cwd, DELETED, self.env)

    def _deleted(self) -> dict[str, str]:
        try:
            with open(self._path(), encoding="ascii") as fh:
                return dict(line.split(" ", 1) for line in fh.read().splitlines() if " " in line)
        except (OSError, ValueError):
            return {}

    def _note_deleted(self, ref: str, tip: str) -> None:
        """Where a person deleted a memory branch: its re-creation is judged from there.
        (Written before git deletes it; if the deletion fails, the branch is still there
        and this note is not read.)"""
        self._write({ref: tip})

    def note_accepted(self, updates: Sequence[tuple[str, str, str]]) -> None:
        """After the gate accepted the push: where it leaves each memory branch (and
        where the branch stood, in case git's own update then fails), so that a branch
        later deleted by hand, not through a push, is re-created only from there."""
        self._write({ref: f"{new} {old}" for old, new, ref in updates
                     if ref in self.protected and new not in ZERO})

    def _write(self, notes: dict[str, str]) -> None:
        if not notes:
            return
        found = self._deleted()
        found.update(notes)
        path = self._path()
        tmp = f"{path}.tmp-{os.getpid()}"
        with open(tmp, "w", encoding="ascii") as fh:
            fh.write("".join(f"{r} {t}\n" for r, t in sorted(found.items())))
        os.replace(tmp, path)
