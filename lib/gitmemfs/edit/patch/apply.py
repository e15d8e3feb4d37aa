"""`memory_apply_patch`: one apply_patch document becomes one commit.

    patch.apply(repo, text, reason) -> Outcome

The whole patch is parsed first (patch_grammar), then, under the writer lock
on a clean tree, planned against one virtual view of the files: each
operation sees the effect of the ones before it. Only then does
`WriteSession.commit` validate every resulting file with the shared rules,
write them atomically and make one commit; any failure on the way leaves the
tree and HEAD exactly as they were.

A path may be touched more than once only as a chain: an Add or Update may be
followed by Updates of the same file (under its new name after a Move), and a
file that is deleted or moved away may be added again. Anything else (adding
twice, deleting what the patch just wrote, updating what it deleted) is a
mistake in the patch and is refused with the line of the earlier operation.
"""
from __future__ import annotations

import os

from gitmemfs.core import approval, memfile, paths, rules
from gitmemfs.core import layout as layouts
from gitmemfs.core.errors import MemfsError
from gitmemfs.core.memfile import FrontmatterError
from gitmemfs.core.outcome import Outcome
from gitmemfs.core.paths import PathError
from gitmemfs.core.repo import Repo
from gitmemfs.core.writer import Change, WriteSession, person_only
from gitmemfs.edit.editor import proposed, require_reason
from gitmemfs.edit.patch.grammar import TOOL, AddOp, DeleteOp, Op, PatchError, UpdateOp, fail, parse
from gitmemfs.edit.patch.hunks import apply_hunks

__all__ = ["apply", "check_args", "PatchError"]

NO_EFFECT = (f"{TOOL} made no effective changes; nothing was committed. The patched content "
             "matched what was already on disk.")


def check_args(reason: object, text: object) -> tuple[str, str]:
    """Upstream's argument checks, in its order: (trimmed reason, patch text)."""
    reason = require_reason(reason, TOOL)
    if not isinstance(text, str) or not text.strip():
        raise MemfsError(f"{TOOL}: 'input' must be a non-empty string")
    return reason, text


def apply(repo: Repo, text: str, reason: str) -> Outcome:
    """Apply a patch as one commit whose subject is `reason`.

    A hunk that does not apply raises PatchError whose `details["diagnostic"]`
    holds the rest of upstream's diagnostic (previews of the chunk and the file).
    """
    reason, text = check_args(reason, text)
    ops = parse(text, repo.root)
    with WriteSession(repo, tool=TOOL) as session:
        plan = Plan(session)
        for op in ops:
            plan.run(op)
        changes = plan.changes()
        if not changes:
            raise MemfsError(NO_EFFECT)
        touched = [ch.path for ch in changes]
        sha = session.commit(changes, op="apply_patch", reason=reason, label=TOOL,
                             paths=[p for p in plan.affected if p in touched])
    affected = [p for p in plan.affected if p in touched]
    if repo.proposed:
        return proposed(repo, "apply_patch", sha, affected)
    return Outcome(f"{TOOL} committed ({sha[:7]}).", sha, affected)


