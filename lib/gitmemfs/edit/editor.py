"""The memory edits: create, str_replace, insert, delete, rename, update_description,
plus the read-only `view`. Each edit becomes one commit through `writer`.

Semantics follow upstream's `memory` tool (reference/upstream-memory-tool.md §1)
with the deliberate differences of DESIGN §12: str_replace needs a unique match
unless told to replace all and may delete text; insert works on logical lines;
delete and rename honour read_only; nothing is ever written into `.git`.
Failures that adapters reword (the Anthropic schema) have their own classes.
"""
from __future__ import annotations

import os

from gitmemfs.core import approval, memfile, paths
from gitmemfs.core import layout as layouts
from gitmemfs.core.errors import MemfsError, UsageError
from gitmemfs.core.memfile import FrontmatterError, MemFile
from gitmemfs.core.outcome import Outcome
from gitmemfs.core.paths import PathError
from gitmemfs.core.repo import Repo
from gitmemfs.core.writer import Change, WriteSession, person_only


class NotFound(MemfsError):
    """The target file or folder does not exist."""


class AlreadyExists(MemfsError):
    """create or rename would overwrite something."""


class OldStringNotFound(MemfsError):
    pass


class OldStringAmbiguous(MemfsError):
    def __init__(self, message: str, lines: list[int]):
        super().__init__(message)
        self.lines = lines


class InvalidLine(MemfsError):
    def __init__(self, message: str, line_count: int):
        super().__init__(message)
        self.line_count = line_count


def proposed(repo: Repo, command: str, sha: str, affected: list[str]) -> Outcome:
    """The answer to `--propose`: what was proposed, and that nothing was applied."""
    ident = repo.proposed
    return Outcome(f"Memory {command} proposed as {ident}, not applied; a person accepts or rejects it "
                   "(git memory proposals).", None, affected,
                   extra={"proposed": ident, "proposal_commit": sha, "applied": False, "paths": affected})


