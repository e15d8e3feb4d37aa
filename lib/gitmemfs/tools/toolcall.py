"""`git memory call`: run one memory tool call given as JSON.

Accepted shapes (DESIGN §4):
- upstream `memory` arguments: {"command": ..., "reason": ..., "file_path": ...};
- upstream `memory_apply_patch` arguments: {"reason": ..., "input": "*** Begin Patch ..."};
- with schema "anthropic", Anthropic's memory tool arguments ({"command": "view", "path":
  "/memories/..."}), with its unique-match and insert-after-line semantics and messages;
- any of these wrapped as a tool call: {"name": "memory", "input": {...}} or
  {"name": ..., "arguments": "<json string>"}.
The answer is always one object: {"ok": true, "message", "commit", "paths"} or
{"ok": false, "error"}.
"""
from __future__ import annotations

import json
import os
import re
from typing import Any, Callable

from gitmemfs.core import memfile
from gitmemfs.core.errors import MemfsError, UsageError
from gitmemfs.core.memfile import FrontmatterError
from gitmemfs.core.outcome import Outcome
from gitmemfs.core.repo import Repo
from gitmemfs.edit.editor import AlreadyExists, Editor, InvalidLine, NotFound, OldStringAmbiguous, OldStringNotFound

SCHEMAS = ("letta", "anthropic")
LETTA_COMMANDS = ("create", "str_replace", "insert", "delete", "rename", "update_description", "view")
ANTHROPIC_COMMANDS = ("view", "create", "str_replace", "insert", "delete", "rename")
ROOT = "/memories"


def parse_payload(text: str) -> dict[str, Any]:
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"git memory call: input is not valid JSON: {exc.msg} at line {exc.lineno} "
                         f"column {exc.colno}") from None
    if not isinstance(obj, dict):
        raise UsageError("git memory call: expected a JSON object with the tool call's arguments")
    return obj


