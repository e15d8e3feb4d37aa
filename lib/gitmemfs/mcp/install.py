"""`git memory mcp install claude-code | codex | json`: a client's configuration.

    claude-code  project scope: .mcp.json in the current work tree (the file Claude Code
                 reads and shares through the repository); user scope: the mcpServers
                 of ~/.claude.json, as `claude mcp add --scope user` writes it
    codex        [mcp_servers.<name>] in ~/.codex/config.toml (user) or
                 .codex/config.toml (project)
    json         the {"mcpServers": {...}} snippet most other clients take, printed

The server entry runs the `git-memory` found on PATH (else `git memory`) with the
memory directory resolved now, so the client starts the same repository from any
directory; with --http URL it points at a running `git memory mcp --http` instead
(Claude Code: `type: http` with an Authorization header read from an environment
variable; Codex: `url` and `bearer_token_env_var`), and the token itself is never
written. Existing entries of other servers, every other setting, and what a user
added under our entry (Codex's `[mcp_servers.memory.env]`, Claude Code's `env`) are kept.

Start-up: Codex waits only ~1 s for an optional server before the first turn, less
than the SDK takes to import, so the Codex entry says `required = true` (Codex waits,
and says so if the server fails) with a `startup_timeout_sec`.

Nothing is written into a memory's work tree (it would be an uncommitted change that
blocks every later write): from inside the memory, project scope writes to the
project that encloses it, or refuses and says where to run instead.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import sys
from typing import Any

from gitmemfs.core.errors import MemfsError, UsageError

TARGETS = ("claude-code", "codex", "json")
SCOPES = ("user", "project")
STARTUP_TIMEOUT = 30  # seconds Codex waits for the server before giving up on it
TOKEN_ENV = "GIT_MEMORY_MCP_TOKEN"
OURS = ("command", "args", "url", "bearer_token_env_var", "required", "startup_timeout_sec", "type", "headers")


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


def entry(command: list[str], url: str | None = None, token_env: str | None = None,
          old: Any = None) -> dict[str, Any]:
    """A Claude Code / mcpServers entry; the keys of `old` we do not set are kept."""
    kept = {k: v for k, v in old.items() if k not in OURS} if isinstance(old, dict) else {}
    if url:
        kept.pop("env", None)  # a stdio setting; an http entry has none
        new: dict[str, Any] = {"type": "http", "url": url}
        if token_env:
            new["headers"] = {"Authorization": f"Bearer ${{{token_env}}}"}
    else:
        new = {"type": "stdio", "command": command[0], "args": command[1:]}
        kept.setdefault("env", {})
    return {**new, **kept}


def project_dir(cwd: str, memory_trees: list[str]) -> tuple[str, str]:
    """(the folder project scope writes to, a note): `cwd`, unless that is inside a memory."""
    inside = next((t for t in memory_trees if _within(cwd, t)), None)
    if inside is None:
        return cwd, ""
    from gitmemfs.core import git

    res = git.run(["rev-parse", "--show-toplevel"], cwd=os.path.dirname(os.path.abspath(inside)),
                  check=False)
    enclosing = res.out.strip() if res.code == 0 else ""
    if enclosing and not any(_within(enclosing, t) for t in memory_trees):
        return enclosing, f"{cwd} is inside the memory, so this went to the project that encloses it"
    raise MemfsError(f"mcp install: {cwd} is inside the memory ({inside}); a client file there would be an "
                     "uncommitted change that blocks every write. Run this from your project's folder "
                     f"(git memory --memory-dir {inside} mcp install ...), or use --scope user")


def _within(path: str, top: str) -> bool:
    path, top = os.path.realpath(path), os.path.realpath(top)
    return path == top or path.startswith(top.rstrip(os.sep) + os.sep)


def plan(target: str, scope: str, name: str, command: list[str], *, cwd: str, home: str,
         url: str | None = None, token_env: str | None = None, memory_trees: list[str] | None = None) -> Plan:
    if target not in TARGETS:
        raise UsageError(f"mcp install: unknown client {target!r}; use one of {', '.join(TARGETS)}")
    if scope not in SCOPES:
        raise UsageError(f"mcp install: --scope takes user or project, not {scope!r}")
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", name):
        raise UsageError(f"mcp install: invalid server name {name!r}; use letters, digits, '_' and '-'")
    if url and not re.fullmatch(r"https?://[^\s]+", url):
        raise UsageError(f"mcp install: --http takes the server's URL, e.g. http://127.0.0.1:8765/mcp, not {url!r}")
    if token_env and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", token_env):
        raise UsageError(f"mcp install: --token-env takes an environment variable's name, not {token_env!r}")
    note = ""
    if scope == "project" and target != "json":
        cwd, note = project_dir(cwd, memory_trees or [])
    if target == "json":
        text = json.dumps({"mcpServers": {name: entry(command, url, token_env)}}, indent=2) + "\n"
        return Plan(target, None, text, command)
    if target == "claude-code":
        path = os.path.join(cwd, ".mcp.json") if scope == "project" else os.path.join(home, ".claude.json")
        data = _load_json(path)
        servers = data.setdefault("mcpServers", {})
        if not isinstance(servers, dict):
            raise MemfsError(f"mcp install: {path} has an mcpServers that is not an object; fix it by hand")
        servers[name] = entry(command, url, token_env, servers.get(name))
        if url:
            equivalent = ["claude", "mcp", "add", "--scope", scope, "--transport", "http", name, url]
            if token_env:
                equivalent += ["--header", f"Authorization: Bearer ${{{token_env}}}"]
        else:
            equivalent = ["claude", "mcp", "add", "--scope", scope, name, "--", *command]
        note = "; ".join(filter(None, [note, "the same as: " + " ".join(_quote(a) for a in equivalent)]))
        return Plan(target, path, json.dumps(data, indent=2) + "\n", command, note=note)
    path = (os.path.join(cwd, ".codex", "config.toml") if scope == "project"
            else os.path.join(os.environ.get("CODEX_HOME") or os.path.join(home, ".codex"), "config.toml"))
    old = _read(path)
    return Plan(target, path, codex_config(old, name, command, url, token_env), command, note=note)


def codex_config(old: str, name: str, command: list[str], url: str | None = None,
                 token_env: str | None = None) -> str:
    """`old` with our keys of [mcp_servers.<name>] set; its other keys and subtables
    (a user's env, tool settings) kept where they were."""
    section = f"mcp_servers.{name}"
    if url:
        ours = {"url": _toml_string(url)}
        if token_env:
            ours["bearer_token_env_var"] = _toml_string(token_env)
    else:
        args = ", ".join(_toml_string(a) for a in command[1:])
        ours = {"command": _toml_string(command[0]), "args": f"[{args}]"}
    ours.update(required="true", startup_timeout_sec=str(STARTUP_TIMEOUT))
    block = "".join(f"{k} = {v}\n" for k, v in ours.items())
    out: list[str] = []
    where = None  # the table a line belongs to
    placed = False
    for line in old.splitlines(keepends=True):
        header = re.match(r"\s*\[\s*([^\]\[]+?)\s*\]\s*(#.*)?$", line)
        if header:
            where = header.group(1).replace('"', "").replace("'", "").replace(" ", "")
            if where == section:
                out.append(line if line.endswith("\n") else line + "\n")
                out.append(block)
                placed = True
                continue
        elif where == section:
            key = re.match(r"\s*([A-Za-z0-9_-]+)\s*=", line)
            if key and key.group(1) in OURS:
                continue  # ours, written above (a multi-line array of ours is not expected here)
        out.append(line)
    text = "".join(out)
    if not placed:
        if text and not text.endswith("\n"):
            text += "\n"
        if text.strip():
            text = text.rstrip("\n") + "\n\n"
        text += f"[{section}]\n{block}"
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
    if sys.version_info >= (3, 11):  # Python 3.10 has no tomllib: nothing to check with
        import tomllib

        try:
            tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise MemfsError(f"mcp install: the Codex config would not be valid TOML ({exc}); "
                             "fix the existing file by hand first") from None


def _quote(arg: str) -> str:
    return arg if re.fullmatch(r"[A-Za-z0-9_./:=@-]+", arg) else "'" + arg.replace("'", "'\\''") + "'"
