"""The MCP tools: one per memory operation, calling the operations in process.

Every write needs a `reason` (the commit subject) and goes through `edit.editor` or
`edit.patch` exactly as `git memory` does: the writer lock, the clean-tree check,
validation by the shared rules, one commit. A refused call leaves the repository as
it was (the write path restores every path it touched).

What the model reads is the text content: the CLI's own output. Only the writes
declare an `outputSchema`, and their structured content is the lean `{commit, paths}`
a program needs; reads return text alone (clients hand structured content to the
model when it is present, and JSON-escaped bodies cost it 1.2-5x the bytes).

The schemas are written here, not derived: required arguments are marked, types are
plain (no `anyOf [T, null]`), and a call with an argument name the tool does not know
is refused with the names it does. Models reach for other spellings (Anthropic's
`old_str`, Claude Code's `file_path`): those aliases are accepted, not advertised.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, NamedTuple

from gitmemfs.core import cachedir
from gitmemfs.core.errors import MemfsError, UsageError
from gitmemfs.core.outcome import Outcome
from gitmemfs.core.redact import mask_secrets, redact
from gitmemfs.core.repo import Repo

if TYPE_CHECKING:
    from gitmemfs.edit.editor import Editor


class Arg(NamedTuple):
    kind: str  # string | integer | boolean | strings | range
    description: str
    required: bool = False
    choices: tuple[str, ...] = ()


class Spec(NamedTuple):
    name: str
    description: str
    args: dict[str, Arg]
    read_only: bool
    run: Callable[[Repo, dict[str, Any]], Any]
    payload: bool = False  # the result holds memory content: mask secrets, never redact paths
    commits: bool = False  # declares the {commit, paths} outputSchema


# Other spellings models use, per canonical name; accepted, never listed.
ALIASES = {"file_path": "path", "old_str": "old_string", "new_str": "new_string", "content": "file_text",
           "patch": "input", "text": "insert_text"}
INSERT_ALIASES = {"new_str": "insert_text"}

REASON = Arg("string", "Why this change is made, in one line; it becomes the commit subject", True)
PATH = Arg("string", "Memory path, e.g. system/contacts.md", True)
REV = Arg("string", "Commit to read: HEAD (the default), HEAD~3, a commit id")
AGENT = Arg("string", "The agent whose memory to use (this server serves several)", True)
OUTPUT_SCHEMA = {"type": "object", "properties": {
    "commit": {"type": "string", "description": "The commit made (40 hex digits)"},
    "paths": {"type": "array", "items": {"type": "string"}, "description": "Memory paths it changed"},
    "proposed": {"type": "string", "description": "With propose: the proposal's id (nothing was committed)"}},
    "required": ["commit", "paths"]}
PROPOSE = Arg("boolean", "Do not apply the change: keep it as a proposal a person accepts or rejects (for what "
                         "only a person may change, such as a read_only file)")
READ_HINTS = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
# Every write is a commit that `undo` takes back, so none is destructive in MCP's sense
# (a client may then run it without asking; Codex refuses destructive calls when it cannot ask).
WRITE_HINTS = {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False, "openWorldHint": False}


def ok(spec: Spec, outcome: Any) -> dict[str, Any]:
    """A CallToolResult (as the wire dict): the message as text, plus {commit, paths}
    for a tool that declares them."""
    text = mask_secrets(outcome.message) if spec.payload else redact(outcome.message)
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
    if spec.commits:
        result["structuredContent"] = {"commit": getattr(outcome, "commit", None) or "",
                                       "paths": list(getattr(outcome, "paths", None) or [])}
        proposed = getattr(outcome, "extra", {}).get("proposed")
        if proposed:
            result["structuredContent"]["proposed"] = proposed
    return result


def failed(exc: MemfsError) -> dict[str, Any]:
    """The CLI's `error:` message (with the diagnostic block, as --json has it), isError."""
    message = redact(exc.message)
    block = exc.details.get("diagnostic") if isinstance(exc.details, dict) else None
    if isinstance(block, str) and block.strip():
        message += "\n" + redact(block)
    return {"content": [{"type": "text", "text": message}], "isError": True}