def unwrap(obj: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    """(tool name if the call was wrapped, the arguments)."""
    if isinstance(obj.get("name"), str) and ("arguments" in obj or isinstance(obj.get("input"), dict)):
        args = obj.get("arguments", obj.get("input"))
        if isinstance(args, str):
            args = parse_payload(args)
        if not isinstance(args, dict):
            raise UsageError("git memory call: the tool call's arguments must be a JSON object")
        return obj["name"], args
    return None, obj


def require(tool: str, args: dict[str, Any], *keys: str) -> None:
    """Upstream's required-parameter check: by key presence (None counts as missing)."""
    missing = [k for k in keys if args.get(k) is None]
    if missing:
        noun = "parameter" if len(missing) == 1 else "parameters"
        raise MemfsError(f"{tool} tool missing required {noun}: {', '.join(missing)}. "
                         f"Received parameters: {', '.join(args)}")


def call(payload: str, open_repo: Callable[[], Repo], *, schema: str = "letta") -> Outcome:
    name, args = unwrap(parse_payload(payload))
    if schema == "anthropic":
        return Anthropic(open_repo).call(args)
    if name == "memory_apply_patch" or (name is None and "command" not in args and "input" in args):
        return apply_patch_call(args, open_repo)
    return letta_memory(args, open_repo)


def letta_memory(args: dict[str, Any], open_repo: Callable[[], Repo]) -> Outcome:
    from gitmemfs.tools import history_calls  # search, log, show, diff, undo, restore

    if args.get("command") in history_calls.COMMANDS:
        return history_calls.call(args["command"], args, open_repo)  # type: ignore[no-any-return]
    require("memory", args, "command", "reason")
    reason = args["reason"]
    if not isinstance(reason, str) or not reason.strip():
        raise MemfsError("memory: 'reason' must be a non-empty string")
    command = args["command"]
    if command not in LETTA_COMMANDS:
        raise MemfsError(f"Unsupported memory command: {command}")
    ed = Editor(open_repo())
    get = args.get
    if command == "create":
        return ed.create(get("file_path"), get("description"), get("file_text"), reason)
    if command == "str_replace":
        return ed.str_replace(get("file_path"), get("old_string"), get("new_string"), reason,
                              replace_all=bool(get("replace_all")))
    if command == "insert":
        return ed.insert(get("file_path"), get("insert_line"), get("insert_text"), reason)
    if command == "delete":
        return ed.delete(get("file_path"), reason)
    if command == "rename":
        return ed.rename(get("old_path"), get("new_path"), reason)
    if command == "update_description":
        return ed.update_description(get("file_path"), get("description"), reason)
    return ed.view(get("file_path"))


def apply_patch_call(args: dict[str, Any], open_repo: Callable[[], Repo]) -> Outcome:
    """Upstream's order: required keys, then 'reason', then 'input', then the repo."""
    require("memory_apply_patch", args, "reason", "input")
    from gitmemfs.edit.patch import apply as patch  # the patch engine is only needed for this shape

    reason, text = patch.check_args(args["reason"], args["input"])
    return patch.apply(open_repo(), text, reason)


class Anthropic:
    """Anthropic's memory tool (memory_20250818) over a memory repository."""

    def __init__(self, open_repo: Callable[[], Repo]):
        self.open_repo = open_repo

    def call(self, args: dict[str, Any]) -> Outcome:
        require("memory", args, "command")
        command = args["command"]
        if command not in ANTHROPIC_COMMANDS:
            raise MemfsError(f"Error: unknown command {command!r}; expected one of "
                             f"{', '.join(ANTHROPIC_COMMANDS)}")
        handler = getattr(self, "do_" + command)
        try:
            return handler(args)
        except NotFound:
            raise MemfsError(f"The path {self.shown(args)} does not exist. Please provide a valid path.") from None

    @staticmethod
    def shown(args: dict[str, Any]) -> str:
        return str(args.get("path") or args.get("old_path") or "")

    def relative(self, path: object, *, allow_root: bool = False) -> str:
        if not isinstance(path, str) or not path.strip():
            raise MemfsError("Error: 'path' must be a non-empty string under /memories")
        path = path.strip()
        if re.search(r"%(2e|2f|5c)", path, re.IGNORECASE) or "\\" in path:
            raise MemfsError(f"Error: invalid path {path}: encoded or backslash path segments are not allowed")
        if path.rstrip("/") == ROOT:
            if allow_root:
                return ""
            raise MemfsError(f"Error: {path} is the memory root; name a file under it")
        if not path.startswith(ROOT + "/"):
            raise MemfsError(f"Error: path {path} must start with {ROOT}/")
        return path[len(ROOT) + 1:]

    def reason(self, args: dict[str, Any], command: str, path: str) -> str:
        given = args.get("reason")
        return given.strip() if isinstance(given, str) and given.strip() else f"{command} {path}"

    def do_view(self, args: dict[str, Any]) -> Outcome:
        path = args.get("path")
        rel = self.relative(path, allow_root=True)
        repo = self.open_repo()
        folder = os.path.join(repo.root, *rel.split("/")) if rel else repo.root
        if os.path.isdir(folder) and not rel.endswith(".md"):
            return Outcome(self.listing(repo.root, folder, str(path).rstrip("/")))
        rng = args.get("view_range")
        view_range = None
        if rng is not None:
            if not (isinstance(rng, list) and len(rng) == 2 and all(isinstance(n, int) for n in rng)):
                raise MemfsError("Error: view_range must be a list of two integers [start, end]")
            view_range = (rng[0], rng[1])
        out = Editor(repo).view(rel, view_range=view_range, numbered=True)
        return Outcome(f"Here's the content of {path} with line numbers:\n{out.message}")

    @staticmethod
    def listing(root: str, folder: str, shown: str) -> str:
        lines = [f"{_size(folder)}\t{shown}"]
        for dirpath, dirnames, filenames in os.walk(folder):
            depth = os.path.relpath(dirpath, folder).count(os.sep) + (0 if dirpath == folder else 1)
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "node_modules")
            if depth >= 2:
                dirnames[:] = []
            for name in sorted(dirnames) + sorted(f for f in filenames if not f.startswith(".")):
                full = os.path.join(dirpath, name)
                rel = os.path.relpath(full, folder).replace(os.sep, "/")
                lines.append(f"{_size(full)}\t{shown}/{rel}")
        return ("Here're the files and directories up to 2 levels deep in "
                f"{shown}, excluding hidden items and node_modules:\n" + "\n".join(lines))

    def do_create(self, args: dict[str, Any]) -> Outcome:
        path = args.get("path")
        rel = self.relative(path)
        text = args.get("file_text") or ""
        if not isinstance(text, str):
            raise MemfsError("Error: 'file_text' must be a string")
        ed = Editor(self.open_repo())
        description, body = f"Memory block {ed.label(rel, 'path')}", text
        if text.startswith("---"):
            try:
                parsed = memfile.parse(text)
                description, body = parsed.description, parsed.body
            except FrontmatterError:
                pass
        try:
            out = ed.create(rel, description, body, self.reason(args, "create", path))
        except AlreadyExists:
            raise MemfsError(f"Error: File {path} already exists") from None
        return self.result(out, f"File created successfully at: {path}")

    def do_str_replace(self, args: dict[str, Any]) -> Outcome:
        path = args.get("path")
        rel = self.relative(path)
        old, new = args.get("old_str"), args.get("new_str")
        if new is None:
            new = ""
        try:
            out = Editor(self.open_repo()).str_replace(rel, old, new, self.reason(args, "str_replace", path))
        except OldStringNotFound:
            raise MemfsError(f"No replacement was performed, old_str `{old}` did not appear verbatim "
                             f"in {path}.") from None
        except OldStringAmbiguous as exc:
            raise MemfsError(f"No replacement was performed. Multiple occurrences of old_str `{old}` in "
                             f"lines: {', '.join(map(str, exc.lines))}. Please ensure it is unique") from None
        return self.result(out, "The memory file has been edited.")

    def do_insert(self, args: dict[str, Any]) -> Outcome:
        path = args.get("path")
        rel = self.relative(path)
        line = args.get("insert_line")
        text = args.get("insert_text", args.get("new_str"))
        try:
            out = Editor(self.open_repo()).insert(rel, line, text, self.reason(args, "insert", path),
                                                  after=True)
        except InvalidLine as exc:
            raise MemfsError(f"Error: Invalid `insert_line` parameter: {line}. It should be within the "
                             f"range of lines of the file: [0, {exc.line_count}]") from None
        return self.result(out, f"The file {path} has been edited.")

    def do_delete(self, args: dict[str, Any]) -> Outcome:
        path = args.get("path")
        if isinstance(path, str) and path.strip().rstrip("/") == ROOT:
            raise MemfsError(f"Error: cannot delete the {ROOT} directory itself")
        rel = self.relative(path)
        out = Editor(self.open_repo()).delete(rel, self.reason(args, "delete", path))
        return self.result(out, f"Successfully deleted {path}")

    def do_rename(self, args: dict[str, Any]) -> Outcome:
        old, new = args.get("old_path"), args.get("new_path")
        rel_old, rel_new = self.relative(old), self.relative(new)
        try:
            out = Editor(self.open_repo()).rename(rel_old, rel_new, self.reason(args, "rename", old))
        except AlreadyExists:
            raise MemfsError(f"Error: The destination {new} already exists") from None
        return self.result(out, f"Successfully renamed {old} to {new}")

    @staticmethod
    def result(out: Outcome, message: str) -> Outcome:
        out.message = message
        return out


def _size(path: str) -> str:
    size = 4096 if os.path.isdir(path) else os.path.getsize(path)
    for unit in ("", "K", "M", "G"):
        if size < 1024 or unit == "G":
            return f"{size}" if not unit else f"{size:.1f}{unit}"
        size /= 1024
    return str(size)