def require_text(value: object, field_name: str, command: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise MemfsError(f"memory {command}: '{field_name}' must be a non-empty string")
    return value


def require_reason(reason: object, tool: str = "memory") -> str:
    if not isinstance(reason, str) or not reason.strip():
        raise MemfsError(f"{tool}: 'reason' must be a non-empty string")
    return reason.strip()


def split_lines(body: str) -> tuple[list[str], bool]:
    """Logical lines of a body and whether it ends with a newline."""
    if body == "":
        return [], False
    ends = body.endswith("\n")
    lines = (body[:-1] if ends else body).split("\n")
    return lines, ends


class Editor:
    """The edit commands on one repository. `tool` prefixes error messages."""

    def __init__(self, repo: Repo, *, tool: str = "memory"):
        self.repo = repo
        self.tool = tool

    # -- helpers -------------------------------------------------------------------------

    def label(self, raw: object, field_name: str) -> str:
        try:
            return paths.normalize_label(raw, field_name, self.repo.root, tool=self.tool)
        except PathError as exc:
            raise MemfsError(str(exc)) from None

    def file_rel(self, file_path: str, command: str) -> str:
        """The file a file command works on; a path ending in '/' names a folder."""
        label = self.label(file_path, "file_path")
        if file_path.strip().endswith("/"):
            raise MemfsError(f"memory {command}: {file_path.strip()} is a folder (it ends with /); "
                             f"give a file path such as {label}/notes.md")
        return paths.file_of(label)

    def jail(self, rel: str) -> str:
        try:
            return paths.check_jail(self.repo.root, rel, tool=self.tool)
        except PathError as exc:
            raise MemfsError(str(exc)) from None

    def load(self, session: WriteSession, raw: str, rel: str) -> tuple[MemFile, bytes]:
        """Upstream's "editable load": readable, valid frontmatter, not read_only."""
        target = self.jail(rel)
        if os.path.isdir(target):
            raise NotFound(f"{self.tool}: failed to read {raw}: it is a folder, not a memory file")
        data = session.read(rel)
        if data is None:
            raise NotFound(f"{self.tool}: failed to read {raw}: No such file or directory")
        mf = self.parse(raw, data)
        if mf.read_only:
            person_only(self.repo, f"{self.tool}: {raw} is read_only and cannot be modified", approval.PROTECT)
        return mf, data

    def parse(self, raw: str, data: bytes) -> MemFile:
        try:
            text = memfile.decode_strict(data, os.path.join(self.repo.root, raw))
        except memfile.EncodingProblem as exc:
            raise MemfsError(f"{self.tool}: failed to read {raw}: {exc}") from None
        try:
            return memfile.parse(text)
        except FrontmatterError as exc:
            if exc.reason == "description":
                raise MemfsError(f"{self.tool}: target file frontmatter is missing 'description'") from None
            if exc.reason == "unclosed":
                raise MemfsError(f"{self.tool}: target file is missing required frontmatter "
                                 "(the opening --- is never closed)") from None
            if exc.reason == "missing":
                raise MemfsError(f"{self.tool}: target file is missing required frontmatter") from None
            raise MemfsError(f"{self.tool}: target file frontmatter is invalid: {exc.detail}") from None

    def description(self, value: str) -> str:
        clean = memfile.sanitize_description(value)
        if not clean:
            raise MemfsError(f"{self.tool}: 'description' must not be empty")
        return clean

    def done(self, command: str, sha: str, affected: list[str]) -> Outcome:
        if self.repo.proposed:
            return proposed(self.repo, command, sha, affected)
        return Outcome(f"Memory {command} committed ({sha[:7]}).", sha, affected)

    def letta_root_target(self, layout: str, rel: str, command: str) -> None:
        """Where Letta's memory tool refuses to write in a root-index memory: `system/`
        (core memory is the root's Markdown there) and `skills/` (not the memory tool's)."""
        if layout != layouts.ROOT:
            return
        top = rel.split("/", 1)[0]
        if top == "system":
            raise MemfsError(f"memory {command}: core memory uses root Markdown files, not system/ "
                             f"(this memory has a root MEMORY.md); write {rel.split('/', 1)[1]} at the root instead")
        if top == "skills":
            raise MemfsError(f"memory {command}: skills are managed by the skill/file tooling, not the memory tool")

    def no_case_twin(self, rel: str, command: str, ignore: str | None = None) -> None:
        """Refuse a path that differs from a tracked one only in case or Unicode
        normalisation: a case-insensitive checkout (macOS, Windows) cannot hold both."""
        tracked = [p for p in self.tracked("") if p != ignore]
        other = paths.case_twin(rel, tracked)
        if other is not None:
            raise MemfsError(f"memory {command}: {rel} collides with the tracked {other} on case-insensitive "
                             f"file systems (macOS, Windows); use the existing spelling {other}")

    def session(self) -> WriteSession:
        return WriteSession(self.repo, tool=self.tool)

    # -- commands ------------------------------------------------------------------------

    def create(self, file_path: str, description: str | None, text: str | None, reason: str, *,
               command: str = "create", flag: str | None = None) -> Outcome:
        """`flag`: the option a person gives the description with (`-d`); a missing one is
        then a usage error in those words, where a tool call hears upstream's."""
        reason = require_reason(reason, self.tool)
        require_text(file_path, "file_path", command)
        body = text or ""
        if body and not body.endswith("\n"):
            body += "\n"  # a text file ends with a newline (as builtin:tidy would make it)
        if body.startswith("---\n") or body.startswith("---\r\n"):
            raise MemfsError(f"memory {command}: 'file_text' starts with a frontmatter block; pass only "
                             "the body and give the description separately")
        rel = self.file_rel(file_path, command)
        with self.session() as s:
            shape = layouts.of_repo(self.repo)[0]  # the new file takes its layout's frontmatter shape
            self.letta_root_target(shape, rel, command)
            unused = shape == layouts.ROOT and layouts.is_index(rel)
            given = isinstance(description, str) and bool(description.strip())
            if unused:
                description = "index"  # a MEMORY.md index has no frontmatter: Letta leaves it unused
            elif description is None and flag:
                raise UsageError(f"memory {command}: give {flag} DESCRIPTION, the file's one-line description")
            description = require_text(description, "description", command)
            content = layouts.render_new(shape, rel, self.description(description), body).encode()
            target = self.jail(rel)
            if os.path.lexists(target):
                raise AlreadyExists(f"memory {command}: block already exists at {file_path}")
            self.no_case_twin(rel, command)
            sha = s.commit([Change(rel, content)], op=command, reason=reason)
        done = self.done(command, sha, [rel])
        if unused and given:  # said, not dropped silently (issue 39)
            done.message += f" The description was not used: {rel} is an index, which has no frontmatter."
        return done

    def str_replace(self, file_path: str, old: str, new: str, reason: str, *,
                    replace_all: bool = False) -> Outcome:
        reason = require_reason(reason, self.tool)
        require_text(file_path, "file_path", "str_replace")
        if not isinstance(old, str) or old == "":
            raise MemfsError("memory str_replace: 'old_string' must be a non-empty string")
        if not isinstance(new, str):
            raise MemfsError("memory str_replace: 'new_string' must be a string")
        rel = self.file_rel(file_path, "str_replace")
        with self.session() as s:
            mf, _ = self.load(s, file_path, rel)
            body, crlf = memfile.to_lf(mf.body)
            needle, replacement = (old.replace("\r\n", "\n"), new.replace("\r\n", "\n")) if crlf else (old, new)
            count = body.count(needle)
            if count == 0:
                raise OldStringNotFound("memory str_replace: old_string was not found in the target memory block")
            if count > 1 and not replace_all:
                lines = _match_lines(body, needle)
                raise OldStringAmbiguous(
                    f"memory str_replace: old_string matched {count} times in {file_path} (lines "
                    f"{', '.join(map(str, lines))} of the body); include more surrounding text so it "
                    "matches once, or replace every occurrence with --all", lines)
            body = body.replace(needle, replacement) if replace_all else body.replace(needle, replacement, 1)
            content = memfile.render_file(mf, body=memfile.from_lf(body, crlf)).encode()
            sha = s.commit([Change(rel, content)], op="str_replace", reason=reason)
        out = self.done("str_replace", sha, [rel])
        out.extra["replacements"] = count if replace_all else 1
        return out

    def insert(self, file_path: str, line: object, text: str, reason: str, *, after: bool = False,
               strict: bool = False) -> Outcome:
        """Insert so the text starts at body line `line` (1-indexed, clamped), or with
        `after=True` (Anthropic) after line `line`, which must be within [0, lines]."""
        reason = require_reason(reason, self.tool)
        require_text(file_path, "file_path", "insert")
        if not isinstance(text, str):
            raise MemfsError("memory insert: 'insert_text' must be a string")
        number = _line_number(line)
        rel = self.file_rel(file_path, "insert")
        with self.session() as s:
            mf, _ = self.load(s, file_path, rel)
            body, crlf = memfile.to_lf(mf.body)
            lines, ends = split_lines(body)
            if after:
                if number < 0 or number > len(lines):
                    raise InvalidLine(f"memory insert: 'insert_line' {number} is outside the file's "
                                      f"lines [0, {len(lines)}]", len(lines))
                index = number
            elif strict and number < 1:  # the CLI: LINE is 1-based (tool calls clamp, as upstream)
                raise InvalidLine(f"memory insert: LINE {number} is not a line: LINE is 1-based, from 1 (the "
                                  f"top) to {len(lines) + 1} (after the last line; larger numbers append too)",
                                  len(lines))
            else:
                index = min(max(number, 1) - 1, len(lines))
            new_lines, _ = split_lines(text.replace("\r\n", "\n")) if text else ([""], False)
            lines[index:index] = new_lines
            body = "\n".join(lines) + ("\n" if ends or (not body and text.endswith("\n")) else "")
            content = memfile.render_file(mf, body=memfile.from_lf(body, crlf)).encode()
            sha = s.commit([Change(rel, content)], op="insert", reason=reason)
        return self.done("insert", sha, [rel])

    def delete(self, file_path: str, reason: str) -> Outcome:
        reason = require_reason(reason, self.tool)
        require_text(file_path, "file_path", "delete")
        raw = file_path.strip()
        label = self.label(file_path, "file_path")
        folder = os.path.join(self.repo.root, *label.split("/"))
        file_rel = paths.file_of(label)
        with self.session() as s:
            want_folder = raw.endswith("/") or (not raw.endswith(".md") and os.path.isdir(folder))
            if want_folder and not raw.endswith("/") and os.path.isfile(folder + ".md"):
                raise MemfsError(f"memory delete: {raw} is ambiguous: both the folder {label}/ and the file "
                                 f"{file_rel} exist; pass {label}/ for the folder or {file_rel} for the file")
            if want_folder:
                self.jail(label)
                files = self.tracked(label)
                if not files:
                    raise NotFound(f"{self.tool}: failed to read {raw}: no memory files under {label}/")
                for rel in files:
                    if rel.lower().endswith(".md") and self._protected(s.read(rel)):
                        person_only(self.repo, f"{self.tool}: {rel} is read_only and cannot be deleted "
                                    f"(it is inside {label}/)", approval.PROTECT)
                sha = s.commit([Change(rel, None) for rel in files], op="delete", reason=reason,
                               paths=[label + "/"])
                return self.done("delete", sha, [label + "/"])
            self.jail(file_rel)
            data = s.read(file_rel)
            if data is None:
                raise NotFound(f"{self.tool}: failed to read {raw}: No such file or directory")
            if self._protected(data):
                person_only(self.repo, f"{self.tool}: {raw} is read_only and cannot be modified", approval.PROTECT)
            if layouts.is_index(file_rel) and layouts.of_repo(self.repo)[0] == layouts.ROOT:
                raise MemfsError("memory delete: MEMORY.md indexes cannot be deleted (a root-index memory's "
                                 "folders hold memory through them); delete the whole folder instead")
            sha = s.commit([Change(file_rel, None)], op="delete", reason=reason)
        return self.done("delete", sha, [file_rel])

    def rename(self, old_path: str, new_path: str, reason: str) -> Outcome:
        reason = require_reason(reason, self.tool)
        require_text(old_path, "old_path", "rename")
        require_text(new_path, "new_path", "rename")
        old_label = self.label(old_path, "old_path")
        new_label = self.label(new_path, "new_path")
        if old_label == new_label:
            raise MemfsError(f"memory rename: source and destination are the same ({old_label}.md)")
        old_dir = os.path.join(self.repo.root, *old_label.split("/"))
        with self.session() as s:
            if not old_path.strip().endswith(".md") and os.path.isdir(old_dir) \
                    and not os.path.exists(old_dir + ".md"):
                return self._rename_folder(s, old_path, new_path, old_label, new_label, reason)
            src, dst = paths.file_of(old_label), paths.file_of(new_label)
            dst_abs = self.jail(dst)
            if os.path.lexists(dst_abs):
                raise AlreadyExists(f"memory rename: destination already exists at {new_path}")
            shape = layouts.of_repo(self.repo)[0]
            if shape == layouts.ROOT and (layouts.is_index(src) or layouts.is_index(dst)):
                raise MemfsError("memory rename: MEMORY.md indexes cannot be renamed")
            self.letta_root_target(shape, dst, "rename")
            self.no_case_twin(dst, "rename", ignore=src)
            _, data = self.load(s, old_path, src)
            sha = s.commit([Change(src, None), Change(dst, data)], op="rename", reason=reason,
                           paths=[src, dst])
        return self.done("rename", sha, [src, dst])

    def _rename_folder(self, s: WriteSession, old_path: str, new_path: str, old_label: str,
                       new_label: str, reason: str) -> Outcome:
        if (new_label + "/").startswith(old_label + "/"):
            raise MemfsError(f"memory rename: cannot move {old_label}/ into itself")
        dst_abs = self.jail(new_label)
        if os.path.lexists(dst_abs) or os.path.lexists(dst_abs + ".md"):
            raise AlreadyExists(f"memory rename: destination already exists at {new_path}")
        files = self.tracked(old_label)
        if not files:
            raise NotFound(f"{self.tool}: failed to read {old_path}: no memory files under {old_label}/")
        changes = []
        for rel in files:
            data = s.read(rel)
            if rel.lower().endswith(".md") and self._protected(data):
                person_only(self.repo, f"{self.tool}: {rel} is read_only and cannot be modified "
                            f"(it is inside {old_label}/)", approval.PROTECT)
            moved = new_label + rel[len(old_label):]
            self.jail(moved)
            changes += [Change(rel, None), Change(moved, data)]
        sha = s.commit(changes, op="rename", reason=reason, paths=[old_label + "/", new_label + "/"])
        return self.done("rename", sha, [old_label + "/", new_label + "/"])

    def update_description(self, file_path: str, description: str, reason: str) -> Outcome:
        reason = require_reason(reason, self.tool)
        require_text(file_path, "file_path", "update_description")
        require_text(description, "description", "update_description")
        clean = self.description(description)
        rel = self.file_rel(file_path, "update_description")
        with self.session() as s:
            mf, _ = self.load(s, file_path, rel)
            content = memfile.render_file(mf, description=clean).encode()
            sha = s.commit([Change(rel, content)], op="update_description", reason=reason)
        return self.done("update_description", sha, [rel])

    # -- reading -------------------------------------------------------------------------

    def tracked(self, folder: str) -> list[str]:
        res = self.repo.git("ls-files", "-z", "--", *([f":(literal){folder}/"] if folder else []))
        return res.zsplit()

    def _protected(self, data: bytes | None) -> bool:
        if data is None:
            return False
        try:
            fm, _, _ = memfile.split(data.decode("utf-8", "replace").lstrip("\ufeff"))
            return memfile.protects(memfile.parse_entries(fm))
        except FrontmatterError as exc:
            if exc.entries is not None:  # duplicate keys: the hook's rule (rules.is_protected)
                return memfile.protects(exc.entries)
            return b"read_only" in data.split(b"\n---", 1)[0]

    def view(self, file_path: str, *, view_range: tuple[int, int] | None = None,
             numbered: bool = False) -> Outcome:
        """The file as stored; with a range or `numbered`, body lines with numbers."""
        require_text(file_path, "file_path", "view")
        label = self.label(file_path, "file_path")
        folder = os.path.join(self.repo.root, *label.split("/"))
        if not file_path.strip().endswith(".md") and os.path.isdir(folder):
            self.jail(label)
            text = self.listing(label)
            files = [dict(zip(("path", "description"), row.split("\t", 1))) for row in text.split("\n") if row]
            return Outcome(text, extra={"path": label + "/", "kind": "folder", "files": files})
        rel = paths.file_of(label)
        if not file_path.endswith(".md") and not os.path.lexists(os.path.join(self.repo.root, rel)) \
                and os.path.isfile(os.path.join(self.repo.root, label)):
            rel = label  # a file that is not Markdown (profile.png), as `show` and compile name it
        target = self.jail(rel)
        try:
            with open(target, "rb") as fh:
                data = fh.read()
        except FileNotFoundError:
            raise NotFound(f"{self.tool}: failed to read {file_path}: No such file or directory") from None
        except IsADirectoryError:
            raise NotFound(f"{self.tool}: failed to read {file_path}: it is a folder, not a memory file") \
                from None
        if view_range is None and not numbered:
            return Outcome(data.decode("utf-8", "replace"), extra={"path": rel, "kind": "file"})
        mf = self.parse(file_path, data)
        body, _ = memfile.to_lf(mf.body)
        lines, _ = split_lines(body)
        start, end = view_range or (1, -1)
        if start < 1 or (end != -1 and end < start):
            raise MemfsError(f"memory view: invalid range {start}:{end}; use A:B with 1 <= A <= B, "
                             "or B = -1 for the end")
        if view_range is not None and start > len(lines):
            raise MemfsError(f"memory view: invalid range {start}:{end}: {rel}'s body has {len(lines)} "
                             f"line{'' if len(lines) == 1 else 's'}; start at 1 to {max(len(lines), 1)}")
        stop = len(lines) if end == -1 else min(end, len(lines))
        text = "\n".join(f"{n:6d}\t{lines[n - 1]}" for n in range(start, stop + 1))
        return Outcome(text, extra={"path": rel, "kind": "file", "description": mf.description,
                                    "lines": len(lines)})

    def listing(self, label: str = "") -> str:
        """Memory files under a folder, one per line with their descriptions."""
        rows = []
        base = os.path.join(self.repo.root, *label.split("/")) if label else self.repo.root
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in sorted(filenames):
                if name.startswith(".") or not name.lower().endswith(".md"):
                    continue
                full = os.path.join(dirpath, name)
                if os.path.islink(full):
                    continue  # not memory: its description could come from outside the repository
                rel = os.path.relpath(full, self.repo.root).replace(os.sep, "/")
                rows.append(f"{rel}\t{_description_of(full)}")
        return "\n".join(rows)


def _description_of(path: str) -> str:
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096).decode("utf-8", "replace")
        fm, _, _ = memfile.split(head)
        for e in memfile.parse_entries(fm):
            if e.key == "description" and e.value:
                return e.value.strip()
    except (OSError, FrontmatterError):
        pass
    return ""


def _match_lines(body: str, needle: str) -> list[int]:
    out: list[int] = []
    start = 0
    while True:
        idx = body.find(needle, start)
        if idx < 0:
            return out
        out.append(body.count("\n", 0, idx) + 1)
        start = idx + len(needle)


def _line_number(value: object) -> int:
    """A line number: a whole number. A JSON number such as 3.0 counts (JSON has one
    number type); 1.5, 1e400 and NaN are refused rather than rounded to some line."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MemfsError("memory insert: 'insert_line' must be a number")
    if isinstance(value, float):
        if not value.is_integer():
            raise MemfsError(f"memory insert: 'insert_line' must be a whole number of lines, got {value!r}")
        return int(value)
    return value
