"""`git memory install claude-code`: the memory in Claude Code's loop, through its settings.

Settings entries, not a plugin: Claude Code reads hooks from its settings files in every
mode, `claude -p` included, with no marketplace step, and a settings entry can name the
memory's absolute path (a plugin is one folder shared by every memory). Written:

    --user (default)  hooks in $CLAUDE_CONFIG_DIR/settings.json (~/.claude/settings.json);
                      the MCP server in the mcpServers of the user's .claude.json
                      ($CLAUDE_CONFIG_DIR/.claude.json, else ~/.claude.json)
    --project         hooks in <project>/.claude/settings.local.json (personal, not shared:
                      it names this machine's memory), the MCP server in <project>/.mcp.json,
                      approved there by name (enabledMcpjsonServers)

The hooks run `git-memory --memory-dir DIR hook claude-code EVENT` (events.py).
"""
from __future__ import annotations

import json
import os
import shlex
from typing import Any

from gitmemfs.core.errors import MemfsError
from gitmemfs.mcp import install as mcp_install

EVENTS = {"SessionStart": "session-start", "Stop": "stop", "PreCompact": "pre-compact",
          "SessionEnd": "session-end"}
MARK = " hook claude-code "  # in every command we write: how uninstall knows ours
HOOK_TIMEOUT = 30  # seconds Claude Code allows a hook; ours return in well under one


def config_home(env: Any = os.environ) -> str:
    return os.path.expanduser(env.get("CLAUDE_CONFIG_DIR") or "~/.claude")


def paths(scope: str, project: str, env: Any = os.environ) -> tuple[str, str]:
    """(the settings file for the hooks, the file for the MCP entry)."""
    if scope == "project":
        return os.path.join(project, ".claude", "settings.local.json"), os.path.join(project, ".mcp.json")
    base = env.get("CLAUDE_CONFIG_DIR")
    claude_json = os.path.join(os.path.expanduser(base), ".claude.json") if base else \
        os.path.join(os.path.expanduser("~"), ".claude.json")
    return os.path.join(config_home(env), "settings.json"), claude_json


def hook_command(base: list[str], memory_root: str, event: str) -> str:
    return shlex.join([*base, "--memory-dir", memory_root, "hook", "claude-code", event])


def load(path: str, text: bytes | None) -> dict[str, Any]:
    if not text or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise MemfsError(f"install: {path} is not valid JSON ({exc}); fix it or move it away, then run again") \
            from None
    if not isinstance(data, dict):
        raise MemfsError(f"install: {path} does not hold a JSON object; fix it by hand")
    return data


def dump(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode()


def without_ours(settings: dict[str, Any], name: str | None = None) -> dict[str, Any]:
    """`settings` with our hook groups (and, when `name` is given, that approval) taken out."""
    hooks = settings.get("hooks")
    if isinstance(hooks, dict):
        for event in list(hooks):
            groups = hooks[event]
            if not isinstance(groups, list):
                continue
            kept = [g for g in groups if not _ours(g)]
            if kept:
                hooks[event] = kept
            else:
                del hooks[event]
        if not hooks:
            del settings["hooks"]
    approved = settings.get("enabledMcpjsonServers")
    if name and isinstance(approved, list) and name in approved:
        approved.remove(name)
        if not approved:
            del settings["enabledMcpjsonServers"]
    return settings


def _ours(group: Any) -> bool:
    inner = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(inner, list) and bool(inner) and all(
        isinstance(h, dict) and MARK in str(h.get("command", "")) for h in inner)


def with_ours(settings: dict[str, Any], base: list[str], memory_root: str, scope: str,
              name: str) -> dict[str, Any]:
    settings = without_ours(settings, name if scope == "project" else None)
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise MemfsError("install: the settings' hooks is not an object; fix it by hand")
    for event, ours in EVENTS.items():
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise MemfsError(f"install: the settings' hooks.{event} is not a list; fix it by hand")
        groups.append({"hooks": [{"type": "command", "command": hook_command(base, memory_root, ours),
                                  "timeout": HOOK_TIMEOUT}]})
    if scope == "project":
        approved = settings.setdefault("enabledMcpjsonServers", [])
        if isinstance(approved, list) and name not in approved:
            approved.append(name)
    return settings


def with_server(data: dict[str, Any], path: str, name: str, command: list[str]) -> dict[str, Any]:
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise MemfsError(f"install: {path} has an mcpServers that is not an object; fix it by hand")
    servers[name] = mcp_install.entry(command, old=servers.get(name))
    return data


def without_server(data: dict[str, Any], name: str) -> dict[str, Any]:
    servers = data.get("mcpServers")
    if isinstance(servers, dict) and MARK_MCP in json.dumps(servers.get(name, {})):
        del servers[name]
    return data


MARK_MCP = '"mcp"'  # our server entry runs `git-memory ... mcp`
