"""The MCP tools: one per memory operation, calling the operations in process.

Every write needs a `reason` (the commit subject) and goes through `edit.editor` or
`edit.patch` exactly as `git memory` does: the writer lock, the clean-tree check,
validation by the shared rules, one commit. A result is structured content
`{ok, message, commit, paths, ...}` plus the message as text; a refusal is an
`isError` result whose text is the CLI's error message, and the repository is left
as it was (the write path restores every path it touched).

Models reach for other spellings of the arguments (Anthropic's `old_str`, Claude
Code's `file_path`/`old_string`): each tool accepts those aliases too.
"""
from __future__ import annotations

import os
from typing import Annotated, Any, Callable

from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from gitmemfs.core.errors import MemfsError, UsageError
from gitmemfs.core.outcome import Outcome
from gitmemfs.core.redact import mask_secrets, redact
from gitmemfs.core.repo import Repo
from gitmemfs.mcp.memories import Memories

CACHE_FILE = "memory-descriptions.cache"  # the same file `git memory compile` keeps (cli/cmd_compile.py)

READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)
DESTROY = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False)

Reason = Annotated[str | None, Field(description="Why this change is made, in one line; it becomes the commit "
                                                 "subject (required)")]
Path = Annotated[str | None, Field(description="Memory path, e.g. system/contacts.md (alias: file_path)")]
FilePath = Annotated[str | None, Field(description="Alias of path")]
Agent = Annotated[str | None, Field(description="Agent whose memory to use (only when the server serves "
                                                "several, with --root)")]
Rev = Annotated[str, Field(description="Commit to read: HEAD (default), HEAD~3, a commit id")]


def ok(outcome: Any, *, payload: bool = False) -> CallToolResult:
    """Any operation result (`.message`, `.as_dict()`) as structured content plus text."""
    data = {"ok": True, **outcome.as_dict()}
    text = mask_secrets(outcome.message) if payload else redact(outcome.message)
    data["message"] = text
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def failed(exc: MemfsError) -> CallToolResult:
    """The CLI's `error:` line as an isError result (with the diagnostic block, as --json has it)."""
    message = redact(exc.message)
    details = dict(exc.details)
    block = details.pop("diagnostic", None)
    if isinstance(block, str) and block.strip():
        message += "\n" + redact(block)
    data = {"ok": False, "error": message, "code": exc.code, **details}
    return CallToolResult(content=[TextContent(type="text", text=message)], structured_content=data,
                          is_error=True)


def pick(*values: Any) -> Any:
    """The first argument spelling that was given."""
    for value in values:
        if value is not None:
            return value
    return None


