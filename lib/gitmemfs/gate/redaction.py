"""Telling a redaction from any other history rewrite (the server gate, and sync).

`git memory redact` is the one history rewrite a memory accepts. What it leaves is
checkable without the secret: every commit it changed has a twin in the old history,
with the same parents (mapped), authors, committers and dates; each changed file is
the old one with some spans replaced by `[REDACTED]`, or is gone (`--path`), and each
message the old one with spans replaced and commit ids mapped; a record commit
(`Memory-Op: redact`, changing nothing) sits on top. `pair()` checks exactly that,
commit for commit, and learns on the way which spans became `[REDACTED]` and which
paths went (sync needs them to redact a clone's own commits the same way; they are
never printed). The span check is one linear scan: the new text split on
`[REDACTED]` must occur in the old text in order, with at least one character
between pieces, the first piece a prefix and the last a suffix.
"""
from __future__ import annotations

import bisect

from gitmemfs.core import git, rules

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Collection, Iterable, Sequence

REPLACEMENT = b"[REDACTED]"
OP = "Memory-Op: redact"
MIN_SPAN = 4  # `redact` refuses shorter strings; a shorter learned span is an alignment accident
ATTEMPTS = 8  # candidate twins tried before giving up (each try walks the changed history)
ALLOW = "memory.allowRewrite"
MAIN = "refs/heads/main"
REFUSED = ("a history rewrite is refused: only `git memory redact` rewrites a memory's history; "
           "fetch, bring your commits onto the remote (git memory sync) and push again (a server "
           f"that must take other rewrites sets git config {ALLOW} true)")
UNSIGNED = ("a redaction is refused here unless its record commit is signed by a key in "
            "gpg.ssh.allowedSignersFile: sign it (git commit --amend -S --no-edit on the record) and push again")
_SKIPPED = ("gpgsig", "gpgsig-sha256", "mergetag")  # a rewrite can't keep a signature


class Commit:
    __slots__ = ("sha", "tree", "parents", "headers", "message")

    def __init__(self, sha: str, raw: bytes):
        self.sha = sha
        head, _, self.message = raw.partition(b"\n\n")
        self.parents: list[str] = []
        self.tree = ""
        self.headers: list[bytes] = []  # author, committer, encoding …: must match their twin's
        skipping = False
        for line in head.split(b"\n"):
            if line.startswith(b" "):  # continuation of a multi-line header
                if not skipping:
                    self.headers.append(line)
                continue
            key, _, value = line.partition(b" ")
            skipping = key.decode("ascii", "replace") in _SKIPPED
            if key == b"tree":
                self.tree = value.decode()
            elif key == b"parent":
                self.parents.append(value.decode())
            elif not skipping:
                self.headers.append(line)

    def ident(self) -> tuple[bytes, ...]:
        return tuple(h for h in self.headers if h.startswith((b"author ", b"committer ")))


class Pairing:
    """The old history's commits and their redacted twins, and what the redaction took."""

    def __init__(self, old: str, image: str):
        self.old = old          # the old tip
        self.image = image      # its twin in the new history
        self.twins: dict[str, str] = {}  # old commit -> new commit, changed ones only
        self.spans: set[bytes] = set()   # what became [REDACTED] (only kept when learning)
        self.removed: set[str] = set()   # paths gone from every changed version


def is_record(message: bytes) -> bool:
    """A `Memory-Op: redact` trailer in the message's last paragraph."""
    last = message.rstrip(b"\n").rsplit(b"\n\n", 1)[-1]
    return any(line.strip() == OP.encode() for line in last.split(b"\n"))


def redacted_spans(old: bytes, new: bytes) -> list[bytes] | None:
    """The spans of `old` that became [REDACTED] in `new` (runs of adjacent ones as
    one span), or None when `new` is not `old` with spans replaced. Linear."""
    pieces = new.split(REPLACEMENT)
    if len(pieces) == 1 or not old.startswith(pieces[0]):
        return None
    pos = len(pieces[0])
    gaps: list[tuple[int, int]] = []
    for piece in pieces[1:-1]:
        at = old.find(piece, pos + 1)  # leftmost: leaves the most room for the rest
        if at < 0:
            return None
        gaps.append((pos, at))
        pos = at + len(piece)
    end = len(old) - len(pieces[-1])
    if end < pos + 1 or not old.endswith(pieces[-1]):
        return None
    gaps.append((pos, end))
    out: list[bytes] = []
    run_start, run_end, count = gaps[0][0], gaps[0][1], 1
    for (start, stop), piece in zip(gaps[1:], pieces[1:-1]):
        if not piece:  # [REDACTED][REDACTED]: one run, split below when it repeats
            run_end, count = stop, count + 1
            continue
        out.append(_split_run(old[run_start:run_end], count))
        run_start, run_end, count = start, stop, 1
    out.append(_split_run(old[run_start:run_end], count))
    return out