def schema(spec: Spec, multi: bool) -> dict[str, Any]:
    args = dict(spec.args, agent=AGENT) if multi else spec.args
    props: dict[str, Any] = {}
    for name, arg in args.items():
        prop: dict[str, Any] = {"description": arg.description}
        if arg.kind == "strings":
            prop.update(type="array", items={"type": "string"})
        elif arg.kind == "range":
            prop.update(type="array", items={"type": "integer"}, minItems=2, maxItems=2)
        else:
            prop["type"] = arg.kind
        if arg.choices:
            prop["enum"] = list(arg.choices)
        props[name] = prop
    out: dict[str, Any] = {"type": "object", "properties": props,
                           "required": [n for n, a in args.items() if a.required]}
    out["additionalProperties"] = False
    return out


def check_args(spec: Spec, given: Any, multi: bool) -> dict[str, Any]:
    """The arguments with aliases resolved and types checked; UsageError names the problem."""
    where = f"memory {spec.name}"
    if given is None:
        given = {}
    if not isinstance(given, dict):
        raise UsageError(f"{where}: the arguments must be an object")
    known = dict(spec.args, agent=AGENT) if multi else dict(spec.args)
    out: dict[str, Any] = {}
    for key, value in given.items():
        name = key
        if key not in known:
            name = (INSERT_ALIASES if spec.name == "insert" else {}).get(key) or ALIASES.get(key, key)
        if name not in known:
            valid = ", ".join(known)
            raise UsageError(f"{where}: unknown argument {key!r}; {spec.name} takes {valid}")
        if value is None:
            continue
        if name in out and out[name] != value:
            raise UsageError(f"{where}: {key!r} and {name!r} are the same argument; give one")
        out[name] = _typed(where, key, known[name], value)
    missing = [n for n, a in known.items() if a.required and n not in out and n != "agent"]
    if missing:
        raise UsageError(f"{where}: missing required argument{'s' if len(missing) > 1 else ''} "
                         f"{', '.join(repr(m) for m in missing)}")
    return out


