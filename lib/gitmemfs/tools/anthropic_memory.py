"""Anthropic's memory tool (`memory_20250818`) over a memory repository.

One engine for `git memory call --schema anthropic` and the SDK class
(`gitmemfs.integrations.anthropic.GitMemoryTool`): the six commands with the
semantics, return strings and error strings of the Anthropic SDK's reference
backend (`BetaLocalFilesystemMemoryTool` in `anthropic.lib.tools`), so a program
cannot tell the two apart except for the history.

What the reference does, and so do we: paths start with `/memories` and are
resolved through symlinks before use (a link inside the memory edits its target;
one leading outside is refused); folders are created 0o700 and files written
0o600; view numbers lines six wide and refuses files over 999,999 lines;
str_replace needs a unique match and answers with a numbered snippet; insert
adds a final newline; delete and rename take folders; deleting a file keeps its
emptied folder. Where Anthropic's public docs and the SDK disagree (the insert
range error, the listing header) we follow the SDK.

What git adds: each change is one commit limited to the call's own paths, only
those paths must be clean (untracked or edited files elsewhere do not block a
call), `.git` and git's control files are never a target, the memory rules
apply (UTF-8 without NUL, read_only frontmatter), and a change that changes
nothing commits nothing. With `adopt` (the SDK class's default), a file
changed beside the tool is first committed as an "outside change"
(tools/outside.py) instead of blocking the call.

Names are kept as the model chose them, in every layout: `/memories/x.txt` is
`x.txt`. In a Letta layout a Markdown file (`*.md`) is a memory block: it gets
a generated frontmatter (`description: Memory block <name>`) when created
without one, and the agent reads and edits its body only.
"""
from __future__ import annotations

import errno
import os
import shutil
import stat
from pathlib import Path
from typing import Any, Callable, Sequence, TypeVar

from gitmemfs.core import approval, memfile, nofollow, rules
from gitmemfs.core.errors import MemfsError, NeedsPerson
from gitmemfs.core.memfile import FrontmatterError
from gitmemfs.core.outcome import Outcome
from gitmemfs.core.repo import Repo
from gitmemfs.core.writer import Change, WriteSession, literal
from gitmemfs.tools import outside

ROOT = "/memories"
COMMANDS = ("view", "create", "str_replace", "insert", "delete", "rename")
MAX_LINES = 999_999
WIDTH = len(str(MAX_LINES))
FILE_MODE = 0o600  # the reference's modes, whatever the umask
DIR_MODE = 0o700
T = TypeVar("T")  # what an edit hands back to its answer (see rewrite)

# Names git gives a meaning to: writing them would change how git reads the memory.
CONTROL = frozenset({".git", ".gitattributes", ".gitmodules", ".gitignore"})


class ToolFailure(MemfsError):
    """A refusal worded exactly as the reference words it (the model sees this text)."""


class ReadOnly(NeedsPerson, ToolFailure):
    """A read_only file: a person's to change; the model may propose the change."""


def is_plain(repo: Repo) -> bool:
    return (repo.cfg("memory.layout") or "").strip().lower() == "plain"