class Tools:
    """The tool functions over `memories`; `register(server)` adds them to an MCPServer.
    Subscribers hear of writes from the server's HEAD watcher, as of any other commit."""

    def __init__(self, memories: Memories):
        self.memories = memories

    def run(self, agent: str | None, work: Callable[[Repo], Any], *, payload: bool = False) -> CallToolResult:
        try:
            outcome = work(self.memories.open(agent))
        except MemfsError as exc:
            return failed(exc)
        except Exception as exc:  # noqa: BLE001 - the tool boundary, as cli.common.boundary
            return failed(MemfsError(f"internal error: {type(exc).__name__}: {exc} (please report this bug)"))
        return ok(outcome, payload=payload)

    @staticmethod
    def editor(repo: Repo):  # type: ignore[no-untyped-def]
        from gitmemfs.edit.editor import Editor

        return Editor(repo)

    # -- reads ----------------------------------------------------------------------------

    def view(self, path: Path = None, view_range: Annotated[list[int] | None, Field(
                 description="[first, last] body lines, numbered (last -1: to the end)")] = None,
             line_numbers: Annotated[bool, Field(description="number the body lines (the numbers insert "
                                                             "uses)")] = False,
             file_path: FilePath = None, agent: Agent = None) -> CallToolResult:
        """Read a memory file as stored, or list a folder's files with their descriptions.
        Use it before editing a file, and whenever the task needs something memory may hold."""
        def work(repo: Repo) -> Outcome:
            rng = None
            if view_range is not None:
                if len(view_range) != 2:
                    raise UsageError("memory view: view_range takes [first, last], e.g. [1, 20] or [5, -1]")
                rng = (int(view_range[0]), int(view_range[1]))
            return self.editor(repo).view(pick(path, file_path), view_range=rng, numbered=line_numbers)
        return self.run(agent, work, payload=True)

    def tree(self, rev: Rev = "HEAD", agent: Agent = None) -> CallToolResult:
        """The memory's files as a tree (folders first), as committed at `rev`."""
        def work(repo: Repo) -> Outcome:
            from gitmemfs.core import snapshot
            from gitmemfs.view import tree

            snap = snapshot.load(repo.root, rev)
            rendered = tree.render(tree.for_snapshot(snap.files), **tree.limits({}))
            return Outcome(rendered.text, extra={"revision": snap.revision, **rendered.as_dict()})
        return self.run(agent, work, payload=True)

    def compile(self, rev: Rev = "HEAD", agent: Agent = None) -> CallToolResult:
        """The memory as it goes into an agent's system prompt (pinned system/ files in full,
        an index of the others with their descriptions), as committed at `rev`."""
        def work(repo: Repo) -> Outcome:
            text, revision = compiled(repo, rev)
            return Outcome(text, extra={"revision": revision})
        return self.run(agent, work, payload=True)

    # -- writes ---------------------------------------------------------------------------

    def create(self, path: Path = None, description: Annotated[str | None, Field(
                   description="One-line description of the file (its frontmatter)")] = None,
               file_text: Annotated[str | None, Field(description="The body (no frontmatter)")] = None,
               reason: Reason = None, file_path: FilePath = None,
               content: Annotated[str | None, Field(description="Alias of file_text")] = None,
               agent: Agent = None) -> CallToolResult:
        """Create a memory file; fails if it exists. system/ files are pinned in the prompt."""
        return self.run(agent, lambda repo: self.editor(repo).create(
            pick(path, file_path), description, pick(file_text, content), reason))

    def str_replace(self, path: Path = None,
                    old_string: Annotated[str | None, Field(description="Exact text to find in the body; it "
                                                                        "must match once (alias: old_str)")] = None,
                    new_string: Annotated[str | None, Field(description="Replacement text, may be empty "
                                                                        "(alias: new_str)")] = None,
                    reason: Reason = None,
                    replace_all: Annotated[bool, Field(description="Replace every occurrence")] = False,
                    file_path: FilePath = None, old_str: Annotated[str | None, Field(description="Alias of "
                                                                                              "old_string")] = None,
                    new_str: Annotated[str | None, Field(description="Alias of new_string")] = None,
                    agent: Agent = None) -> CallToolResult:
        """Replace text in a memory file's body."""
        return self.run(agent, lambda repo: self.editor(repo).str_replace(
            pick(path, file_path), pick(old_string, old_str), pick(new_string, new_str), reason,
            replace_all=replace_all))

    def insert(self, path: Path = None,
               insert_line: Annotated[int | None, Field(description="Body line the text starts at, "
                                                                    "1-indexed (clamped to the end)")] = None,
               insert_text: Annotated[str | None, Field(description="The lines to insert (alias: "
                                                                    "new_str, text)")] = None,
               reason: Reason = None, file_path: FilePath = None,
               new_str: Annotated[str | None, Field(description="Alias of insert_text")] = None,
               text: Annotated[str | None, Field(description="Alias of insert_text")] = None,
               agent: Agent = None) -> CallToolResult:
        """Insert lines into a memory file's body."""
        return self.run(agent, lambda repo: self.editor(repo).insert(
            pick(path, file_path), insert_line, pick(insert_text, new_str, text), reason))

    def delete(self, path: Path = None, reason: Reason = None, file_path: FilePath = None,
               agent: Agent = None) -> CallToolResult:
        """Delete a memory file, or a folder and everything in it (path ending in /)."""
        return self.run(agent, lambda repo: self.editor(repo).delete(pick(path, file_path), reason))

    def rename(self, old_path: Annotated[str | None, Field(description="The file or folder to move")] = None,
               new_path: Annotated[str | None, Field(description="Where to; must not exist")] = None,
               reason: Reason = None, agent: Agent = None) -> CallToolResult:
        """Move a memory file or folder."""
        return self.run(agent, lambda repo: self.editor(repo).rename(old_path, new_path, reason))

    def update_description(self, path: Path = None,
                           description: Annotated[str | None, Field(description="The new one-line "
                                                                                "description")] = None,
                           reason: Reason = None, file_path: FilePath = None,
                           agent: Agent = None) -> CallToolResult:
        """Change a memory file's description (shown in the prompt's index)."""
        return self.run(agent, lambda repo: self.editor(repo).update_description(
            pick(path, file_path), description, reason))

    def apply_patch(self, input: Annotated[str | None, Field(
                        description="The patch: *** Begin Patch / *** Add File: | *** Update File: | "
                                    "*** Delete File: ... / *** End Patch")] = None,
                    reason: Reason = None,
                    patch: Annotated[str | None, Field(description="Alias of input")] = None,
                    agent: Agent = None) -> CallToolResult:
        """Apply a multi-file patch (add, update, delete, move) as one commit."""
        def work(repo: Repo) -> Outcome:
            from gitmemfs.edit.patch import apply

            reason_text, text = apply.check_args(reason, pick(input, patch))
            return apply.apply(repo, text, reason_text)
        return self.run(agent, work)

    # -- history (view/search.py, view/history.py, edit/undo.py) --------------------------

    def search(self, query: Annotated[str | None, Field(description="Words or a phrase (literal, case-"
                                                                    "insensitive unless it has a capital)")] = None,
               paths: Annotated[list[str] | None, Field(description="Only under these files or folders")] = None,
               regex: Annotated[bool, Field(description="query is a regular expression")] = False,
               where: Annotated[str, Field(description="all, body, description or path")] = "all",
               rev: Annotated[str | None, Field(description="Search the memory as it was at this commit")] = None,
               history: Annotated[bool, Field(description="Search every past version too: finds deleted "
                                                          "and overwritten facts")] = False,
               limit: Annotated[int, Field(description="Files shown (default 20)")] = 20,
               agent: Agent = None) -> CallToolResult:
        """Search committed memory: matching lines under each file's description, pinned files
        first, then by relevance."""
        def work(repo: Repo) -> Any:
            from gitmemfs.view.search import search

            if not isinstance(query, str) or not query.strip():
                raise MemfsError("memory search: 'query' must be a non-empty string")
            return search(repo, query, paths or [], regex=regex, where=where, rev=rev, history=history,
                          limit=limit)
        return self.run(agent, work, payload=True)

    def log(self, paths: Annotated[list[str] | None, Field(description="Only commits touching these "
                                                                       "(one path is followed across renames)")] = None,
            limit: Annotated[int | None, Field(description="At most this many commits")] = 20,
            since: Annotated[str | None, Field(description="Newer than this ('2 weeks ago', 2026-01-31)")] = None,
            op: Annotated[str | None, Field(description="Only this operation (str_replace, delete, undo, "
                                                        "...)")] = None,
            dreams: Annotated[bool, Field(description="Only dream merges")] = False,
            file_path: FilePath = None, agent: Agent = None) -> CallToolResult:
        """The memory's commits: when, who (agent, human or dream), what and why (the reason)."""
        def work(repo: Repo) -> Any:
            from gitmemfs.view.history import log

            chosen = paths if paths is not None else ([file_path] if file_path else [])
            return log(repo, chosen, n=limit, since=since, op=op, dreams=dreams)
        return self.run(agent, work, payload=True)

    def show(self, path: Annotated[str | None, Field(description="Memory path, or PATH@REV")] = None,
             rev: Annotated[str | None, Field(description="The commit (default HEAD)")] = None,
             file_path: FilePath = None, agent: Agent = None) -> CallToolResult:
        """A memory file as it was at a commit."""
        def work(repo: Repo) -> Any:
            from gitmemfs.view.history import show

            spec = pick(path, file_path)
            if not isinstance(spec, str) or not spec.strip():
                raise MemfsError("memory show: 'path' must be a non-empty string")
            return show(repo, spec, rev)
        return self.run(agent, work, payload=True)

    def diff(self, rev: Annotated[str | None, Field(description="REV..REV, REV (to HEAD), or none (the "
                                                                "last commit)")] = None,
             paths: Annotated[list[str] | None, Field(description="Only these files or folders")] = None,
             agent: Agent = None) -> CallToolResult:
        """What changed between commits, frontmatter keys apart from body lines."""
        def work(repo: Repo) -> Any:
            from gitmemfs.view.history import diff

            return diff(repo, rev, paths or [])
        return self.run(agent, work, payload=True)

    def undo(self, commit: Annotated[str | None, Field(description="The commit to take back (see log)")] = None,
             last: Annotated[bool, Field(description="Take back the newest commit")] = False,
             dream_id: Annotated[str | None, Field(description="Take back the merge of this dream")] = None,
             reason: Reason = None,
             dry_run: Annotated[bool, Field(description="Show the diff it would commit; change "
                                                        "nothing")] = False,
             agent: Agent = None) -> CallToolResult:
        """Take back one commit, or a whole dream, as a new validated commit."""
        def work(repo: Repo) -> Any:
            from gitmemfs.edit.undo import undo

            return undo(repo, commit, last=last, dream=dream_id, reason=reason, dry_run=dry_run)
        return self.run(agent, work)

    def restore(self, path: Path = None, rev: Annotated[str | None, Field(description="The commit to bring "
                                                                                     "the file back from")] = None,
                reason: Reason = None,
                dry_run: Annotated[bool, Field(description="Show the diff; change nothing")] = False,
                file_path: FilePath = None, agent: Agent = None) -> CallToolResult:
        """Bring back one file (also a deleted one) as it was at a commit."""
        def work(repo: Repo) -> Any:
            from gitmemfs.edit.undo import restore

            spec = pick(path, file_path)
            if not isinstance(spec, str) or not isinstance(rev, str) or not spec.strip() or not rev.strip():
                raise MemfsError("memory restore: 'path' and 'rev' must be non-empty strings")
            return restore(repo, spec, rev, reason, dry_run=dry_run)
        return self.run(agent, work)

    # -- registration ---------------------------------------------------------------------

    def register(self, server: Any) -> None:
        for fn, hints in ((self.view, READ), (self.tree, READ), (self.compile, READ),
                                (self.create, WRITE), (self.str_replace, WRITE), (self.insert, WRITE),
                                (self.delete, DESTROY), (self.rename, DESTROY),
                                (self.update_description, WRITE), (self.apply_patch, WRITE),
                                *self.history()):
            server.add_tool(fn, name=fn.__name__, annotations=hints, structured_output=False)


    def history(self) -> list[tuple[Callable[..., CallToolResult], ToolAnnotations]]:
        """The tools of `git memory search / log / show / diff / undo / restore`."""
        return [(self.search, READ), (self.log, READ), (self.show, READ), (self.diff, READ),
                (self.undo, DESTROY), (self.restore, WRITE)]


def compiled(repo: Repo, rev: str = "HEAD") -> tuple[str, str | None]:
    """(the prompt projection of `rev`, the commit it was built from)."""
    from gitmemfs.core import snapshot
    from gitmemfs.view import compile as compiler

    snap = snapshot.load(repo.root, rev)
    projection, _ = compiler.project(snap, quote_path=repo.cfg_bool("core.quotePath", True),
                                     cache=os.path.join(repo.common_dir, CACHE_FILE))
    return projection.text, snap.revision
