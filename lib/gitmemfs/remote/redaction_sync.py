"""A clone follows a redaction: after a fetch, `git memory sync` moves onto the
redacted history when the remote's main holds a redaction record this clone lacks.

The old history (up to where the remote stood when last fetched) is paired with the
new one exactly as the server gate pairs them (gate/redaction.py), which proves it is
a redaction and teaches what it took: the spans that became `[REDACTED]` and the
paths that went (kept in memory, registered as secrets so no message can show them,
never printed). Every local ref then moves: a commit of the old history to its
twin, a commit of the clone's own (made since the fetch, a backup, a kept dream run)
replayed with the same spans replaced and paths removed, its authors, dates and
reason kept. Reflogs are expired and unreachable objects pruned, so the old objects
are gone here too; the search index and finished dream runs' repositories go. Sync
then brings the replayed commits onto the remote as any local commits: checked by
the validator, and pushed without force; the old history is never pushed back. The
record followed is noted in `<git-dir>/memory-redactions-followed`, so a sync stopped
before its push (a conflict) does not try to follow it again.

A move that can't be made safely is refused before anything changes (uncommitted
changes, a running dream, a rewrite this clone cannot pair): otherwise sync would
try to merge the old history into the redacted one.
"""
from __future__ import annotations

import hashlib
import os
import re

from gitmemfs.core import purge
from gitmemfs.core import redact as secrets
from gitmemfs.core.errors import BusyError, MemfsError
from gitmemfs.core.git import BlobReader
from gitmemfs.core.repo import Repo
from gitmemfs.gate import redaction

REPLACEMENT = redaction.REPLACEMENT
_HEX = re.compile(rb"\b[0-9a-f]{7,40}\b")
NUL = b"\0"
FOLLOWED = "memory-redactions-followed"  # records this clone moved onto, one per line
_SIGNATURE = re.compile(rb"^-----BEGIN [A-Z ]*SIGNATURE-----$", re.M)


def follow(repo: Repo, tracking: str | None, before: str | None = None) -> str | None:
    """Move onto the redacted history when the fetched `tracking` ref calls for it;
    the line that says so, or None when nothing had to move. `before`: where the
    tracking ref stood before this fetch.

    Only a real rewrite is followed (issue 34, attack 2): commits the remote had, as
    this clone saw it (`before`, and the tracking ref's reflog), that it no longer has.
    The record must verify (signed by an allowed signer, where this clone lists them),
    and the clone's own commits lose only what the record names (its salted hashes)."""
    if not tracking or not repo.has_head():
        return None
    remote = repo.git("rev-parse", "-q", "--verify", f"{tracking}^{{commit}}", check=False).out.strip()
    if not remote or repo.git("merge-base", "--is-ancestor", "HEAD", remote, check=False).code == 0:
        return None  # nothing local the remote lacks, or the remote simply moved on
    olds = _dropped(repo, tracking, before, remote)
    if not olds:
        return None  # the remote dropped nothing it had: a fast-forward, whatever it says
    followed = _followed(repo)
    for record in records(repo, remote, "--not", "HEAD"):
        found = redaction.record_of(repo.root, record)
        if found is None or record in followed:
            continue
        pairs = redaction.candidates(repo.root, found, olds, ["HEAD"])
        if not pairs:
            continue  # none of our commits was rewritten by it (already moved, or it took nothing of ours)
        _ready(repo, record)
        if not redaction.signed_as_required(repo.root, record):
            raise MemfsError(f"git memory sync: the remote's history was rewritten by a redaction ({record[:7]}) "
                             "whose record is not signed by a key in gpg.ssh.allowedSignersFile, so this clone "
                             "does not follow it; nothing was changed. Ask whoever redacted to sign the record "
                             "(commit.gpgSign), or look at the remote's history before trusting it")
        for old, twin in pairs[:redaction.ATTEMPTS]:
            pairing = redaction.pair(repo.root, old, twin, learn=True)
            if pairing is not None:
                named_by(pairing, found)
                return _move(repo, pairing, remote, record)
        raise MemfsError(f"git memory sync: the remote's history was rewritten by a redaction "
                         f"({record[:7]}) that this clone can't pair with its own; nothing was changed. "
                         "Clone the memory again (copy out any local work first)")
    return None


def records(repo: Repo, *revs: str) -> list[str]:
    """The commits of `revs` (rev-list arguments) whose message says `Memory-Op: redact`."""
    listed = repo.git("log", "--format=%H%x00%(trailers:key=Memory-Op,valueonly,separator=%x2C)", *revs, "--").out
    return [line.split("\0")[0] for line in listed.splitlines()
            if "redact" in line.partition("\0")[2].replace(" ", "").split(",")]


