"""`git memory undo` and `git memory restore`: take a change back, as a new commit
through the write path (lock, clean check, the memory rules, trailers), never by
rewriting history and never by a plain `git revert` that would skip the checks.

undo: the reverse of one commit (a merge, e.g. a dream's, against its first parent:
the whole dream as one unit) is three-way merged onto HEAD by `git merge-tree`, so
later changes to other lines survive; a clash with them is refused with the paths
and nothing is written. Trailers `Memory-Op: undo` and `Memory-Undoes: <sha>`.

restore: one file (also a deleted one) as it was at a revision.
"""
from __future__ import annotations

import re
from typing import Any

from gitmemfs.core import memdiff, paths
from gitmemfs.core.errors import MemfsError, UsageError
from gitmemfs.core.git import GitError
from gitmemfs.core.outcome import Outcome
from gitmemfs.core.paths import PathError
from gitmemfs.core.repo import Repo
from gitmemfs.core.revision import missing_message, read_blob, resolve
from gitmemfs.core.snapshot import parse_batch
from gitmemfs.core.writer import Change, WriteSession

_DREAM_ID = re.compile(r"[A-Za-z0-9._-]+")
ZERO = "0" * 40


def _reason(reason: object, tool: str, dry_run: bool) -> str:
    if dry_run and (reason is None or reason == ""):
        return ""
    if not isinstance(reason, str) or not reason.strip():
        raise UsageError(f"{tool}: give the reason with -m REASON; it becomes the commit subject")
    return reason.strip()


def undo(repo: Repo, commit: str | None = None, *, last: bool = False, dream: str | None = None,
         reason: str | None = None, dry_run: bool = False) -> Outcome:
    """Revert one commit (or a dream merge as one unit) as a new, validated commit."""
    named: tuple[object, ...] = (commit, dream)  # as an MCP client sent them: false too means "not this"
    chosen = sum(x is not None and x is not False for x in named) + (1 if last else 0)
    if chosen != 1:
        raise UsageError("undo: name exactly one of COMMIT, --last or --dream ID (see git memory log)")
    text = _reason(reason, "undo", dry_run)
    with WriteSession(repo, tool="undo") as session:
        head = session.head
        if head is None:
            raise MemfsError("undo: this memory has no commits yet; nothing to undo")
        target = _target(repo, head, commit, last, dream)
        parents = repo.git("rev-list", "--parents", "-n1", target).out.split()[1:]
        if not parents:
            raise MemfsError(f"undo: {target[:7]} is the memory's first commit; there is nothing before it "
                             "to go back to (restore single files with git memory restore)")
        subject = repo.git("log", "-1", "--format=%s", target).out.strip()
        tree = _reverted_tree(repo, head, target, parents[0])
        changes, olds = _changes(repo, head, tree)
        if not changes:
            raise MemfsError(f"undo: the changes of {target[:7]} are no longer in the memory (a later commit "
                             "took them back); nothing to undo. See git memory log")
        diffs = [memdiff.FileDiff(ch.path, olds[ch.path], ch.content) for ch in changes]
        extra: dict[str, Any] = {"undoes": target, "undone_reason": subject,
                                 "diff": [d.as_dict() for d in diffs]}
        files = [ch.path for ch in changes]
        if dry_run:
            session.validate(changes, olds)
            return Outcome(f"Would undo {target[:7]} ({subject}):\n" + memdiff.render(diffs).rstrip("\n"),
                           extra={"dry_run": True, "paths": files, **extra})
        sha = session.commit(changes, op="undo", reason=text, label="Memory undo",
                             trailers=[f"Memory-Undoes: {target}"])
    return Outcome(f"Memory undo committed ({sha[:7]}): took back {target[:7]} ({subject}).", sha, files,
                   extra=extra)


def _target(repo: Repo, head: str, commit: str | None, last: bool, dream: str | None) -> str:
    if last:
        return head
    if dream is not None:
        if not _DREAM_ID.fullmatch(dream):
            raise UsageError(f"undo: not a dream id: {dream!r} (git memory log --dreams lists them)")
        found = repo.git("log", "-1", "--merges", "--format=%H", f"--grep=^Dream-Id: {re.escape(dream)}$",
                         head, check=False).out.strip()
        if not found:
            raise MemfsError(f"undo: no dream {dream} was merged into this memory; see git memory log --dreams")
        return found
    assert commit is not None
    try:
        sha = resolve(repo, commit)
    except MemfsError:
        raise MemfsError(f"undo: no commit {commit} in this memory; see git memory log") from None
    assert sha is not None
    if repo.git("merge-base", "--is-ancestor", sha, head, check=False).code != 0:
        raise MemfsError(f"undo: commit {commit} is not in the memory's history (HEAD {head[:7]}); "
                         "see git memory log")
    return sha


