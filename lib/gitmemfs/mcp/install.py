"""`git memory mcp install claude-code | codex | json`: a client's configuration.

    claude-code  project scope: .mcp.json in the current work tree (the file Claude Code
                 reads and shares through the repository); user scope: the mcpServers
                 of ~/.claude.json, as `claude mcp add --scope user` writes it
    codex        [mcp_servers.<name>] in ~/.codex/config.toml (user) or
                 .codex/config.toml (project)
    json         the {"mcpServers": {...}} snippet most other clients take, printed

The server entry runs the `git-memory` found on PATH (else `git memory`) with the
memory directory resolved now, so the client starts the same repository from any
directory. Existing entries of other servers, and every other setting, are kept.
"""
from __future__ import annotations

import json
import os
import re
import shutil
from typing import Any

from gitmemfs.core.errors import MemfsError, UsageError

TARGETS = ("claude-code", "codex", "json")
SCOPES = ("user", "project")


class Plan:
    """What install writes (or, with --dry-run, would write)."""

    def __init__(self, target: str, path: str | None, text: str, command: list[str], note: str = ""):
        self.target = target
        self.path = path
        self.text = text
        self.command = command
        self.note = note


def server_command(memory_dir: str | None, root: str | None, http: bool = False) -> list[str]:
    exe = shutil.which("git-memory")
    argv = [exe] if exe else ["git", "memory"]
    if root:
        return argv + ["mcp", "--root", os.path.abspath(root)]
    if memory_dir:
        argv += ["--memory-dir", os.path.abspath(memory_dir)]
    return argv + ["mcp"]


def entry(command: list[str]) -> dict[str, Any]:
    return {"type": "stdio", "command": command[0], "args": command[1:], "env": {}}


def plan(target: str, scope: str, name: str, command: list[str], *, cwd: str, home: str) -> Plan:
    if target not in TARGETS:
        raise UsageError(f"mcp install: unknown client {target!r}; use one of {', '.join(TARGETS)}")
    if scope not in SCOPES:
        raise UsageError(f"mcp install: --scope takes user or project, not {scope!r}")
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", name):
        raise UsageError(f"mcp install: invalid server name {name!r}; use letters, digits, '_' and '-'")
    if target == "json":
        text = json.dumps({"mcpServers": {name: entry(command)}}, indent=2) + "\n"
        return Plan(target, None, text, command)
    if target == "claude-code":
        path = os.path.join(cwd, ".mcp.json") if scope == "project" else os.path.join(home, ".claude.json")
        data = _load_json(path)
        servers = data.setdefault("mcpServers", {})
        if not isinstance(servers, dict):
            raise MemfsError(f"mcp install: {path} has an mcpServers that is not an object; fix it by hand")
        servers[name] = entry(command)
        equivalent = ["claude", "mcp", "add", "--scope", scope, name, "--", *command]
        return Plan(target, path, json.dumps(data, indent=2) + "\n", command,
                    note="the same as: " + " ".join(_quote(a) for a in equivalent))
    path = (os.path.join(cwd, ".codex", "config.toml") if scope == "project"
            else os.path.join(os.environ.get("CODEX_HOME") or os.path.join(home, ".codex"), "config.toml"))
    old = _read(path)
    return Plan(target, path, codex_config(old, name, command), command)


def codex_config(old: str, name: str, command: list[str]) -> str:
    """`old` with the [mcp_servers.<name>] table (and its subtables) replaced or added."""
    section = f"mcp_servers.{name}"
    keep: list[str] = []
    skipping = False
    for line in old.splitlines(keepends=True):
        header = re.match(r"\s*\[\s*([^\]\[]+?)\s*\]\s*(#.*)?$", line)
        if header:
            key = header.group(1).replace('"', "").replace(" ", "")
            skipping = key == section or key.startswith(section + ".")
        if not skipping:
            keep.append(line)
    text = "".join(keep)
    if text and not text.endswith("\n"):
        text += "\n"
    if text.strip():
        text = text.rstrip("\n") + "\n\n"
    args = ", ".join(_toml_string(a) for a in command[1:])
    text += f"[{section}]\ncommand = {_toml_string(command[0])}\nargs = [{args}]\n"
    _check_toml(text)
    return text


def write(p: Plan) -> None:
    if p.path is None:
        return
    os.makedirs(os.path.dirname(p.path), exist_ok=True)
    tmp = p.path + ".tmp-git-memory"
    with open(tmp, "w") as fh:
        fh.write(p.text)
    if os.path.exists(p.path):
        os.chmod(tmp, os.stat(p.path).st_mode & 0o777)
    os.replace(tmp, p.path)


def _load_json(path: str) -> dict[str, Any]:
    text = _read(path)
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MemfsError(f"mcp install: {path} is not valid JSON ({exc.msg} at line {exc.lineno}); "
                         "fix it or move it away, then run again") from None
    if not isinstance(data, dict):
        raise MemfsError(f"mcp install: {path} does not hold a JSON object; fix it by hand")
    return data


def _read(path: str) -> str:
    try:
        with open(path) as fh:
            return fh.read()
    except FileNotFoundError:
        return ""


def _toml_string(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


def _check_toml(text: str) -> None:
    try:
        import tomllib
    except ImportError:  # Python 3.10: nothing to check with
        return
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise MemfsError(f"mcp install: the Codex config would not be valid TOML ({exc}); "
                         "fix the existing file by hand first") from None


def _quote(arg: str) -> str:
    return arg if re.fullmatch(r"[A-Za-z0-9_./:=@-]+", arg) else "'" + arg.replace("'", "'\\''") + "'"