def record_on(repo: Repo) -> str | None:
    """The newest redaction record on the branch's first parents (HEAD, or under it)."""
    for sha in records(repo, "--first-parent", "-n", "200", "HEAD"):
        if redaction.record_of(repo.root, sha) is not None:
            return sha
    return None


def unsent(repo: Repo, tracking: str | None) -> str | None:
    """The record of this clone's own redaction when the remote still has the history
    it rewrote (redacted here, not pushed yet): sync must not merge the two."""
    remote = repo.git("rev-parse", "-q", "--verify", f"{tracking}^{{commit}}", check=False).out.strip() \
        if tracking else ""
    record = record_on(repo) if remote else None
    if not record or repo.git("merge-base", "--is-ancestor", record, remote, check=False).code == 0:
        return None
    olds = repo.git("rev-list", remote, "--not", "HEAD", "--").out.split()
    return record if olds and redaction.follow(repo.root, record, olds, [remote]) is not None else None


def _dropped(repo: Repo, tracking: str, before: str | None, remote: str) -> list[str]:
    """The commits the remote had, as this clone last saw it, that it no longer has
    (newest first): never a commit only this clone made."""
    seen: list[str] = []
    try:  # every value the tracking ref had, old and new (a `git fetch` of the person's counts too)
        with open(os.path.join(repo.common_dir, "logs", tracking), encoding="ascii", errors="replace") as fh:
            for line in fh.readlines()[-200:]:
                seen += line.split(" ", 2)[:2]
    except OSError:
        pass
    tips = [t for t in dict.fromkeys([before or "", *reversed(seen)]) if t.strip("0") and t != remote]
    tips = [t for t in tips if repo.git("cat-file", "-e", f"{t}^{{commit}}", check=False).code == 0]
    if not tips:
        return []
    return repo.git("rev-list", *tips, "--not", remote, "--").out.split()


def named_by(pairing: redaction.Pairing, record: redaction.Commit) -> None:
    """Keep of what the pairing learned only what the record names (salted SHA-256 of
    each string and path, admin/redact.py): the clone's own commits lose that, and
    nothing else."""
    named: dict[str, set[str]] = {"text": set(), "path": set()}
    for line in record.message.decode("utf-8", "replace").splitlines():
        key, _, value = line.partition(":")
        kind, _, hashed = value.strip().partition(" ")
        algo, _, rest = hashed.partition(":")
        salt, _, digest = rest.partition(":")
        if key.strip() == "Memory-Redacted" and kind in named and algo == "sha256" and salt and digest:
            named[kind].add(f"{salt}:{digest}")

    def listed(kind: str, value: bytes) -> bool:
        salts = {n.split(":", 1)[0] for n in named[kind]}
        return any(salt + ":" + hashlib.sha256(salt.encode() + NUL + value).hexdigest() in named[kind]
                   for salt in salts)

    pairing.spans = {span for span in pairing.spans if listed("text", span)}
    pairing.removed = {path for path in pairing.removed if listed("path", path.encode("utf-8", "surrogateescape"))}


def _followed(repo: Repo) -> set[str]:
    try:
        with open(os.path.join(repo.common_dir, FOLLOWED), encoding="ascii") as fh:
            return set(fh.read().split())
    except OSError:
        return set()


def _ready(repo: Repo, record: str) -> None:
    said = f"git memory sync: the remote's history was redacted ({record[:7]})"
    if repo.git("status", "--porcelain", "-z", "--untracked-files=no").out:
        raise MemfsError(f"{said}; commit or discard the uncommitted changes, then sync again to move onto it")
    if purge.dream_running(repo):
        raise BusyError(f"{said}; a dream is running on this memory: wait for it (git dream list), then "
                        "sync again")



