"""`git memory tokens`: what the compiled memory costs in the prompt.

The estimate is upstream's: ceil(UTF-8 bytes / 4). Unlike upstream (which sums
the raw `system/` files on disk), it measures what `compile` puts in the prompt
for a commit: each file's own lines (its element with projection, description
and value, or its line in the external index), plus the tags and folder lines
that hold them together ("structure").
"""
from __future__ import annotations

from typing import Any

from gitmemfs.core import cachedir
from gitmemfs.core import layout as layouts
from gitmemfs.view.compile import Projection

ESTIMATOR = "ceil(UTF-8 bytes / 4)"


def estimate(nbytes: int) -> int:
    return -(-nbytes // 4)


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogateescape"))


class FileCost:
    __slots__ = ("path", "bytes", "tokens", "layout")

    def __init__(self, path: str, nbytes: int, layout: str = layouts.DEFAULT):
        self.path = path
        self.bytes = nbytes
        self.tokens = estimate(nbytes)
        self.layout = layout

    @property
    def in_context(self) -> bool:
        """A core file (system/, or the root files of the root-index layout)."""
        if self.layout == layouts.LETTA:
            return self.path.startswith("system/")
        return layouts.is_core(self.path, self.layout)

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "tokens": self.tokens, "bytes": self.bytes, "in_context": self.in_context}


class TokenReport:
    def __init__(self, revision: str | None, total_bytes: int, files: list[FileCost],
                 budget: int | None = None, layout: str = layouts.DEFAULT):
        self.layout = layout
        self.revision = revision
        self.total_bytes = total_bytes
        self.total_tokens = estimate(total_bytes)
        self.files = files  # largest first
        self.structure_bytes = max(0, total_bytes - sum(f.bytes for f in files))
        self.budget = budget

    @property
    def over_budget(self) -> bool:
        return self.budget is not None and self.total_tokens > self.budget

    def text(self, top: int = 20) -> str:
        blocks = [f for f in self.files if f.in_context]
        index = [f for f in self.files if not f.in_context]
        rev = self.revision[:7] if self.revision else "no commits yet"
        core_name = "system/ blocks" if self.layout == layouts.LETTA else "core files"
        lines = [
            f"Prompt token estimate for {rev} ({ESTIMATOR})",
            f"  Total: {self.total_tokens:,} tokens",
            f"  {core_name}: {estimate(sum(f.bytes for f in blocks)):,} tokens in {len(blocks):,} files",
            f"  external index: {estimate(sum(f.bytes for f in index)):,} tokens for {len(index):,} files",
            f"  tags and folders: {estimate(self.structure_bytes):,} tokens",
        ]
        if self.budget is not None:
            verdict = (f"over by {self.total_tokens - self.budget:,}" if self.over_budget
                       else f"{self.budget - self.total_tokens:,} to spare")
            lines.append(f"  Budget: {self.budget:,} tokens ({verdict})")
        if top > 0 and self.files:
            lines += ["", "Top files:", f"  {'tokens':>8}  path"]
            lines += [f"  {f.tokens:>8,}  {f.path}" for f in self.files[:top]]
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "revision": self.revision, "estimator": ESTIMATOR,
            "total_tokens": self.total_tokens, "total_bytes": self.total_bytes,
            "structure_tokens": estimate(self.structure_bytes),
            "files": [f.as_dict() for f in self.files],
        }
        if self.budget is not None:
            out["budget"] = self.budget
            out["over_budget"] = self.over_budget
        return out


def count(projection: Projection, revision: str | None, budget: int | None = None,
          layout: str = layouts.DEFAULT) -> TokenReport:
    """Attribute every byte of the projection to the file it shows, or to structure."""
    per_file: dict[str, int] = {}
    for line, owner in zip(projection.lines, projection.owners):
        if owner is not None:
            per_file[owner] = per_file.get(owner, 0) + _size(line) + 1  # with its newline
    total = _size(projection.text)
    files = sorted((FileCost(path, n, layout) for path, n in per_file.items()), key=lambda f: (-f.bytes, f.path))
    return TokenReport(revision, total, files, budget, layout)




def prompt_tokens(repo: Any, rev: str) -> int:
    """The compiled prompt's tokens at `rev` (a commit of `repo`, a core.repo.Repo)."""

    from gitmemfs.core.snapshot import load
    from gitmemfs.view import compile as compiler

    snap = load(repo.root, rev)
    layout = compiler.layout_of(snap, repo.cfg(layouts.CONFIG_KEY))
    projection, _ = compiler.project(snap, cache=repo.cache(cachedir.DESCRIPTIONS), layout=layout,
                                     hosted=compiler.hosted_store(repo.cfg))
    return count(projection, snap.revision, None, layout).total_tokens
