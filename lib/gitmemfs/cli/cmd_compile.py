"""What the agent sees: `git memory compile`, `tree`, `tokens`.

All three read a commit (`--rev`, default HEAD), never the work tree.
"""
from __future__ import annotations

import argparse
import gc
import sys

from gitmemfs.cli.common import Report
from gitmemfs.core import cachedir
from gitmemfs.core.redact import redact
from gitmemfs.core.visible import visible

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from gitmemfs.core import snapshot


# The operations are imported by the handlers, so `git memory str_replace` does not
# pay for them; keep this in step with compile.COMPAT_MODES (tests check it).
COMPAT_MODES = ("letta",)

MAX_WARNINGS = 10


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "compile", parents=[common], help="print the system-prompt projection of the memory",
        description="Print the memory as it goes into an agent's system prompt: a Reminder line, "
                    "<self> (system/persona.md), and <memory> with every other system/ file (path, "
                    "description, value) and an index of the other files with their descriptions. "
                    "Built from a commit, never from the work tree: uncommitted edits do not show. "
                    "Pipe it into any agent: claude --append-system-prompt \"$(git memory compile)\"")
    _rev(p)
    _compat(p, "byte-exact Letta Code 0.30.25 output, its bugs included (non-ASCII names dropped, "
               "continuation lines not indented, no descriptions in the index)")
    p.add_argument("--absolute", action="store_true",
                   help="write the repository's absolute path instead of $MEMORY_DIR")
    p.set_defaults(func=do_compile)

    p = sub.add_parser(
        "tree", parents=[common], help="print the memory tree with its caps",
        description="Print the files of a commit as a tree: folders first, at most --max-children "
                    "entries per folder, at most --max-lines lines and --max-chars characters in all "
                    "(then a truncation notice). Defaults 500 / 20,000 / 50, or "
                    "LETTA_MEMFS_TREE_MAX_LINES / _MAX_CHARS / _MAX_CHILDREN_PER_DIR.")
    _rev(p)
    p.add_argument("--max-lines", type=_count, metavar="N", help="line budget (at least 2)")
    p.add_argument("--max-chars", type=_count, metavar="N", help="character budget (at least 128)")
    p.add_argument("--max-children", type=_count, metavar="N", help="entries shown per folder (at least 1)")
    _compat(p, "only .md files, as Letta Code's renderer shows memory blocks")
    p.set_defaults(func=do_tree)

    p = sub.add_parser(
        "tokens", parents=[common], help="estimate the prompt tokens of the memory",
        description="Estimate the tokens that git memory compile puts in the prompt, as "
                    "ceil(UTF-8 bytes / 4): the total, then the files that cost most. With --budget N, "
                    "exit 1 when the total is over N (for CI).")
    _rev(p)
    p.add_argument("--top", type=_count, default=20, metavar="N", help="files to list (default 20; 0: none)")
    p.add_argument("--budget", type=_count, metavar="N", help="fail (exit 1) when the total exceeds N tokens")
    p.set_defaults(func=do_tokens)


def _rev(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rev", default="HEAD", metavar="REV", help="the commit to read (default HEAD)")


def _compat(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--compat", choices=COMPAT_MODES, help=f"letta: {what}")


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}")
    return value


class CompileResult:
    def __init__(self, text: str, data: dict[str, Any]):
        self.message = text
        self.data = data
        self.code = 0

    def as_dict(self) -> dict[str, Any]:
        return {"ok": True, **self.data}


def _no_gc() -> None:
    # These commands allocate one object per file and free nothing until they exit:
    # the cycle collector would only rescan them (~15% of the time on 100,000 files).
    gc.disable()


def do_compile(args: argparse.Namespace, ctx: Any) -> CompileResult:
    from gitmemfs.core import snapshot
    from gitmemfs.view import compile as compiler

    _no_gc()
    repo = ctx.repo()
    snap = snapshot.load(repo.root, args.rev)
    layout = _layout(repo, snap)
    root = repo.root if args.absolute else compiler.MEMORY_DIR
    store = compiler.hosted_store(repo.cfg)
    projection, memory = compiler.project(snap, compat=args.compat, root=root,
                                          quote_path=repo.cfg_bool("core.quotePath", True),
                                          cache=repo.cache(cachedir.DESCRIPTIONS), layout=layout,
                                          hosted=store)
    text = projection.text
    if ctx.json:
        memory = memory or compiler.collect(snap, layout)
        extra = {"store": store} if store else {}
        return CompileResult(text, {**compiler.as_json(memory), "projection": text, "layout": layout, **extra})
    if memory is not None and not ctx.quiet:
        _warn([d for d in memory.blocks if d.problem])
    return CompileResult(text, {})


def _layout(repo: Any, snap: snapshot.Snapshot) -> str:
    """The commit's layout: memory.layout, else its root MEMORY.md (see core/layout.py)."""
    from gitmemfs.core import layout as layouts
    from gitmemfs.core.errors import MemfsError

    try:
        return layouts.detect(repo.cfg(layouts.CONFIG_KEY), any(e.path == layouts.INDEX for e in snap.files))
    except ValueError as exc:
        raise MemfsError(f"{exc}; fix it with git config memory.layout letta") from None


def _warn(docs: list[snapshot.Doc]) -> None:
    """Broken in-context files still compile; say so on stderr (stdout stays the prompt)."""
    for doc in docs[:MAX_WARNINGS]:
        sys.stderr.write(visible(redact(f"warning: {doc.path}: {doc.problem}; shown as far as it could be "
                                        "read (git memory check --all lists every problem)")) + "\n")
    if len(docs) > MAX_WARNINGS:
        sys.stderr.write(f"warning: {len(docs) - MAX_WARNINGS} more files with problems\n")


def do_tree(args: argparse.Namespace, ctx: Any) -> Report:
    from gitmemfs.core import snapshot
    from gitmemfs.view import tree

    _no_gc()
    repo = ctx.repo()
    snap = snapshot.load(repo.root, args.rev)
    caps = tree.limits({"max_lines": args.max_lines, "max_chars": args.max_chars,
                        "max_children": args.max_children})
    layout = _layout(repo, snap)
    rendered = tree.render(tree.for_snapshot(snap.files, compat=args.compat, layout=layout), **caps,
                           system=layout == "letta" or args.compat is not None)
    return Report(rendered.text, {"revision": snap.revision, **rendered.as_dict()})


def do_tokens(args: argparse.Namespace, ctx: Any) -> Report:
    from gitmemfs.core import snapshot
    from gitmemfs.view import compile as compiler
    from gitmemfs.view import tokens

    _no_gc()
    repo = ctx.repo()
    snap = snapshot.load(repo.root, args.rev)
    layout = _layout(repo, snap)
    projection, _ = compiler.project(snap, cache=repo.cache(cachedir.DESCRIPTIONS), layout=layout,
                                     hosted=compiler.hosted_store(repo.cfg))
    report = tokens.count(projection, snap.revision, args.budget, layout)
    code = 1 if report.over_budget else 0
    if code and not ctx.json:
        sys.stderr.write(f"error: the memory's prompt is over budget ({report.total_tokens:,} > "
                         f"{args.budget:,} tokens); move detail out of system/ into external files\n")
    return Report(report.text(args.top), report.as_dict(), code=code)

