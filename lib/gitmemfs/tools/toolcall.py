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

import os
from typing import Any, Callable

from gitmemfs.core import approval, jsoninput
from gitmemfs.core.errors import MemfsError, UsageError
from gitmemfs.core.outcome import Outcome
from gitmemfs.core.repo import Repo
from gitmemfs.edit.editor import Editor, proposed

SCHEMAS = ("letta", "anthropic")
LETTA_COMMANDS = ("create", "str_replace", "insert", "delete", "rename", "update_description", "view")


def parse_payload(text: str) -> dict[str, Any]:
    try:
        obj = jsoninput.loads(text)
    except jsoninput.JSONInputError as exc:
        raise UsageError(f"git memory call: input is not valid JSON: {exc}") from None
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


def call(payload: str, open_repo: Callable[[], Repo], *, schema: str = "letta", adopt: bool = False,
         propose: bool = False) -> Outcome:
    """`adopt`: commit files changed beside the tools as an "outside change" before a write
    (tools/outside.py) instead of refusing the write over them. `propose` (or the call's
    own `"propose": true`): a write becomes a proposal for a person, never applied."""
    # An agent's tool call approves nothing: drop a person's approvals before any git runs.
    for var in approval.VARS:
        os.environ.pop(var, None)
    name, args = unwrap(parse_payload(payload))
    wanted = args.pop("propose", False)
    if not isinstance(wanted, bool):
        raise UsageError("git memory call: 'propose' must be true or false")
    open_repo, opened = proposing(open_repo, propose or wanted)
    if schema == "anthropic":
        return answered(opened, Anthropic(open_repo, adopt=adopt).call(args), str(args.get("command")))
    if adopt and args.get("command") not in READS:
        open_repo = adopting(open_repo)
    if name == "memory_apply_patch" or (name is None and "command" not in args and "input" in args):
        return apply_patch_call(args, open_repo)
    return answered(opened, letta_memory(args, open_repo), str(args.get("command")))


def proposing(open_repo: Callable[[], Repo], propose: bool) -> tuple[Callable[[], Repo], list[Repo]]:
    """`open_repo` whose repositories propose writes (when `propose`), and the list of
    those it opened, for `answered`."""
    opened: list[Repo] = []

    def opening() -> Repo:
        repo = open_repo()
        repo.propose = propose
        opened.append(repo)
        return repo
    return opening, opened


def answered(opened: list[Repo], out: Outcome, command: str) -> Outcome:
    """A proposed write's answer says so, whichever schema made it."""
    repo = opened[-1] if opened else None
    if repo is None or not repo.proposed or "proposed" in out.extra:
        return out
    return proposed(repo, command, out.commit or "", out.paths)


READS = ("view", "search", "log", "show", "diff")


def adopting(open_repo: Callable[[], Repo]) -> Callable[[], Repo]:
    """`open_repo` that first commits the outside changes of the whole tree (a Letta-schema
    write checks the whole tree is clean)."""
    def opened() -> Repo:
        from gitmemfs.tools import outside

        repo = open_repo()
        outside.adopt(repo)
        return repo
    return opened


def letta_memory(args: dict[str, Any], open_repo: Callable[[], Repo]) -> Outcome:
    from gitmemfs.tools import history_calls  # search, log, show, diff, undo, restore

    if args.get("command") in history_calls.COMMANDS:
        found: Outcome = history_calls.call(args["command"], args, open_repo)
        return found
    require("memory", args, "command", "reason")
    reason = args["reason"]
    if not isinstance(reason, str) or not reason.strip():
        raise MemfsError("memory: 'reason' must be a non-empty string")
    command = args["command"]
    if command not in LETTA_COMMANDS:
        raise MemfsError(f"Unsupported memory command: {command}")
    ed = Editor(open_repo())

    def get(key: str) -> Any:  # what the model sent, any JSON type: the editor checks each argument
        return args.get(key)
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
    """Anthropic's memory tool (memory_20250818) over a memory repository: the commands
    live in tools/anthropic_memory.py, shared with the SDK class."""

    def __init__(self, open_repo: Callable[[], Repo], *, adopt: bool = False):
        self.open_repo = open_repo
        self.adopt = adopt

    def call(self, args: dict[str, Any]) -> Outcome:
        from gitmemfs.tools.anthropic_memory import AnthropicMemory

        return AnthropicMemory(self.open_repo(), adopt=self.adopt).execute(args)