def human_size(n: int) -> str:
    """The reference's sizes: 0B, 512B, 4.0K, 1.5M."""
    if n == 0:
        return "0B"
    units = ("B", "K", "M", "G")
    i = min((n.bit_length() - 1) // 10, len(units) - 1)
    size = n / (1024 ** i)
    return f"{int(size)}{units[i]}" if size == int(size) else f"{size:.1f}{units[i]}"


def numbered(lines: Sequence[str], first: int) -> str:
    return "\n".join(f"{str(n).rjust(WIDTH)}\t{line}" for n, line in enumerate(lines, first))


def split_keeping_cr(content: str) -> list[str]:
    """Lines split on LF only, without the empty tail a final newline leaves."""
    lines = content.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


class AnthropicMemory:
    """The memory tool on one repository. `reason` is the commit subject for every
    write (default: derived from the call, e.g. `create /memories/notes.txt`)."""

    def __init__(self, repo: Repo, *, reason: str | None = None, plain: bool | None = None,
                 adopt: bool = False):
        self.repo = repo
        self.reason = reason
        self.plain = is_plain(repo) if plain is None else plain
        self.adopt = adopt
        self.root = repo.root
        self.real_root = Path(repo.root).resolve()
        # The repository's own files, wherever they live (a `.git` folder, or elsewhere).
        self.git_dirs = tuple({os.path.realpath(repo.git_dir), os.path.realpath(repo.common_dir)})
        self.given: dict[str, str] = {}

    # -- dispatch -----------------------------------------------------------------------

    def execute(self, args: dict[str, Any], resolved: dict[str, str] | None = None) -> Outcome:
        """Run one call. `resolved`: paths the caller already validated and resolved (the
        SDK class's `_validate_path`), used as given instead of resolving them again."""
        self.given = dict(resolved or {})
        command = args.get("command")
        if command not in COMMANDS:
            raise ToolFailure(f"Unknown command: {command}")
        for key in _REQUIRED[command]:
            if not isinstance(args.get(key), _TYPES[key]) or isinstance(args.get(key), bool):
                raise ToolFailure(f"The {command} command needs '{key}' ({_TYPE_NAMES[key]}); "
                                  f"received: {', '.join(args) or 'nothing'}")
        handler: Callable[[dict[str, Any]], Outcome] = getattr(self, "do_" + command)
        return handler(args)

    def why(self, args: dict[str, Any], what: str) -> str:
        given = args.get("reason")
        if isinstance(given, str) and given.strip():
            return given.strip()
        return self.reason.strip() if self.reason and self.reason.strip() else what

    def session(self, scope: Sequence[str], file_mode: int = FILE_MODE) -> WriteSession:
        """The write's session; outside changes are committed first when adopting."""
        if self.adopt:
            outside.adopt(self.repo, scope)
        return WriteSession(self.repo, tool="memory", scope=scope, file_mode=file_mode,
                            dir_mode=DIR_MODE, prune=False)

    # -- paths --------------------------------------------------------------------------

    def locate(self, path: str) -> tuple[str, str]:
        """(resolved absolute path, path relative to the root; '' for the root)."""
        if not path.startswith(ROOT):
            raise ToolFailure(f"Path must start with /memories, got: {path}")
        relative = path[len(ROOT):].lstrip("/")
        try:
            if path in self.given:
                resolved = Path(os.path.normpath(os.path.join(self.real_root, self.given[path])))
            else:
                resolved = (Path(self.root) / relative).resolve() if relative else self.real_root
        except (RuntimeError, OSError, ValueError):  # a symlink loop, a NUL byte
            raise ToolFailure(f"Path {path} would escape /memories directory") from None
        if resolved == self.real_root:
            return str(resolved), ""
        if not str(resolved).startswith(str(self.real_root) + os.sep):
            if any(str(resolved) == d or str(resolved).startswith(d + os.sep) for d in self.git_dirs):
                raise ToolFailure(f"Path {path} names git's own data (.git), which holds the memory's "
                                  "history; choose another name")
            raise ToolFailure(f"Path {path} would escape /memories directory")
        rel = resolved.relative_to(self.real_root).as_posix()
        if any(part.lower() in CONTROL for part in rel.split("/")):
            raise ToolFailure(f"Path {path} names git's own data ({'/'.join(rel.split('/')[:1])}), "
                              "which holds the memory's history; choose another name")
        return str(resolved), rel

    def ancestor_file(self, rel: str) -> str | None:
        """The first folder on the way to `rel` that exists as something else."""
        probe = self.root
        for part in rel.split("/")[:-1]:
            probe = os.path.join(probe, part)
            if os.path.lexists(probe) and not os.path.isdir(probe):
                return probe
        return None

    # -- content ------------------------------------------------------------------------

    def read(self, full: str, path: str) -> bytes:
        """A regular file's bytes, never through a symbolic link anywhere on the way.

        Opened by its full path as the reference opens it (O_NOFOLLOW: a final link is
        refused; O_NONBLOCK: a FIFO cannot block), then proven to be the file that sits
        at that place when every folder from the root down is opened without following
        a link (core/nofollow.py): the open file's inode must be the one found there.
        O_NOFOLLOW alone guards only the last name; the second step also catches a
        folder swapped for a link, before or while the file is opened."""
        try:
            fd = os.open(Path(full), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.EMLINK):  # EMLINK: FreeBSD's O_NOFOLLOW
                raise ToolFailure(f"The path {path} is a symlink; memory files are never read through one") \
                    from None
            raise
        try:
            opened = os.fstat(fd)
            if not stat.S_ISREG(opened.st_mode):
                raise ToolFailure(f"path {path!r} is not a regular file")
            self.same_file(full, path, opened)
            with os.fdopen(fd, "rb", closefd=False) as fh:
                return fh.read()
        finally:
            os.close(fd)

    def same_file(self, full: str, path: str, opened: os.stat_result) -> None:
        try:
            with nofollow.folder_of(str(self.real_root), full) as (dir_fd, name):
                there = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError as exc:
            if nofollow.is_loop(exc):
                raise ToolFailure(f"The path {path} is a symlink or goes through one; memory files are never "
                                  "read through one") from None
            raise
        if (there.st_dev, there.st_ino) != (opened.st_dev, opened.st_ino):
            raise ToolFailure(f"The path {path} is a symlink or went through one while it was read (it changed "
                              "under the read); nothing was read")

    def is_block(self, rel: str) -> bool:
        """A Letta memory block: a Markdown file in a Letta layout (frontmatter kept apart)."""
        return not self.plain and rel.lower().endswith(".md")

    def split(self, data: bytes, path: str, rel: str) -> tuple[str, str]:
        """(frontmatter kept as stored, the text the agent sees)."""
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ToolFailure(f"path {path!r} is not valid utf-8") from None
        if not self.is_block(rel):
            return "", text
        try:
            _, body, _ = memfile.split(text)
        except FrontmatterError:
            return "", text
        return text[:len(text) - len(body)], body

    def new_file(self, rel: str, text: str) -> bytes:
        if not self.is_block(rel):
            return text.encode("utf-8")
        if text.startswith("---"):
            try:
                memfile.parse(text)
                return text.encode("utf-8")
            except FrontmatterError:
                pass
        # In the layout's own shape: letta-root's name and description, no frontmatter in
        # a MEMORY.md index (as Letta writes them; the system/ layout's description alone).
        from gitmemfs.core import layout as layouts

        return layouts.render_new(layouts.of_repo(self.repo)[0], rel, generated(rel), text).encode("utf-8")

    def refuse_read_only(self, data: bytes | None, path: str, verb: str) -> None:
        if data is not None and rules.is_protected(data) and not self.repo.propose:
            raise ReadOnly(f"The file {path} is read_only and cannot be {verb}", frozenset({approval.PROTECT}))

    # -- commands -----------------------------------------------------------------------

    def do_view(self, args: dict[str, Any]) -> Outcome:
        path = args["path"]
        full, rel = self.locate(path)
        try:
            leaf = os.lstat(full)
        except (FileNotFoundError, NotADirectoryError):
            raise ToolFailure(f"The path {path} does not exist. Please provide a valid path.") from None
        if stat.S_ISDIR(leaf.st_mode):
            return Outcome(self.listing(full, path, leaf.st_size), extra={"kind": "folder"})
        if not stat.S_ISREG(leaf.st_mode):
            raise ToolFailure(f"Unsupported file type for {path}")
        try:
            _, content = self.split(self.read(full, path), path, rel)
        except FileNotFoundError:
            raise ToolFailure(f"The file {path} no longer exists (may have been deleted or renamed "
                              "concurrently).") from None
        lines = content.split("\n")
        if len(lines) > MAX_LINES:
            raise ToolFailure(f"File {path} exceeds maximum line limit of 999,999 lines.")
        shown, first = lines, 1
        rng = args.get("view_range")
        if rng is not None and not (isinstance(rng, list) and all(type(n) is int for n in rng)):
            raise ToolFailure("`view_range` must be a list of two integers [start, end]; end -1 reads "
                              "to the end of the file")
        if rng and len(rng) == 2:
            start = max(1, rng[0]) - 1
            shown = lines[start:len(lines) if rng[1] == -1 else rng[1]]
            first = start + 1
        return Outcome(f"Here's the content of {path} with line numbers:\n" + numbered(shown, first),
                       extra={"kind": "file", "path": rel})

    def listing(self, full: str, path: str, size: int) -> str:
        rows: list[tuple[str, str]] = []
        git_dir = str(self.real_root / ".git")

        def collect(folder: str, prefix: str, depth: int) -> None:
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError:
                return
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                rel = f"{prefix}/{entry.name}" if prefix else entry.name
                try:
                    real = os.path.realpath(entry.path)
                    if not real.startswith(str(self.real_root) + os.sep) or \
                            real == git_dir or real.startswith(git_dir + os.sep):
                        continue  # a link out of the memory, or into its history
                    st = os.stat(entry.path)
                except (OSError, ValueError):
                    continue
                if stat.S_ISDIR(st.st_mode):
                    rows.append((human_size(st.st_size), rel + "/"))
                    if depth < 2:
                        collect(entry.path, rel, depth + 1)
                elif stat.S_ISREG(st.st_mode):
                    rows.append((human_size(st.st_size), rel))

        collect(full, "", 1)
        lines = [f"{human_size(size)}\t{path}"] + [f"{s}\t{path}/{rel}" for s, rel in rows]
        return (f"Here're the files and directories up to 2 levels deep in {path}, excluding hidden "
                "items:\n" + "\n".join(lines))

    def do_create(self, args: dict[str, Any]) -> Outcome:
        path = args["path"]
        full, rel = self.locate(path)
        if not rel or os.path.lexists(full):
            raise ToolFailure(f"File {path} already exists")
        blocker = self.ancestor_file(rel)
        if blocker is not None:
            raise ToolFailure(f"Cannot create {path}: {ROOT}/{os.path.relpath(blocker, self.root)} is a file, "
                              "not a directory")
        with self.session([rel]) as s:
            if os.path.lexists(full):
                raise ToolFailure(f"File {path} already exists")
            sha = s.commit([Change(rel, self.new_file(rel, args["file_text"]))], op="create",
                           reason=self.why(args, f"create {path}"))
        return Outcome(f"File created successfully at: {path}", sha, [rel])

    def rewrite(self, args: dict[str, Any], path: str, op: str,
                edit: Callable[[bytes, str], tuple[str, T]]) -> tuple[T, str | None, str]:
        """Edit one file: `edit(data, rel)` gives its new text and what the answer needs.
        It runs first on the file as it is (a refusal needs no lock), then again under
        the lock on the file as committed; an edit that changes nothing commits nothing.
        Returns what `edit` gave, the commit (or None) and the file's repository path."""
        full, rel = self.editable(path)
        edit(self.read(full, path), rel)
        with self.session([rel]) as s:
            data = s.read(rel)
            if data is None:
                raise ToolFailure(f"The file {path} no longer exists (may have been deleted or renamed "
                                  "concurrently).")
            text, extra = edit(data, rel)
            after = text.encode("utf-8")
            sha = s.commit([Change(rel, after)], op=op, reason=self.why(args, f"{op} {path}")) \
                if after != data else None
        return extra, sha, rel

    def editable(self, path: str) -> tuple[str, str]:
        full, rel = self.locate(path)
        if not os.path.exists(full):
            raise ToolFailure(f"The path {path} does not exist. Please provide a valid path.")
        if not os.path.isfile(full):
            raise ToolFailure(f"The path {path} is not a file.")
        return full, rel

    def do_str_replace(self, args: dict[str, Any]) -> Outcome:
        path, old, new = args["path"], args["old_str"], args.get("new_str")
        new = "" if new is None else new
        if not isinstance(new, str):
            raise ToolFailure("The str_replace command needs 'new_str' (a string)")

        def edit(data: bytes, rel: str) -> tuple[str, tuple[str, int]]:
            head, content = self.split(data, path, rel)
            count = content.count(old)
            if count == 0:
                raise ToolFailure(f"No replacement was performed, old_str `{old}` did not appear verbatim "
                                  f"in {path}.")
            if count > 1:
                raise ToolFailure(f"No replacement was performed. Multiple occurrences of old_str `{old}` "
                                  f"in lines: {', '.join(map(str, match_lines(content, old)))}. "
                                  "Please ensure it is unique")
            self.refuse_read_only(data, path, "modified")
            return head + content.replace(old, new), (content, content[:content.find(old)].count("\n"))

        (before, changed), sha, rel = self.rewrite(args, path, "str_replace", edit)
        lines = before.replace(old, new).split("\n")
        start, stop = max(0, changed - 2), min(len(lines), changed + 3)
        return Outcome("The memory file has been edited. Here is the snippet showing the change (with line "
                       "numbers):\n" + numbered(lines[start:stop], start + 1), sha, [rel] if sha else [])

    def do_insert(self, args: dict[str, Any]) -> Outcome:
        path, line = args["path"], args["insert_line"]
        text = args.get("insert_text", args.get("new_str"))
        if not isinstance(text, str):
            raise ToolFailure("The insert command needs 'insert_text' (a string)")

        def edit(data: bytes, rel: str) -> tuple[str, None]:
            head, content = self.split(data, path, rel)
            lines = split_keeping_cr(content)
            if line < 0 or line > len(lines):
                raise ToolFailure(f"Invalid `insert_line` parameter: {line}. It should be within the range "
                                  f"[0, {len(lines)}].")
            self.refuse_read_only(data, path, "modified")
            lines.insert(line, text.rstrip("\n"))
            after = "\n".join(lines)
            return head + (after if after.endswith("\n") else after + "\n"), None

        _, sha, rel = self.rewrite(args, path, "insert", edit)
        return Outcome(f"The file {path} has been edited.", sha, [rel] if sha else [])

    def do_delete(self, args: dict[str, Any]) -> Outcome:
        path = args["path"]
        full, rel = self.locate(path)
        if not rel:
            raise ToolFailure("Cannot delete the /memories directory itself")
        reason = self.why(args, f"delete {path}")
        if os.path.isfile(full):
            with self.session([rel]) as s:
                data = s.read(rel)
                self.refuse_read_only(data, path, "deleted")
                sha = s.commit([Change(rel, None)], op="delete", reason=reason) if self.tracked(rel) else None
                if os.path.lexists(full):  # nothing tracked there (only an ignored file)
                    nofollow.unlink(self.root, full)
            return Outcome(f"Successfully deleted {path}", sha, [rel] if sha else [])
        if not os.path.isdir(full):
            raise ToolFailure(f"The path {path} does not exist")
        with self.session([rel]) as s:
            files = self.tracked(rel)
            for f in files:
                self.refuse_read_only(s.read(f), f"{ROOT}/{f}", "deleted")
            sha = None
            if files:
                sha = s.commit([Change(f, None) for f in files], op="delete", reason=reason,
                               paths=[rel + "/"])
            nofollow.rmtree(self.root, full)  # the emptied folders, as the reference removes them
        return Outcome(f"Successfully deleted {path}", sha, [rel + "/"] if sha else [])

    def do_rename(self, args: dict[str, Any]) -> Outcome:
        old, new = args["old_path"], args["new_path"]
        old_full, old_rel = self.locate(old)
        new_full, new_rel = self.locate(new)
        if not old_rel:
            raise ToolFailure("Cannot rename the /memories directory itself")
        if not new_rel or os.path.exists(new_full):
            raise ToolFailure(f"The destination {new} already exists")
        if not os.path.lexists(old_full):
            raise ToolFailure(f"The path {old} does not exist")
        folder = os.path.isdir(old_full)
        if folder and (new_rel + "/").startswith(old_rel + "/"):
            raise ToolFailure(f"Cannot move {old} into itself ({new})")
        blocker = self.ancestor_file(new_rel)
        if blocker is not None:
            raise ToolFailure(f"Cannot rename to {new}: {ROOT}/{os.path.relpath(blocker, self.root)} is a "
                              "file, not a directory")
        reason = self.why(args, f"rename {old} to {new}")
        if not folder:
            mode = os.stat(old_full).st_mode & 0o7777  # a rename keeps the file's mode
            with self.session([old_rel, new_rel], file_mode=mode) as s:
                data = s.read(old_rel) or b""
                self.refuse_read_only(data, old, "renamed")
                sha: str | None = s.commit([Change(old_rel, None), Change(new_rel, self.moved(data, old_rel, new_rel))],
                               op="rename", reason=reason, paths=[old_rel, new_rel])
            return Outcome(f"Successfully renamed {old} to {new}", sha, [old_rel, new_rel])
        with self.session([old_rel, new_rel]) as s:
            files = self.tracked(old_rel)
            changes = []
            for f in files:
                data = s.read(f) or b""
                self.refuse_read_only(data, f"{ROOT}/{f}", "renamed")
                moved = new_rel + f[len(old_rel):]
                changes += [Change(f, None), Change(moved, self.moved(data, f, moved))]
            made = self.copy_folders(old_full, new_full)
            try:
                sha = s.commit(changes, op="rename", reason=reason,
                               paths=[old_rel + "/", new_rel + "/"]) if changes else None
            except BaseException:
                for d in reversed(made):
                    nofollow.rmdir(self.root, d)
                raise
            nofollow.rmtree(self.root, old_full)
        return Outcome(f"Successfully renamed {old} to {new}", sha,
                       [old_rel + "/", new_rel + "/"] if sha else [])

    def moved(self, data: bytes, old_rel: str, new_rel: str) -> bytes:
        """A Letta file whose description we generated gets one for its new name."""
        if self.plain or not data.startswith(b"---"):
            return data
        try:
            mf = memfile.parse(data.decode("utf-8"))
        except (UnicodeDecodeError, FrontmatterError):
            return data
        if mf.description != generated(old_rel):
            return data
        return memfile.render_file(mf, description=generated(new_rel)).encode("utf-8")

    def copy_folders(self, old_full: str, new_full: str) -> list[str]:
        """The folder tree of `old_full` at `new_full` with the same modes (the reference
        moves folders whole, empty ones included); missing parents are made 0o700."""
        # Folders are made through open folders, never through a link swapped in meanwhile.
        made: list[str] = []
        above, _ = nofollow.split(self.root, new_full)
        fd, created = nofollow.open_folder(self.root, above, create=True, mode=DIR_MODE)
        os.close(fd)
        made += created
        for dirpath, dirnames, _ in os.walk(old_full):
            target = new_full + dirpath[len(old_full):]
            folders, name = nofollow.split(self.root, target)
            if os.path.lexists(target):
                raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), target)
            mode = os.stat(dirpath, follow_symlinks=False).st_mode & 0o7777
            fd, created = nofollow.open_folder(self.root, [*folders, name], create=True, mode=mode)
            os.close(fd)
            made += created
            dirnames.sort()
        return made

    def tracked(self, rel: str) -> list[str]:
        return self.repo.git("ls-files", "-z", "--", *literal([rel])).zsplit()

    def clear_all(self, reason: str | None = None) -> Outcome:
        """Every memory file gone in one commit; the root stays (the SDK's clear_all_memory)."""
        if self.adopt:
            outside.adopt(self.repo)
        with WriteSession(self.repo, tool="memory", prune=False) as s:
            files = self.repo.git("ls-files", "-z").zsplit()
            sha = s.commit([Change(f, None) for f in files], op="delete",
                           reason=reason or self.reason or "clear all memory", paths=["/"]) if files else None
            for name in os.listdir(self.root):
                if name != ".git":
                    target = os.path.join(self.root, name)
                    if os.path.isdir(target) and not os.path.islink(target):
                        shutil.rmtree(target)
                    else:
                        os.unlink(target)
        return Outcome("All memory cleared", sha, ["/"] if sha else [])


def generated(rel: str) -> str:
    name = rel[:-3] if rel.lower().endswith(".md") else rel
    return f"Memory block {name}"


def match_lines(content: str, needle: str) -> list[int]:
    """Lines of every match, overlapping ones included (as the reference counts them)."""
    out: list[int] = []
    start = 0
    while True:
        pos = content.find(needle, start)
        if pos == -1:
            return out
        out.append(content[:pos].count("\n") + 1)
        start = pos + 1


_REQUIRED = {"view": ("path",), "create": ("path", "file_text"), "str_replace": ("path", "old_str"),
             "insert": ("path", "insert_line"), "delete": ("path",), "rename": ("old_path", "new_path")}
_TYPES = {"path": str, "file_text": str, "old_str": str, "insert_line": int, "old_path": str,
          "new_path": str}
_TYPE_NAMES = {"insert_line": "an integer"} | {k: "a string" for k in _TYPES if k != "insert_line"}