class Rewriter:
    """The clone's own objects, redacted as the pairing says."""

    def __init__(self, repo: Repo, pairing: redaction.Pairing, reader: BlobReader):
        self.repo = repo
        self.reader = reader
        self.spans = sorted(pairing.spans, key=len, reverse=True)
        self.removed = pairing.removed
        self.moved: dict[str, str] = dict(pairing.twins)  # old commit -> new commit
        self.trees: dict[tuple[str, str], str] = {}
        self.blobs: dict[str, str] = {}

    def text(self, data: bytes) -> bytes:
        for span in self.spans:
            if span in data:
                data = data.replace(span, REPLACEMENT)
        return data

    def message(self, data: bytes) -> bytes:
        ids = sorted(self.moved)

        def mapped(match: re.Match[bytes]) -> bytes:
            token = match.group(0).decode()
            hits = [sha for sha in ids if sha.startswith(token)][:2]
            return self.moved[hits[0]][:len(token)].encode() if len(hits) == 1 else match.group(0)

        return _HEX.sub(mapped, self.text(data))

    def blob(self, oid: str) -> str:
        if oid not in self.blobs:
            data = self.reader.read(oid) or b""
            new = self.text(data)
            self.blobs[oid] = oid if new == data else self.repo.git(
                "hash-object", "-w", "--stdin", input=new).out.strip()
        return self.blobs[oid]

    def tree(self, oid: str, prefix: str = "") -> str:
        key = (oid, prefix if self.removed else "")
        if key in self.trees:
            return self.trees[key]
        raw = self.reader.read(oid) or b""
        size = len(oid) // 2
        entries, changed, pos = [], False, 0
        while pos < len(raw):
            space = raw.index(b" ", pos)
            nul = raw.index(b"\0", space)
            mode, name = raw[pos:space].decode(), raw[space + 1:nul]
            sha = raw[nul + 1:nul + 1 + size].hex()
            pos = nul + 1 + size
            path = prefix + name.decode("utf-8", "surrogateescape")
            if path in self.removed:
                changed = True
                continue
            new = sha
            if mode == "40000":
                new = self.tree(sha, path + "/")
            elif mode != "160000":
                new = self.blob(sha)
            changed |= new != sha
            kind = "tree" if mode == "40000" else "commit" if mode == "160000" else "blob"
            entries.append(f"{mode} {kind} {new}\t".encode() + name + b"\0")
        self.trees[key] = oid if not changed else self.repo.git(
            "mktree", "-z", input=b"".join(entries)).out.strip()
        return self.trees[key]

    def commit(self, sha: str) -> str:
        """`sha` (its parents already done), redacted; unchanged when nothing is."""
        c = redaction.Commit(sha, self.reader.read(sha) or b"")
        parents = [self.moved.get(p, p) for p in c.parents]
        tree = self.tree(c.tree)
        message = self.message(c.message)
        if parents == c.parents and tree == c.tree and message == c.message:
            return sha
        head = [f"tree {tree}".encode(), *(f"parent {p}".encode() for p in parents), *c.headers]
        raw = b"\n".join(head) + b"\n\n" + message
        self.moved[sha] = self.repo.git("hash-object", "-t", "commit", "-w", "--stdin", input=raw).out.strip()
        return self.moved[sha]

    def tag(self, sha: str) -> str:
        raw = self.reader.read(sha) or b""
        head, _, message = raw.partition(b"\n\n")
        lines = head.split(b"\n")
        target = lines[0].split(b" ", 1)[1].decode() if lines and lines[0].startswith(b"object ") else ""
        if target not in self.moved:
            return sha
        lines[0] = f"object {self.moved[target]}".encode()
        message = _SIGNATURE.split(message, 1)[0]  # a signature can't survive the change
        return self.repo.git("hash-object", "-t", "tag", "-w", "--stdin",
                             input=b"\n".join(lines) + b"\n\n" + self.message(message)).out.strip()


def _move(repo: Repo, pairing: redaction.Pairing, remote: str, record: str) -> str:
    for span in pairing.spans:  # whatever shows up later (an error, a log) masks them
        secrets.register_secret(span.decode("utf-8", "replace"))
    refs = [line.split(" ", 2) for line in repo.git(
        "for-each-ref", "--format=%(objectname) %(objecttype) %(refname)").out.splitlines()]
    branch = repo.git("symbolic-ref", "-q", "HEAD", check=False).out.strip()
    own = repo.git("rev-list", "--topo-order", "--reverse", "HEAD", *(r[2] for r in refs if r[1] == "commit"),
                   "--not", pairing.old, remote, "--").out.split()
    mine = int(repo.git("rev-list", "--count", "HEAD", "--not", pairing.old, remote, "--").out.strip())
    with BlobReader(repo.root) as reader:
        rewriter = Rewriter(repo, pairing, reader)
        for sha in own:
            rewriter.commit(sha)
        updates = []
        for sha, kind, ref in refs:
            new = rewriter.tag(sha) if kind == "tag" else rewriter.moved.get(sha, sha)
            if new != sha and ref != branch:
                updates.append(f"update {ref} {new} {sha}\n")
        head = repo.git("rev-parse", "HEAD").out.strip()
        target = rewriter.moved.get(head, head)
    if updates:
        repo.git("update-ref", "--stdin", input="".join(updates))
    # The checked-out branch last, with the work tree (clean: checked before).
    repo.git("reset", "-q", "--keep", target)
    # Until sync brings the record in (a conflict may stop it first), this clone's own
    # replayed commits lack it, and one of them may share a second and an author with a
    # commit under it: what was followed is remembered, not guessed again.
    with open(os.path.join(repo.common_dir, FOLLOWED), "a", encoding="ascii") as fh:
        fh.write(record + "\n")
    _forget(repo)
    return f"Moved onto the redacted history from {pairing.old[:7]}; {mine} local commit(s) replayed."


def _forget(repo: Repo) -> None:
    """The old objects go: nothing points at them, reflogs included, and they are pruned."""
    purge.forget_old_history(repo)