def _typed(where: str, key: str, arg: Arg, value: Any) -> Any:
    def bad(what: str) -> UsageError:
        return UsageError(f"{where}: {key!r} must be {what}, not {_short(value)}")

    if arg.kind == "string":
        if not isinstance(value, str):
            raise bad("a string")
        if arg.choices and value not in arg.choices:
            raise bad("one of " + ", ".join(arg.choices))
    elif arg.kind == "boolean":
        if not isinstance(value, bool):
            raise bad("true or false")
    elif arg.kind == "integer":
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad("a whole number")
    elif arg.kind == "strings":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise bad("a list of strings")
    elif arg.kind == "range":
        if (not isinstance(value, list) or len(value) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
            raise bad("[first, last], two whole numbers such as [1, 20] or [5, -1]")
    return value


def _short(value: Any) -> str:
    import json

    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


# -- the operations ----------------------------------------------------------------------

def _editor(repo: Repo) -> Editor:
    from gitmemfs.edit.editor import Editor

    return Editor(repo)


def _view(repo: Repo, a: dict[str, Any]) -> Outcome:
    rng = a.get("view_range")
    return _editor(repo).view(a["path"], view_range=tuple(rng) if rng else None,
                              numbered=a.get("line_numbers", False))


def _tree(repo: Repo, a: dict[str, Any]) -> Outcome:
    return Outcome(rendered_tree(repo, a.get("rev", "HEAD")))


def _compile(repo: Repo, a: dict[str, Any]) -> Outcome:
    return Outcome(compiled(repo, a.get("rev", "HEAD"))[0])


def _create(repo: Repo, a: dict[str, Any]) -> Outcome:
    return _editor(repo).create(a["path"], a["description"], a.get("file_text", ""), a["reason"])


def _str_replace(repo: Repo, a: dict[str, Any]) -> Outcome:
    return _editor(repo).str_replace(a["path"], a["old_string"], a["new_string"], a["reason"],
                                     replace_all=a.get("replace_all", False))


def _insert(repo: Repo, a: dict[str, Any]) -> Outcome:
    return _editor(repo).insert(a["path"], a["insert_line"], a["insert_text"], a["reason"])


def _delete(repo: Repo, a: dict[str, Any]) -> Outcome:
    return _editor(repo).delete(a["path"], a["reason"])


def _rename(repo: Repo, a: dict[str, Any]) -> Outcome:
    return _editor(repo).rename(a["old_path"], a["new_path"], a["reason"])


def _update_description(repo: Repo, a: dict[str, Any]) -> Outcome:
    return _editor(repo).update_description(a["path"], a["description"], a["reason"])


def _apply_patch(repo: Repo, a: dict[str, Any]) -> Outcome:
    from gitmemfs.edit.patch import apply

    reason, text = apply.check_args(a["reason"], a["input"])
    return apply.apply(repo, text, reason)


def _search(repo: Repo, a: dict[str, Any]) -> Any:
    from gitmemfs.view.search import search

    if not a["query"].strip():
        raise UsageError("memory search: 'query' must not be empty")
    return search(repo, a["query"], a.get("paths", []), regex=a.get("regex", False), where=a.get("where", "all"),
                  rev=a.get("rev"), history=a.get("history", False), limit=a.get("limit", 20),
                  lines=a.get("lines", 3), budget=a.get("budget"), pinned=a.get("pinned", "rank"))


def _log(repo: Repo, a: dict[str, Any]) -> Any:
    from gitmemfs.view.history import log

    paths = a.get("paths") or ([a["path"]] if a.get("path") else [])
    return log(repo, paths, n=a.get("limit", 20), since=a.get("since"), op=a.get("op"),
               dreams=a.get("dreams", False))


def _show(repo: Repo, a: dict[str, Any]) -> Any:
    from gitmemfs.view.history import show

    return show(repo, a["path"], a.get("rev"))


def _diff(repo: Repo, a: dict[str, Any]) -> Any:
    from gitmemfs.view.history import diff

    return diff(repo, a.get("rev"), a.get("paths", []))


def _undo(repo: Repo, a: dict[str, Any]) -> Any:
    from gitmemfs.edit.undo import undo

    return undo(repo, a.get("commit"), last=a.get("last", False), dream=a.get("dream_id"),
                reason=a.get("reason"), dry_run=a.get("dry_run", False))


def _restore(repo: Repo, a: dict[str, Any]) -> Any:
    from gitmemfs.edit.undo import restore

    return restore(repo, a["path"], a["rev"], a.get("reason"), dry_run=a.get("dry_run", False))


SPECS: tuple[Spec, ...] = (
    Spec("view", "Read a memory file as stored, or list a folder's files with their descriptions. Use it "
         "before editing a file, and whenever the task needs something memory may hold.",
         {"path": PATH,
          "view_range": Arg("range", "[first, last] body lines to show; last -1 means to the end"),
          "line_numbers": Arg("boolean", "Number the body lines (the numbers insert uses)")},
         True, _view, payload=True),
    Spec("tree", "The memory's files as a tree (folders first), as committed.", {"rev": REV}, True, _tree,
         payload=True),
    Spec("compile", "The memory as it goes into an agent's system prompt: pinned system/ files in full, an "
         "index of the others with their descriptions.", {"rev": REV}, True, _compile, payload=True),
    Spec("create", "Create a memory file; fails if it exists. Files under system/ are pinned in the prompt: "
         "keep them short.",
         {"path": PATH, "description": Arg("string", "One-line description of the file (its frontmatter)", True),
          "file_text": Arg("string", "The body, without frontmatter (default: empty)"), "reason": REASON},
         False, _create, commits=True),
    Spec("str_replace", "Replace text in a memory file's body. old_string must occur exactly once unless "
         "replace_all is true.",
         {"path": PATH, "old_string": Arg("string", "Exact text to find in the body", True),
          "new_string": Arg("string", "The replacement; may be empty to delete the text", True),
          "reason": REASON, "replace_all": Arg("boolean", "Replace every occurrence")},
         False, _str_replace, commits=True),
    Spec("insert", "Insert lines into a memory file's body.",
         {"path": PATH, "insert_line": Arg("integer", "Body line the text starts at, 1-indexed (past the end: "
                                                      "appended)", True),
          "insert_text": Arg("string", "The lines to insert", True), "reason": REASON},
         False, _insert, commits=True),
    Spec("delete", "Delete a memory file, or a folder and everything in it (path ending in /). Undo brings it "
         "back.", {"path": PATH, "reason": REASON}, False, _delete, commits=True),
    Spec("rename", "Move a memory file or folder.",
         {"old_path": Arg("string", "The file or folder to move", True),
          "new_path": Arg("string", "Where to; must not exist", True), "reason": REASON},
         False, _rename, commits=True),
    Spec("update_description", "Change a memory file's one-line description (shown in the prompt's index).",
         {"path": PATH, "description": Arg("string", "The new one-line description", True), "reason": REASON},
         False, _update_description, commits=True),
    Spec("apply_patch", "Apply a multi-file patch (add, update, delete, move files) as one commit.",
         {"input": Arg("string", "The patch: *** Begin Patch, then *** Add File: PATH, *** Update File: PATH "
                                 "or *** Delete File: PATH sections, then *** End Patch", True),
          "reason": REASON}, False, _apply_patch, commits=True),
    Spec("search", "Search committed memory: the best-matching files, each with its description and best lines. "
         "Ask in words or as a question; word forms meet (moved, moving).",
         {"query": Arg("string", "Words or a question (a regular expression with regex)", True),
          "paths": Arg("strings", "Only under these files or folders"),
          "regex": Arg("boolean", "The query is a regular expression"),
          "where": Arg("string", "Where to look (default all)", choices=("all", "body", "description", "path")),
          "rev": Arg("string", "Search the memory as it was at this commit"),
          "history": Arg("boolean", "Search every past version too: finds deleted and overwritten facts"),
          "limit": Arg("integer", "Files shown (default 20)"),
          "lines": Arg("integer", "Best lines shown per file, each with a line of context (default 3)"),
          "budget": Arg("integer", "The whole answer in about this many tokens (default 4000)"),
          "pinned": Arg("string", "Pinned files (already in your prompt): ranked on merit, first, or left out",
                        choices=("rank", "first", "omit"))},
         True, _search, payload=True),
    Spec("log", "The memory's commits, newest first: when, who (agent, human or dream), what and why.",
         {"paths": Arg("strings", "Only commits touching these (one path is followed across renames)"),
          "path": Arg("string", "Only commits touching this file"),
          "limit": Arg("integer", "At most this many commits (default 20)"),
          "since": Arg("string", "Newer than this: '2 weeks ago', 2026-01-31"),
          "op": Arg("string", "Only this operation: str_replace, delete, undo, ..."),
          "dreams": Arg("boolean", "Only dream merges")},
         True, _log, payload=True),
    Spec("show", "A memory file as it was at a commit.",
         {"path": Arg("string", "Memory path, or PATH@REV", True),
          "rev": Arg("string", "The commit (default HEAD)")}, True, _show, payload=True),
    Spec("diff", "What changed between commits, frontmatter keys apart from body lines.",
         {"rev": Arg("string", "REV..REV, or REV (to HEAD); default: the last commit"),
          "paths": Arg("strings", "Only these files or folders")}, True, _diff, payload=True),
    Spec("undo", "Take back one commit, or a whole dream, as a new validated commit. Name one of commit, last "
         "or dream_id.",
         {"commit": Arg("string", "The commit to take back (see log)"),
          "last": Arg("boolean", "Take back the newest commit"),
          "dream_id": Arg("string", "Take back the merge of this dream"),
          "reason": Arg("string", "Why, in one line (the commit subject); required unless dry_run"),
          "dry_run": Arg("boolean", "Show the diff it would commit; change nothing")},
         False, _undo),
    Spec("restore", "Bring back one file (also a deleted one) as it was at a commit.",
         {"path": PATH, "rev": Arg("string", "The commit to bring the file back from", True),
          "reason": Arg("string", "Why, in one line (the commit subject); required unless dry_run"),
          "dry_run": Arg("boolean", "Show the diff; change nothing")},
         False, _restore),
)
SPECS = tuple(s._replace(args={**s.args, "propose": PROPOSE}) if s.commits else s for s in SPECS)
BY_NAME = {s.name: s for s in SPECS}


def listing(multi: bool) -> list[dict[str, Any]]:
    """tools/list, as wire dicts."""
    out = []
    for spec in SPECS:
        tool: dict[str, Any] = {"name": spec.name, "description": spec.description,
                                "inputSchema": schema(spec, multi),
                                "annotations": READ_HINTS if spec.read_only else WRITE_HINTS}
        if spec.commits:
            tool["outputSchema"] = OUTPUT_SCHEMA
        out.append(tool)
    return out


def call(spec: Spec, arguments: Any, multi: bool, open_repo: Callable[[str | None], Repo],
         adopt: bool = False) -> dict[str, Any]:
    """Run one tool call to its result; every failure is an isError result. `adopt`:
    before a write, files changed beside the server are committed as their own commit."""
    try:
        args = check_args(spec, arguments, multi)
        repo = open_repo(args.pop("agent", None))
        if adopt and not spec.read_only:
            from gitmemfs.tools import outside

            outside.adopt(repo)
        repo.propose = bool(args.pop("propose", False))
        if spec.commits:
            # The writer lock and the clean check's status now, as the CLI's edits do:
            # git checks the tree while the edit reads and validates (core/writer.py).
            repo.start_writing()
        try:
            outcome = spec.run(repo, args)
        finally:
            repo.stop_writing()  # not taken by a session (refused before one began): let go
    except MemfsError as exc:
        return failed(exc)
    except Exception as exc:  # noqa: BLE001 - the tool boundary, as cli.common.boundary
        return failed(MemfsError(f"internal error: {type(exc).__name__}: {exc} (please report this bug)"))
    return ok(spec, outcome)


def layout_of(repo: Repo, snap: Any) -> str:
    """The commit's layout, as `git memory compile` and `tree` find it (memory.layout,
    else its root MEMORY.md)."""
    from gitmemfs.core import layout as layouts

    try:
        return layouts.detect(repo.cfg(layouts.CONFIG_KEY), any(e.path == layouts.INDEX for e in snap.files))
    except ValueError as exc:
        raise MemfsError(f"{exc}; fix it with git config memory.layout letta") from None


def compiled(repo: Repo, rev: str = "HEAD") -> tuple[str, str | None]:
    """(the prompt projection of `rev`, the commit it was built from): `git memory compile`."""
    from gitmemfs.core import snapshot
    from gitmemfs.view import compile as compiler

    snap = snapshot.load(repo.root, rev)
    projection, _ = compiler.project(snap, quote_path=repo.cfg_bool("core.quotePath", True),
                                     cache=repo.cache(cachedir.DESCRIPTIONS), layout=layout_of(repo, snap),
                                     hosted=compiler.hosted_store(repo.cfg))
    return projection.text, snap.revision


def rendered_tree(repo: Repo, rev: str = "HEAD") -> str:
    """The file tree of `rev`, as `git memory tree` prints it."""
    from gitmemfs.core import snapshot
    from gitmemfs.view import tree

    snap = snapshot.load(repo.root, rev)
    layout = layout_of(repo, snap)
    caps = tree.limits({})
    return tree.render(tree.for_snapshot(snap.files, layout=layout), max_lines=caps["max_lines"],
                       max_chars=caps["max_chars"], max_children=caps["max_children"],
                       system=layout == "letta").text