def _reverted_tree(repo: Repo, head: str, target: str, parent: str) -> str:
    """HEAD with `target`'s change taken back: a three-way merge whose base is
    `target`, theirs its parent's tree. git 2.39's merge-tree has no --merge-base,
    so a throwaway commit (parent's tree, child of `target`) makes `target` the base."""
    inverse = repo.git("commit-tree", f"{parent}^{{tree}}", "-p", target, "-m", "undo (scratch)",
                       env={"GIT_AUTHOR_NAME": "git-memfs", "GIT_AUTHOR_EMAIL": "undo@git-memfs",
                            "GIT_COMMITTER_NAME": "git-memfs", "GIT_COMMITTER_EMAIL": "undo@git-memfs",
                            "GIT_AUTHOR_DATE": "@0 +0000", "GIT_COMMITTER_DATE": "@0 +0000"}).out.strip()
    res = repo.git("merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", head, inverse,
                   check=False, ok=(0, 1))
    if res.code not in (0, 1):
        raise GitError(res.argv, res.code, res.raw, res.err_raw)
    fields = res.out.split("\0")
    if res.code == 1:
        conflicted = sorted({f for f in fields[1:] if f})
        raise MemfsError(f"undo: taking back {target[:7]} conflicts with later changes in "
                         f"{', '.join(conflicted[:10])}; nothing was changed. Edit those files yourself, or "
                         f"bring one back whole with git memory restore PATH --rev {target[:7]}~1",
                         details={"conflicts": conflicted})
    return fields[0].strip()


def _changes(repo: Repo, head: str, tree: str) -> tuple[list[Change], dict[str, bytes | None]]:
    res = repo.git("diff-tree", "-r", "-z", "--no-renames", "--no-abbrev", head, tree)
    fields = res.out.split("\0")
    pairs: list[tuple[str, str | None, str | None]] = []
    i = 0
    while i + 1 < len(fields):
        meta, path = fields[i].strip("\n"), fields[i + 1]
        i += 2
        if not meta.startswith(":"):
            continue
        parts = meta[1:].split(" ")
        old, new = parts[2], parts[3]
        pairs.append((path, None if old == ZERO else old, None if new == ZERO else new))
    oids = sorted({o for _, a, b in pairs for o in (a, b) if o})
    blobs = parse_batch(repo.git("cat-file", "--batch", "--buffer",
                                 input="".join(o + "\n" for o in oids)).raw, oids) if oids else {}
    changes = [Change(path, blobs.get(new) if new else None) for path, _, new in pairs]
    olds = {path: (blobs.get(old) if old else None) for path, old, _ in pairs}
    return changes, olds


def restore(repo: Repo, path: str, rev: str, reason: str | None = None, *, dry_run: bool = False) -> Outcome:
    """Bring back one file as it was at `rev` (also one deleted since), as a new commit."""
    text = _reason(reason, "restore", dry_run)
    if not rev:
        raise UsageError("restore: give the revision with --rev REV (git memory log PATH lists them)")
    sha = resolve(repo, rev)
    assert sha is not None
    try:
        label = paths.normalize_label(path, "path", repo.root, tool="restore")
        # `notes/x` and `notes/x.md` both name the memory file; other files keep their name.
        rel = paths.file_of(label)
        data = read_blob(repo, sha, rel)
        if data is None and not path.strip().endswith(".md"):
            plain = read_blob(repo, sha, label)
            if plain is not None:
                rel, data = label, plain
        paths.check_jail(repo.root, rel, tool="restore")
    except PathError as exc:
        raise MemfsError(str(exc)) from None
    if data is None:
        raise MemfsError(missing_message(repo, rel, sha, "restore"))
    with WriteSession(repo, tool="restore") as session:
        old = session.read(rel)
        if old == data:
            raise MemfsError(f"restore: {rel} is already as it was at {sha[:7]}; nothing to do")
        change = Change(rel, data)
        diff = memdiff.FileDiff(rel, old, data)
        extra: dict[str, Any] = {"restored_from": sha, "diff": [diff.as_dict()]}
        if dry_run:
            session.validate([change], {rel: old})
            return Outcome(f"Would restore {rel} as at {sha[:7]}:\n" + diff.render().rstrip("\n"),
                           extra={"dry_run": True, "paths": [rel], **extra})
        commit = session.commit([change], op="restore", reason=text, label="Memory restore",
                                trailers=[f"Memory-Restored-From: {sha}"])
    return Outcome(f"Memory restore committed ({commit[:7]}): {rel} as at {sha[:7]}.", commit, [rel],
                   extra=extra)