class Plan:
    """The virtual view of the files the patch touches, in patch order."""

    def __init__(self, session: WriteSession):
        self.session = session
        self.root = session.repo.root
        self.view: dict[str, bytes | None] = {}    # path -> content now (None: absent)
        self.last: dict[str, tuple[str, int]] = {}  # path -> (what happened, patch line)
        self.affected: list[str] = []
        self.layout = layouts.of_repo(session.repo)[0]  # new files take the layout's frontmatter shape

    # -- the view ----------------------------------------------------------------------

    def current(self, rel: str) -> bytes | None:
        if rel in self.view:
            return self.view[rel]
        return self.session.read(rel)

    def exists(self, rel: str) -> bool:
        """A file or folder at `rel` in the view."""
        if rel in self.view:
            return self.view[rel] is not None
        if any(p.startswith(rel + "/") and c is not None for p, c in self.view.items()):
            return True
        return os.path.lexists(self.session.abspath(rel))

    def put(self, rel: str, content: bytes | None, what: str, line: int) -> None:
        self.view[rel] = content
        self.last[rel] = (what, line)
        if rel not in self.affected:
            self.affected.append(rel)

    def changes(self) -> list[Change]:
        """The effective changes, deletions first (a folder may replace a file)."""
        out = [Change(rel, c) for rel, c in self.view.items() if self.session.read(rel) != c]
        return sorted(out, key=lambda ch: ch.content is not None)

    def jail(self, rel: str) -> None:
        try:
            paths.check_jail(self.root, rel, tool=TOOL)
        except PathError as exc:
            raise PatchError(str(exc)) from None
        parts = rel.split("/")
        for i in range(1, len(parts)):
            parent = "/".join(parts[:i])
            if self.current(parent) is not None:
                raise fail(f"cannot write {rel}: {parent} is a file, not a folder")

    def earlier(self, rel: str) -> str:
        what, line = self.last[rel]
        return f"{what} earlier in this patch (line {line})"

    # -- operations -----------------------------------------------------------------------

    def run(self, op: Op) -> None:
        if isinstance(op, AddOp):
            self.add(op)
        elif isinstance(op, DeleteOp):
            self.delete(op)
        else:
            self.update(op)

    def add(self, op: AddOp) -> None:
        rel = op.rel
        self.jail(rel)
        if self.exists(rel):
            if rel in self.last:
                raise fail(f"duplicate add/update target in patch: {rel} (it was {self.earlier(rel)})")
            raise fail(f"cannot add existing memory file: {rel}")
        self.put(rel, new_file(op, self.layout).encode(), "added", op.line)

    def delete(self, op: DeleteOp) -> None:
        rel = op.rel
        self.jail(rel)
        data = self.readable(rel)
        if rel in self.last:
            raise fail(f"cannot delete {rel}: it was {self.earlier(rel)}; a patch may only follow an "
                       "Add or Update of a file with Updates of it")
        self.index_stays(rel)
        if rules.is_protected(data):
            person_only(self.session.repo, f"{TOOL}: {rel} is read_only and cannot be modified", approval.PROTECT)
        self.put(rel, None, "deleted", op.line)

    def update(self, op: UpdateOp) -> None:
        src, dst = op.rel, op.dest
        self.jail(src)
        data = self.readable(src, for_update=True)
        if rules.is_protected(data):
            person_only(self.session.repo, f"{TOOL}: {src} is read_only and cannot be modified", approval.PROTECT)
        text = decode(self.root, src, data)
        if dst != src:
            self.jail(dst)
            self.index_stays(src)
            self.index_stays(dst)
            if self.exists(dst):
                protected = " and is read_only" if rules.is_protected(self.current(dst)) else ""
                raise fail(f"cannot move {src} to {dst}: the destination already exists{protected}")
        if op.hunks:
            text = apply_hunks(text, op.hunks, src, body_empty=_body_empty(text))
        check_result(dst, text, self.layout, self.session.repo)
        if dst != src:
            self.put(src, None, f"moved to {dst}", op.line)
        self.put(dst, text.encode(), "updated" if dst == src else f"moved from {src}", op.line)

    def index_stays(self, rel: str) -> None:
        """Letta's rule for its patch tool in a root-index memory: indexes stay where they are."""
        if self.layout == layouts.ROOT and layouts.is_index(rel):
            raise fail(f"MEMORY.md indexes cannot be deleted or moved ({rel})")

    def readable(self, rel: str, *, for_update: bool = False) -> bytes:
        """The current bytes of a file the operation needs, or the upstream error."""
        data = self.current(rel)
        if data is not None:
            return data
        if rel in self.last:
            if for_update:
                raise fail(f"file not found for update: {rel} (it was {self.earlier(rel)})")
            raise fail(f"failed to read {rel}: No such file or directory (it was {self.earlier(rel)})")
        if os.path.isdir(self.session.abspath(rel)):
            raise fail(f"failed to read {rel}: it is a folder, not a memory file")
        raise fail(f"failed to read {rel}: No such file or directory")


# -- file contents --------------------------------------------------------------------------

def decode(root: str, rel: str, data: bytes) -> str:
    """Strict UTF-8, with upstream's reader wording (UTF-16 BOM named)."""
    try:
        return memfile.decode_strict(data, os.path.join(root, *rel.split("/")))
    except memfile.EncodingProblem as exc:
        raise fail(f"failed to read {rel}: {exc}") from None


def new_file(op: AddOp, layout: str = layouts.DEFAULT) -> str:
    """An Add's file: its lines as written (with a final newline) when they start
    with valid frontmatter, else under upstream's generated description (in the
    layout's shape: `name` too in letta-root, none for a MEMORY.md index or in plain)."""
    text = "\n".join(op.lines) + "\n"
    if _bare(op.rel, layout):
        return text
    if op.lines[0].rstrip() != "---":
        return layouts.render_new(layout, op.rel, f"Memory block {op.label}", text)
    try:
        mf = memfile.parse(text)
    except FrontmatterError as exc:
        raise fail(f"Add File for {op.raw} starts with '---' but its frontmatter is invalid: "
                   f"{_frontmatter_problem(exc)}; give a frontmatter block with a description, or "
                   "start the file with another line to get a generated description") from None
    if mf.get("read_only") is not None:
        raise fail(f"{op.rel} cannot be written with read_only=true (read_only is set by people, "
                   "not by a patch)")
    return text


def _bare(rel: str, layout: str) -> bool:
    """Files that carry no required frontmatter: a root-index MEMORY.md, any plain file."""
    return layout == layouts.PLAIN or (layout == layouts.ROOT and layouts.is_index(rel))


def check_result(rel: str, text: str, layout: str = layouts.DEFAULT, repo: Repo | None = None) -> None:
    """A patched file must still be a memory file that is not read_only (a person's to
    keep: proposed, with `repo` proposing)."""
    def read_only() -> None:
        if repo is None:
            raise fail(f"{rel} cannot be written with read_only=true")
        person_only(repo, f"{TOOL}: {rel} cannot be written with read_only=true", approval.PROTECT)

    if _bare(rel, layout):
        if rules.is_protected(text.encode()):
            read_only()
        return
    try:
        mf = memfile.parse(text)
    except FrontmatterError as exc:
        raise fail(f"{_frontmatter_problem(exc)} ({rel}, after applying the patch)") from None
    if mf.read_only:
        read_only()


def _frontmatter_problem(exc: FrontmatterError) -> str:
    if exc.reason == "description":
        return "target file frontmatter is missing 'description'"
    if exc.reason == "missing":
        return "target file is missing required frontmatter"
    if exc.reason == "unclosed":
        return "target file is missing required frontmatter (the opening --- is never closed)"
    return f"target file frontmatter is invalid: {exc.detail or exc.reason}"


def _body_empty(text: str) -> bool:
    try:
        _, body, _ = memfile.split(text)
    except FrontmatterError:
        return text.strip() == ""
    return body.strip() == ""
