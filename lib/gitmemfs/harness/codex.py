"""`git memory install codex`: the memory in Codex's loop.

    $CODEX_HOME/config.toml   [mcp_servers.memory] (required, with a start-up timeout, so Codex
                              waits for it: mcp/install.py) and the top-level `notify` program,
                              which Codex runs after every turn with one JSON argument
                              (`agent-turn-complete`): `git-memory --memory-dir DIR hook codex
                              notify -- [the notify program that was set]`, so a program already
                              set still runs, after ours
    $CODEX_HOME/AGENTS.md     Codex's global instructions, read at every session start: a block
                              between two markers holds the compiled memory, refreshed by the
                              notify hook when the memory's HEAD moved; text around it is kept
"""
from __future__ import annotations

import json
import os
import re
import sys
from typing import Any

from gitmemfs.core.errors import MemfsError
from gitmemfs.mcp import install as mcp_install

BEGIN = "<!-- git-memory: the memory, compiled (git memory compile); kept in step by its notify hook -->"
END = "<!-- git-memory: end -->"
MARK = " hook codex notify"
_TABLE = re.compile(r"\s*\[")


def home(env: Any = os.environ) -> str:
    return os.path.expanduser(env.get("CODEX_HOME") or "~/.codex")


def notify_of(text: str) -> list[str] | None:
    """The top-level `notify` argv of a config, or None."""
    if sys.version_info >= (3, 11):
        import tomllib

        value = tomllib.loads(text).get("notify")
        return [str(v) for v in value] if isinstance(value, list) else None
    lines = text.splitlines(keepends=True)  # Python 3.10: our own one-line form only
    span = _notify_span(lines)
    if span is None:
        return None
    try:
        got = json.loads("".join(lines[span[0]:span[1]]).split("=", 1)[1])
    except ValueError:
        return None
    return [str(v) for v in got] if isinstance(got, list) else None


def _notify_span(lines: list[str]) -> tuple[int, int] | None:
    """[start, end) of the lines of the top-level notify key (an array may span lines)."""
    for i, line in enumerate(lines):
        if _TABLE.match(line):
            return None
        if re.match(r"\s*notify\s*=", line):
            depth, j = 0, i
            while j < len(lines):
                depth += lines[j].count("[") - lines[j].count("]")
                j += 1
                if depth <= 0:
                    break
            return i, j
    return None


def with_notify(text: str, argv: list[str]) -> str:
    lines = text.splitlines(keepends=True)
    span = _notify_span(lines)
    line = "notify = [" + ", ".join(json.dumps(a) for a in argv) + "]\n"
    if span is not None:
        lines[span[0]:span[1]] = [line]
    else:
        at = next((i for i, x in enumerate(lines) if _TABLE.match(x)), len(lines))
        if at == len(lines) and lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n"
        lines[at:at] = [line] + (["\n"] if at < len(lines) else [])
    return "".join(lines)


def without_notify(text: str, previous: list[str] | None) -> str:
    lines = text.splitlines(keepends=True)
    span = _notify_span(lines)
    if span is None or MARK not in "".join(lines[span[0]:span[1]]).replace('", "', " "):
        return text
    if previous:
        lines[span[0]:span[1]] = ["notify = [" + ", ".join(json.dumps(a) for a in previous) + "]\n"]
    else:
        del lines[span[0]:span[1]]
    return "".join(lines)


def config_with_ours(text: str, name: str, server: list[str], notify: list[str]) -> tuple[str, list[str] | None]:
    """(the new config text, the notify program that was set and is now chained)."""
    previous = notify_of(text)
    if previous and MARK in " ".join(previous):  # a re-install: chain what ours chained
        previous = previous[previous.index("--") + 1:] if "--" in previous else None
    chained = [*notify, "--", *previous] if previous else notify
    out = mcp_install.codex_config(with_notify(text, chained), name, server)
    return out, previous


def config_without_ours(text: str, name: str, previous: list[str] | None) -> str:
    text = without_notify(text, previous)
    out, skip = [], False
    for line in text.splitlines(keepends=True):
        header = re.match(r"\s*\[\s*([^\]\[]+?)\s*\]", line)
        if header:
            where = header.group(1).replace('"', "").replace(" ", "")
            skip = where == f"mcp_servers.{name}"
        if not skip:
            out.append(line)
    return "".join(out)


def agents_block(compiled: str) -> str:
    return f"{BEGIN}\n{compiled.rstrip()}\n{END}\n"


def agents_with(text: str, compiled: str) -> str:
    block = agents_block(compiled)
    start, end = text.find(BEGIN), text.find(END)
    if start >= 0 and end > start:
        return text[:start] + block + text[end + len(END):].lstrip("\n")
    if text and not text.endswith("\n"):
        text += "\n"
    return text + ("\n" if text.strip() else "") + block


def agents_without(text: str) -> str:
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        return text
    return (text[:start].rstrip("\n") + "\n" if text[:start].strip() else "") + text[end + len(END):].lstrip("\n")


def check(text: str) -> None:
    try:
        mcp_install._check_toml(text)
    except MemfsError:
        raise MemfsError("install: the Codex config would not be valid TOML; fix the existing file by hand "
                         "first") from None
