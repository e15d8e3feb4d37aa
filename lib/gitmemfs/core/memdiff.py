"""What changed in memory files, body-aware: frontmatter keys as key changes, the
body as a unified diff of its own lines. Shared by `git memory diff` (view) and
`undo --dry-run` (edit), so it lives here rather than in either.
"""
from __future__ import annotations

import difflib
from typing import Any, Sequence

from gitmemfs.core import memfile
from gitmemfs.core.memfile import FrontmatterError


class FileDiff:
    """One path's change. `status`: added, deleted, modified or renamed."""

    def __init__(self, path: str, old: bytes | None, new: bytes | None, *, old_path: str | None = None):
        self.path = path
        self.old_path = old_path or path
        self.status = ("added" if old is None else "deleted" if new is None
                       else "renamed" if self.old_path != path else "modified")
        old_fm, old_body, self.old_binary = _split(old)
        new_fm, new_body, self.new_binary = _split(new)
        self.frontmatter: dict[str, dict[str, str | None]] = {}
        for key in dict.fromkeys([*old_fm, *new_fm]):
            before, after = old_fm.get(key), new_fm.get(key)
            if before != after:
                self.frontmatter[key] = {"old": before, "new": after}
        self.binary = self.old_binary or self.new_binary
        self.body = "" if self.binary else "".join(difflib.unified_diff(
            old_body.splitlines(keepends=True), new_body.splitlines(keepends=True),
            fromfile=f"a/{self.old_path}" if old is not None else "/dev/null",
            tofile=f"b/{path}" if new is not None else "/dev/null", n=3))
        if self.body and not self.body.endswith("\n"):
            self.body += "\n"

    def render(self) -> str:
        head = {"added": f"added {self.path}", "deleted": f"deleted {self.old_path}",
                "renamed": f"renamed {self.old_path} -> {self.path}",
                "modified": f"modified {self.path}"}[self.status]
        lines = [f"=== {head}"]
        if self.status in ("added", "deleted"):
            # A whole file comes or goes: its description says what it was.
            change = self.frontmatter.get("description") or {}
            desc = change.get("new") if self.status == "added" else change.get("old")
            if desc:
                lines[0] += f" ({desc})"
        for key, change in self.frontmatter.items() if self.status in ("modified", "renamed") else ():
            lines.append(f"  {key}: {_shown(change['old'])} -> {_shown(change['new'])}")
        if self.binary:
            lines.append("  (not UTF-8 text; contents not shown)")
        text = "\n".join(lines) + "\n"
        return text + self.body

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "status": self.status, "frontmatter": self.frontmatter,
                               "body_diff": self.body}
        if self.old_path != self.path:
            out["old_path"] = self.old_path
        if self.binary:
            out["binary"] = True
        return out


def render(diffs: Sequence[FileDiff]) -> str:
    return "".join(d.render() for d in diffs)


def _shown(value: str | None) -> str:
    return "(none)" if value is None else repr(value)


def _split(data: bytes | None) -> tuple[dict[str, str], str, bool]:
    """(frontmatter key -> value as written, body, not text)."""
    if data is None:
        return {}, "", False
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return {}, "", True
    if "\0" in text:
        return {}, "", True
    try:
        fm, body, _ = memfile.split(text)
        entries = memfile.parse_entries(fm)
    except FrontmatterError:
        return {}, text, False
    return {e.key: (e.value if e.scalar and e.value is not None else e.source.split(":", 1)[-1].strip())
            for e in entries}, body, False
