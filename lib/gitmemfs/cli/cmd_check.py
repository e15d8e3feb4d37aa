"""Validation and hooks: `git memory check`, `hooks`, `mirror`."""
from __future__ import annotations

import argparse
import os

from gitmemfs.cli.common import Report
from gitmemfs.core.errors import UsageError
from gitmemfs.core.layout import NAMES as LAYOUTS
from gitmemfs.core.repo import locate

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from gitmemfs.gate import hooks


CHECK_DESCRIPTION = """\
Validate memory files with the same rules as the pre-commit hook.
  --all       every file of the commit at HEAD as it stands (the default)
  --staged    the staged changes against HEAD, read_only protection included
  --tree [REV]
              one committed tree alone (default HEAD): no index, no work tree,
              every problem of every file, its structure and its size limits
  REV_RANGE   every commit of a range (e.g. origin/main..HEAD), each against its
              parent (a merge against every parent for read_only), so commits
              made with --no-verify, cherry-picks and rebases are caught too
Prints one `path: problem` line per problem (prefixed with the commit for a
range) and exits 1 if there are any; --format github prints them as GitHub
Actions annotations. Works in bare repositories (--all, --tree, ranges).
It checks the repository of the current directory (or --memory-dir), never the
one $MEMORY_DIR or $AGENT_ID name: a hook or a CI job judges what it runs in."""


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("check", parents=[common], help="validate memory files: staged, the whole tree, "
                       "or a commit range", description=CHECK_DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--staged", action="store_true", help="check the staged changes against HEAD")
    mode.add_argument("--all", action="store_true", help="check every file at HEAD (the default)")
    mode.add_argument("--tree", nargs="?", const="HEAD", metavar="REV",
                      help="check one committed tree alone, every problem of every file (default HEAD)")
    mode.add_argument("range", metavar="REV_RANGE", nargs="?", help="check every commit of a range")
    p.add_argument("--format", choices=("text", "github"), default="text",
                   help="github: one ::error annotation per problem, for GitHub Actions")
    p.set_defaults(func=do_check)

    p = sub.add_parser("hooks", parents=[common], help="install or inspect the git hooks",
                       description="Install the git-memfs hooks where git looks for them (git rev-parse "
                                   "--git-path hooks, so core.hooksPath and linked worktrees are honoured), "
                                   "or report whether they will run. A work tree gets pre-commit, "
                                   "pre-merge-commit and post-commit; a bare repository gets pre-receive. "
                                   "A hook that is not ours is never replaced silently: --force renames it "
                                   "to <hook>.local, which our hook runs after its own work.")
    hsub = p.add_subparsers(dest="hooks_command", metavar="ACTION", parser_class=type(p))
    hi = hsub.add_parser("install", parents=[common], help="install (or refresh) the hooks",
                         description="Install (or refresh) the hooks.")
    hi.add_argument("--force", action="store_true",
                    help="install even over a foreign hook (kept as <hook>.local and chained) or into a "
                         "core.hooksPath from your global config")
    hi.add_argument("--layout", choices=LAYOUTS,
                    help="record the memory layout the hooks judge by (memory.layout); a server "
                         "repository has no other way to know a plain memory is pushed to it")
    hi.set_defaults(func=do_hooks_install)
    hs = hsub.add_parser("status", parents=[common], help="say whether the hooks will run here (default)",
                         description="Say whether the hooks will run here.")
    hs.set_defaults(func=do_hooks_status)
    p.set_defaults(func=do_hooks_status)

    p = sub.add_parser("mirror", parents=[common], help="configure the post-commit mirror push",
                       description="After every commit on main, the post-commit hook pushes main to the "
                                   "mirror URL in the background (never forced; the commit never waits) "
                                   "and logs the result in <git-dir>/memory-repository-push.log. The URL "
                                   "is memory.mirrorUrl, else letta.memoryRepository.url; authentication "
                                   "is your own git's (SSH keys, credential helpers), and a URL with a "
                                   "password is refused.")
    msub = p.add_subparsers(dest="mirror_command", metavar="ACTION", parser_class=type(p))
    ms = msub.add_parser("set-url", parents=[common], help="set the mirror URL",
                         description="Set memory.mirrorUrl. The next commit on main pushes there; "
                                     "git memory mirror push pushes now.")
    ms.add_argument("url", metavar="URL")
    ms.set_defaults(func=do_mirror_set)
    mu = msub.add_parser("unset", parents=[common], help="stop mirroring", description="Remove the mirror URL.")
    mu.set_defaults(func=do_mirror_unset)
    mp = msub.add_parser("push", parents=[common], help="push the current branch to the mirror now",
                         description="Push the current branch to the mirror now (never forced) and wait "
                                     "for the result.")
    mp.set_defaults(func=do_mirror_push)
    mt = msub.add_parser("status", parents=[common], help="show the mirror URL and the last push (default)",
                         description="Show the mirror URL and the last push.")
    mt.add_argument("--lines", type=int, default=20, metavar="N", help="recent log lines to show (default 20)")
    mt.set_defaults(func=do_mirror_status)
    p.set_defaults(func=do_mirror_status, lines=20)


# -- check ---------------------------------------------------------------------------------

def do_check(args: argparse.Namespace, ctx: Any) -> Report:
    from gitmemfs.core import git
    from gitmemfs.gate import check, hooks

    # The repository the command runs in (a hook, the pre-commit framework, CI), not
    # the agent's memory that $MEMORY_DIR / $AGENT_ID point the edit commands at.
    where = hooks.place(os.path.abspath(ctx.memory_dir) if ctx.memory_dir else os.getcwd())
    if args.staged:
        if where.bare:
            raise UsageError("git memory check --staged needs a work tree; in a bare repository use --all "
                             "or a REV_RANGE")
        report = check.staged(where.cwd, env=git.hook_env())
        what = "staged changes"
    elif args.tree:
        report = check.committed_tree(where.cwd, args.tree)
        what = f"the tree of {args.tree}"
    elif args.range:
        report = check.commit_range(where.cwd, args.range)
        what = f"{report.commits} commit{'s' if report.commits != 1 else ''} of {args.range}"
    else:
        if not check.has_commit(where.cwd, "HEAD"):
            from gitmemfs.core import integrity

            integrity.unborn(where.cwd)  # a damaged memory is never "nothing to check" (exit 4)
            return Report("No commits yet: nothing to check.", {"mode": "all", "files": 0, "commits": 0,
                                                                  "problems": []})
        report = check.audit(where.cwd) if not where.bare else check.tree(where.cwd)
        what = "HEAD and the staged changes" if getattr(report, "staged", False) else "HEAD"
    count = len(report.problems)
    if report.ok:
        summary = f"No problems: {report.files} file{'s' if report.files != 1 else ''} checked ({what})."
    else:
        summary = f"{count} problem{'s' if count != 1 else ''} ({what})."
    lines = report.annotations() if args.format == "github" else report.lines()
    message = "\n".join(lines + [summary])
    data = report.as_dict()
    data.pop("ok")
    return Report(message, data, code=0 if report.ok else 1)


# -- hooks ---------------------------------------------------------------------------------

def _hooks_place(ctx: Any) -> hooks.Place:
    from gitmemfs.gate import hooks

    where = hooks.place(locate(ctx.memory_dir)[0])
    if not where.bare:
        ctx.repo()  # a work tree must be a memory repository (raises with the fix)
    return where


def do_hooks_install(args: argparse.Namespace, ctx: Any) -> Report:
    from gitmemfs.gate import hooks

    where = _hooks_place(ctx)
    if args.layout:
        hooks.record_layout(where, args.layout)
    done = hooks.install(where, force=args.force)
    info = done.as_dict()
    message = done.message()
    if args.layout:
        info["layout"] = args.layout
        message += f" Layout: {args.layout} (git config memory.layout)."
    return Report(message, info)


def do_hooks_status(args: argparse.Namespace, ctx: Any) -> Report:
    from gitmemfs.gate import hooks

    info = hooks.status(_hooks_place(ctx))
    return Report(hooks.describe(info), info)


# -- mirror --------------------------------------------------------------------------------

def do_mirror_set(args: argparse.Namespace, ctx: Any) -> Report:
    from gitmemfs.gate import hooks
    from gitmemfs.remote import mirror

    repo = ctx.repo()
    message = mirror.set_url(repo, args.url)
    post = hooks.status(repo)["hooks"]["post-commit"]
    if post["state"] != "installed":
        message += (f"\nwarning: the post-commit hook will not run here ({post['detail']}), so commits "
                    "will not push; run git memory hooks install")
    else:
        message += " Commits on main push there in the background; git memory mirror push pushes now."
    return Report(message, mirror.status(repo))


def do_mirror_unset(args: argparse.Namespace, ctx: Any) -> Report:
    from gitmemfs.remote import mirror

    repo = ctx.repo()
    return Report(mirror.unset(repo), mirror.status(repo))


def do_mirror_push(args: argparse.Namespace, ctx: Any) -> Report:
    from gitmemfs.remote import mirror

    repo = ctx.repo()
    branch, output = mirror.push(repo)
    info = mirror.status(repo)
    text = f"Pushed {branch} to {info['url']}."
    return Report(text + ("\n" + output if output else ""), {**info, "pushed": branch, "output": output})


def do_mirror_status(args: argparse.Namespace, ctx: Any) -> Report:
    from gitmemfs.remote import mirror

    repo = ctx.repo()
    info = mirror.status(repo)
    if info["url"] is None:
        return Report("No mirror URL configured; set one with git memory mirror set-url URL.", info)
    lines = [f"Mirror: {info['url']} ({info['key']}); commits on {info['branch']} push there."]
    last = info["last_push"]
    if last is None:
        lines.append("No push yet (no commit on main since the URL was set).")
    else:
        state = ("running" if last["running"] else "interrupted" if last["exit"] is None
                 else "ok" if last["ok"] else f"failed (exit {last['exit']})")
        lines.append(f"Last push: {last['time']} {last['commit']} on {last['branch']}: {state}")
        if args.lines > 0:
            tail = mirror.read_log(repo.common_dir).rstrip("\n").splitlines()[-args.lines:]
            lines += ["", f"Recent log ({info['log']}):", *tail]
    return Report("\n".join(lines), info)