def _split_run(text: bytes, count: int) -> bytes:
    if count > 1 and len(text) % count == 0 and text == text[:len(text) // count] * count:
        return text[:len(text) // count]
    return text


def pair(cwd: str, old: str, new: str, env: dict[str, str] | None = None, *,
         learn: bool = False) -> Pairing | None:
    """Whether the history of `new` is the history of `old`, redacted; None if not."""
    if old == new:
        return None
    only_old = git.run(["rev-list", old, "--not", new, "--"], cwd=cwd, env=env, check=False)
    only_new = git.run(["rev-list", new, "--not", old, "--"], cwd=cwd, env=env, check=False)
    if only_old.code or only_new.code:
        return None
    olds, news = only_old.out.split(), only_new.out.split()
    if len(olds) != len(news):
        return None
    with git.BlobReader(cwd, env=env) as reader:
        raw = reader.read_many([*olds, *news])
        commits = {sha: Commit(sha, data) for sha, data in raw.items() if data is not None}
        if len(commits) != len(olds) + len(news):
            return None
        result = Pairing(old, new)
        if not _shape(commits, set(olds), set(news), result):
            return None
        if not _messages(commits, result, learn):
            return None
        if not _trees(cwd, commits, result, reader, env, learn):
            return None
    return result


def _shape(commits: dict[str, Commit], olds: set[str], news: set[str], result: Pairing) -> bool:
    """Walk both histories from the tips, parent by parent: a bijection between the
    commits only in the old history and those only in the new, with the same headers."""
    twins, back = result.twins, dict[str, str]()
    todo = [(result.old, result.image)]
    while todo:
        o, n = todo.pop()
        if o == n:
            continue
        if o not in olds or n not in news:
            return False
        if o in twins or n in back:
            if twins.get(o) != n or back.get(n) != o:
                return False
            continue
        twins[o], back[n] = n, o
        a, b = commits[o], commits[n]
        if a.headers != b.headers or len(a.parents) != len(b.parents):
            return False
        todo += zip(a.parents, b.parents)
    return len(twins) == len(olds) == len(news)


def _messages(commits: dict[str, Commit], result: Pairing, learn: bool) -> bool:
    import re

    ids = sorted(result.twins)
    hexes = re.compile(rb"\b[0-9a-f]{7,40}\b")

    def mapped(match: re.Match[bytes]) -> bytes:
        token = match.group(0).decode()
        at = bisect.bisect_left(ids, token)
        hits = [ids[i] for i in range(at, min(at + 2, len(ids))) if ids[i].startswith(token)]
        return result.twins[hits[0]][:len(token)].encode() if len(hits) == 1 else match.group(0)

    for o, n in result.twins.items():
        before, after = commits[o].message, commits[n].message
        if before == after:
            continue
        before = hexes.sub(mapped, before)
        if before == after:
            continue
        found = redacted_spans(before, after)
        if found is None:
            return False
        if learn:
            result.spans.update(s for s in found if len(s) >= MIN_SPAN and not hexes.fullmatch(s))
    return True


def _trees(cwd: str, commits: dict[str, Commit], result: Pairing, reader: git.BlobReader,
           env: dict[str, str] | None, learn: bool) -> bool:
    """Each changed file of each pair: spans replaced, or removed; nothing added,
    no mode changed; a removed path is in no changed version."""
    feed = "".join(f"{n} {o}\n" for o, n in result.twins.items() if commits[o].tree != commits[n].tree)
    if not feed:
        return True
    res = git.run(["diff-tree", "--stdin", "-r", "-z", "--no-renames", "--no-abbrev"], cwd=cwd,
                  input=feed, env=env, check=False)
    if res.code != 0:
        return False
    blobs: set[tuple[str, str]] = set()
    it = iter(res.out.split("\0"))
    for token in it:
        if not token or not token.startswith(":"):
            continue  # a commit header (the new twin)
        old_mode, new_mode, old_oid, new_oid, status = token[1:].split(" ", 4)
        path = next(it)
        if status == "D":
            result.removed.add(path)
        elif status == "M" and old_mode == new_mode and old_mode != "160000":
            blobs.add((old_oid, new_oid))
        else:  # added, retyped, a gitlink moved: not a redaction
            return False
    data = reader.read_many(sorted({oid for p in blobs for oid in p}))
    for old_oid, new_oid in blobs:
        before, after = data.get(old_oid), data.get(new_oid)
        found = None if before is None or after is None else redacted_spans(before, after)
        if found is None:
            return False
        if learn:
            result.spans.update(s for s in found if len(s) >= MIN_SPAN)
    if result.removed:  # gone from every changed version, not just from some
        specs = [f"{n}:{p}" for n in result.twins.values() for p in sorted(result.removed)]
        if any(v is not None for v in reader.read_many(specs).values()):
            return False
    return True


def _chain(cwd: str, tip: str, stop: Sequence[str], env: dict[str, str] | None) -> list[str]:
    res = git.run(["rev-list", "--first-parent", tip, "--not", *stop, "--"], cwd=cwd, env=env,
                  check=False)
    return res.out.split() if res.code == 0 else []


def _read(cwd: str, shas: Iterable[str], env: dict[str, str] | None) -> dict[str, Commit]:
    with git.BlobReader(cwd, env=env) as reader:
        found = reader.read_many(list(shas))
    return {sha: Commit(sha, data) for sha, data in found.items() if data is not None}


def record_of(cwd: str, tip: str, env: dict[str, str] | None = None) -> Commit | None:
    """`tip` as a redaction record: one parent, the parent's tree, the trailer."""
    found = _read(cwd, [tip], env).get(tip)
    if found is None or len(found.parents) != 1 or not is_record(found.message):
        return None
    parent = _read(cwd, found.parents, env).get(found.parents[0])
    return found if parent is not None and parent.tree == found.tree else None


def candidates(cwd: str, record: Commit, olds: Sequence[str], stop: Sequence[str],
               env: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """(old commit, its would-be twin): `olds` (newest first) against the first-parent
    chain under `record` down to `stop`, matched by author and committer lines (same
    people, same seconds), to be proven by `pair`."""
    chain = _chain(cwd, record.parents[0], stop, env)
    idents: dict[tuple[bytes, ...], list[str]] = {}
    for sha, c in _read(cwd, chain, env).items():  # newest first, as listed
        idents.setdefault(c.ident(), []).append(sha)
    return [(sha, twin) for sha, c in _read(cwd, olds, env).items() for twin in idents.get(c.ident(), ())]


def follow(cwd: str, record: str, olds: Sequence[str], stop: Sequence[str], env: dict[str, str] | None = None,
           *, learn: bool = False) -> Pairing | None:
    """The newest of `olds` whose redacted twin is under `record`, paired; None if none is."""
    found = record_of(cwd, record, env)
    if found is None:
        return None
    for old, twin in candidates(cwd, found, olds, stop, env)[:ATTEMPTS]:
        got = pair(cwd, old, twin, env, learn=learn)
        if got is not None:
            return got
    return None


def signed_as_required(cwd: str, record: str, env: dict[str, str] | None = None) -> bool:
    """Where the memory lists allowed signers, a redaction is a person's approval and
    its record must carry a good signature by one of them (gate/approved.py)."""
    from gitmemfs.gate import approved

    return not approved.signers_configured(cwd, env) or record in approved.verified(cwd, [record], env)


def judge_moves(cwd: str, moves: list[tuple[str, str, str]], env: dict[str, str] | None = None, *,
                protected: Collection[str] = (MAIN,), approved: Collection[str] = (),
                ) -> tuple[list[tuple[str, str]], list[str], list[rules.Problem], list[tuple[str, str, str]]]:
    """For the server gate: each moved ref `(old, new, ref)` as the tip-to-tip check
    should see it. A fast-forward stays as it is; a verified redaction is judged from
    the old tip's redacted twin (what the redaction itself changed is not the pusher's
    edit, and the twins are not new work: they are left out of the per-commit check,
    returned as `exclude`); any other rewrite of a `protected` ref (the memory's
    branches, gate/branches.py) is refused unless the server allows rewrites. A move a
    person `approved` (a signed push) is theirs: neither refused nor judged tip to tip.
    Last: the moves that are verified redactions, `(old, new, ref)`."""
    out: list[tuple[str, str]] = []
    exclude: list[str] = []
    problems: list[rules.Problem] = []
    redactions: list[tuple[str, str, str]] = []
    allowed: bool | None = None
    for old, new, ref in moves:
        if ref in approved:
            continue
        if git.run(["merge-base", "--is-ancestor", old, new], cwd=cwd, env=env, check=False).code == 0:
            out.append((old, new))
            continue
        found = follow(cwd, new, [old], [old], env)
        if found is not None:
            if not signed_as_required(cwd, new, env):
                problems.append(rules.Problem(ref, UNSIGNED))
                continue
            out.append((found.image, new))
            exclude.append(found.image)
            redactions.append((old, new, ref))
            continue
        if ref in protected:
            if allowed is None:
                res = git.run(["config", "--type=bool", "--get", ALLOW], cwd=cwd, env=env, check=False)
                allowed = res.code == 0 and res.out.strip() == "true"
            if not allowed:
                problems.append(rules.Problem(ref, REFUSED))
        out.append((old, new))  # refused or not, what it would drop is said too
    return out, exclude, problems, redactions
