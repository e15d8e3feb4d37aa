"""Reading and undoing: `git memory search`, `log`, `show`, `diff`, `undo`, `restore`."""
from __future__ import annotations

import argparse
from typing import Any

from gitmemfs.core.errors import UsageError

# Operations are imported by the handlers: a command pays only for what it runs.

REASON_HELP = "why this change is made; becomes the commit subject (required)"


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "search", parents=[common], help="find what the memory knows: the best lines, ranked",
        description="Search committed memory (never the work tree). QUERY is words or a question in "
                    "any form (\"when did we move the backup?\"): word forms meet (moved, moving), stop "
                    "words are ignored, and files are ranked by BM25 over description, path and body, "
                    "with a boost where one line holds the query or its exact words. Each file shows "
                    "its best lines as PATH:LINE: TEXT (context as PATH-LINE- TEXT) under its "
                    "description; output is bounded (--lines, --budget) and what is left out is "
                    "counted. --history searches every past version and prints COMMIT:PATH:LINE: TEXT "
                    "with the newest commit where the line still lived. PATHs may come anywhere on "
                    "the line.")
    p.add_argument("query", metavar="QUERY")
    p.add_argument("paths", metavar="PATH", nargs="*", help="only under these files or folders")
    p.add_argument("--regex", action="store_true",
                   help="QUERY is a Perl-style regular expression (time-bounded: memory.regexTimeout)")
    p.add_argument("--in", dest="where", choices=("all", "body", "description", "path"), default="all",
                   help="where to look (default: all)")
    p.add_argument("--rev", metavar="REV", help="search the memory as it was at REV")
    p.add_argument("--history", action="store_true",
                   help="search every past version too: finds deleted and overwritten facts")
    p.add_argument("--limit", metavar="N", type=_positive, default=20, help="files shown (default 20)")
    p.add_argument("--lines", metavar="N", type=_positive, default=3,
                   help="matching lines shown per file, best first, each with a line of context (default 3)")
    p.add_argument("--budget", metavar="TOKENS", type=_positive,
                   help="the best passages that fit in about this many tokens (default: 4000)")
    p.add_argument("--pinned", choices=("rank", "first", "omit"), default="rank",
                   help="pinned files (system/, already in the prompt): ranked on merit (default), "
                        "listed first, or left out")
    p.set_defaults(func=do_search)

    p = sub.add_parser(
        "log", parents=[common], help="the memory's commits: when, who, what and why",
        description="One line per commit: short sha, date, author (agent:, human: or dream:), "
                    "operation and paths from the commit's trailers, and the reason. A single "
                    "PATH is followed across renames.")
    p.add_argument("paths", metavar="PATH", nargs="*")
    p.add_argument("-n", "--max-count", dest="n", metavar="N", type=_positive, help="at most N commits")
    p.add_argument("--since", metavar="DATE", help="commits newer than DATE ('2 weeks ago', 2026-01-31)")
    p.add_argument("--op", metavar="OP", help="only this operation (str_replace, delete, undo, ...)")
    p.add_argument("--dreams", action="store_true",
                   help="only dream merges, with their ids and the commits they merged")
    p.set_defaults(func=do_log)

    p = sub.add_parser("show", parents=[common], help="a memory file as it was at a revision",
                       description="Print PATH as stored at REV (PATH@REV, or --rev; default HEAD).")
    p.add_argument("spec", metavar="PATH[@REV]")
    p.add_argument("--rev", metavar="REV")
    p.set_defaults(func=do_show)

    p = sub.add_parser(
        "diff", parents=[common], help="what changed, frontmatter and body apart",
        description="Changes between two commits: REV..REV, REV (REV to HEAD), or none (the last "
                    "commit). Frontmatter keys are shown as key changes, bodies as unified diffs.")
    p.add_argument("revs", metavar="REV[..REV]", nargs="?")
    p.add_argument("paths", metavar="PATH", nargs="*")
    p.set_defaults(func=do_diff)

    p = sub.add_parser(
        "undo", parents=[common], help="take back one commit or a whole dream, as a new commit",
        description="Revert one commit (a merge against its first parent, so a dream merge goes "
                    "as one unit) through the write path: the writer lock, the clean check and the "
                    "memory rules (a read_only file is never changed). A clash with later changes is "
                    "refused with the paths and nothing changed. The commit carries "
                    "Memory-Op: undo and Memory-Undoes: <sha>.")
    p.add_argument("commit", metavar="COMMIT", nargs="?")
    p.add_argument("--last", action="store_true", help="the newest commit (HEAD)")
    p.add_argument("--dream", metavar="ID", help="the merge of dream ID (git memory log --dreams)")
    p.add_argument("-m", "--reason", help=REASON_HELP)
    p.add_argument("--dry-run", action="store_true", help="show the diff it would commit; change nothing")
    p.set_defaults(func=do_undo)

    p = sub.add_parser(
        "restore", parents=[common], help="bring back one file as it was at a revision",
        description="Bring back PATH (also a deleted one) as it was at REV, validated and committed "
                    "through the write path.")
    p.add_argument("path", metavar="PATH")
    p.add_argument("--rev", metavar="REV", required=True)
    p.add_argument("-m", "--reason", help=REASON_HELP)
    p.add_argument("--dry-run", action="store_true", help="show the diff it would commit; change nothing")
    p.set_defaults(func=do_restore)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return value


def _need_reason(args: argparse.Namespace, command: str) -> None:
    if not args.dry_run and not (args.reason or "").strip():
        raise UsageError(f"{command}: give the reason with -m REASON (or look first with --dry-run)")


def do_search(args: argparse.Namespace, ctx: Any) -> Any:
    from gitmemfs.view.search import search

    return search(ctx.repo(), args.query, args.paths, regex=args.regex, where=args.where, rev=args.rev,
                  history=args.history, limit=args.limit, lines=args.lines, budget=args.budget,
                  pinned=args.pinned)


def do_log(args: argparse.Namespace, ctx: Any) -> Any:
    from gitmemfs.view.history import log

    return log(ctx.repo(), args.paths, n=args.n, since=args.since, op=args.op, dreams=args.dreams)


def do_show(args: argparse.Namespace, ctx: Any) -> Any:
    from gitmemfs.view.history import show

    return show(ctx.repo(), args.spec, args.rev)


def do_diff(args: argparse.Namespace, ctx: Any) -> Any:
    from gitmemfs.view.history import diff

    return diff(ctx.repo(), args.revs, args.paths)


def do_undo(args: argparse.Namespace, ctx: Any) -> Any:
    from gitmemfs.edit.undo import undo

    _need_reason(args, "undo")
    return undo(ctx.repo(), args.commit, last=args.last, dream=args.dream, reason=args.reason,
                dry_run=args.dry_run)


def do_restore(args: argparse.Namespace, ctx: Any) -> Any:
    from gitmemfs.edit.undo import restore

    _need_reason(args, "restore")
    return restore(ctx.repo(), args.path, args.rev, args.reason, dry_run=args.dry_run)
