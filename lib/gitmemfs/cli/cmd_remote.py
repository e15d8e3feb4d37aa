"""Remotes: `git memory clone`, `sync`, `status`."""
from __future__ import annotations

import argparse
import sys

from gitmemfs.cli.common import print_text
from gitmemfs.core.errors import MemfsError
from gitmemfs.core.layout import NAMES as LAYOUTS

TYPE_CHECKING = False  # `typing` costs ~7 ms of every command's start-up
if TYPE_CHECKING:
    from typing import Any, Callable

AUTH_NOTE = """\
authentication: the token comes from $GIT_MEMORY_TOKEN (for a Letta agent's
repository on the $LETTA_MEMFS_BASE_URL server, $LETTA_API_KEY first) and is sent as an HTTP
Authorization header, Basic (user letta) or Bearer as memory.authScheme says.
It reaches git through the environment only: never on a command line, never in
.git/config. Without a token your own git credential helpers may answer;
nothing ever prompts (ssh runs in batch mode unless you set core.sshCommand,
$GIT_SSH_COMMAND or $GIT_SSH). Transient failures (HTTP 502/503/504/520-524, dropped
connections, timeouts) are retried up to 3 tries. A refusal shows the server's own
remote: lines (secrets masked)."""


CLONE_DESCRIPTION = """\
Clone a memory repository, mark it (memory.repo) and install the hooks. DIR
must not exist or must be empty; a failed clone leaves nothing behind. With
--letta-agent ID the URL is ${LETTA_MEMFS_BASE_URL:-https://api.letta.com}/v1/git/ID/state.git,
the token $LETTA_API_KEY, memory.agentId is set to ID, and DIR defaults to
${LETTA_HOME:-~/.letta}/agents/ID/memory.

The branch checked out: --branch NAME, else the one the server's HEAD names, else
main, else the only branch; when the server's HEAD names a branch that does not
exist (a plain `git init --bare` or a gitolite-made repository after main was
pushed) and there are several, the clone is refused, naming them.

URL anthropic-store:<store id> clones a hosted memory store (Anthropic's
beta.memory_stores; the [anthropic] extra): each of its versions becomes a
commit, and sync sends local commits back with content_sha256 preconditions.
The key comes from $ANTHROPIC_API_KEY only, the endpoint from
$ANTHROPIC_BASE_URL (docs/remotes-and-fleets.md, "Hosted stores")."""

SYNC_DESCRIPTION = """\
Fetch the upstream of the current branch, then: fast-forward when only the
remote moved; push when only local commits are new (after checking them with
the memory rules). When both moved (or a push is rejected because the remote
moved meanwhile), keep the old head at refs/memory/backup/<utc>, bring the local
commits onto the remote (rebased, or merged when they include merges, so a
dream's merge commit and its trailers survive), check them and push. Never
force-pushes. A conflicting rebase or merge changes nothing, so local commits
stay exactly as they were. Holds the writer lock throughout.

Many agents on one branch: a push refused because the remote moved, or because
another push held the branch, is retried (wait a jittered, growing window,
fetch, replay, check, push) until it lands or the deadline passes
(--deadline, memory.syncDeadline, 60 s). A server that lands pushes itself
(git memory serve) takes them at a ref of sync's own, so none loses a race;
memory.syncLanding false pushes to the branch there too. A history that
shares no commit with the remote's branch is never pushed.

states: skipped (no upstream), clean, pulled, pushed: exit 0;
conflict, dirty, fetch_failed, check_failed, push_failed, unrelated: exit 1."""


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    raw = argparse.RawDescriptionHelpFormatter
    p = sub.add_parser("clone", parents=[common], help="clone a memory repository",
                       formatter_class=raw, description=CLONE_DESCRIPTION, epilog=AUTH_NOTE)
    p.add_argument("target", metavar="URL", nargs="?", help="the repository to clone (omit with --letta-agent)")
    p.add_argument("directory", metavar="DIR", nargs="?",
                   help="where to clone it (default: --memory-dir, else named after the URL)")
    p.add_argument("--letta-agent", metavar="ID", help="clone this Letta agent's memory repository")
    p.add_argument("--auth-scheme", choices=("basic", "bearer"),
                   help="how to send the token (stored as memory.authScheme; default: basic)")
    p.add_argument("--layout", choices=LAYOUTS,
                   help="the memory's layout, recorded as memory.layout (a clone cannot read the "
                        "remote's config; a plain memory needs this)")
    p.add_argument("--branch", metavar="NAME",
                   help="the branch to check out (default: the server's HEAD, else main, else the only one)")
    p.set_defaults(func=do_clone)

    p = sub.add_parser("sync", parents=[common], help="fetch, then pull or push as needed",
                       formatter_class=raw, description=SYNC_DESCRIPTION, epilog=AUTH_NOTE)
    p.add_argument("--deadline", metavar="SECONDS", type=float,
                   help="how long to keep retrying a push others' pushes refused (default: "
                        "memory.syncDeadline, else 60)")
    p.set_defaults(func=do_sync)

    p = sub.add_parser("status", parents=[common], help="clean/dirty, ahead/behind, hooks and mirror",
                       description="Show whether the work tree is clean (with encoding diagnostics), "
                                   "how the branch stands against its upstream as of the last fetch "
                                   "(no network), the last sync, the hooks and the mirror.")
    p.set_defaults(func=do_status)


def _notifier(ctx: Any) -> Callable[[str], None]:
    def notify(message: str) -> None:
        if not ctx.quiet:
            print_text(f"warning: {message}", sys.stderr)
    # A live "waiting for the server" line on a terminal (remote/waiting.py).
    notify.live = not (ctx.quiet or ctx.json) and sys.stderr.isatty()  # type: ignore[attr-defined]
    return notify


def do_clone(args: argparse.Namespace, ctx: Any) -> Any:
    import os

    from gitmemfs.core import ownconfig
    from gitmemfs.remote import store
    from gitmemfs.remote.clone import clone

    # Every git the clone starts runs the person's programs only (the new repository's
    # config is not theirs to trust either, nor the folder's it is started in).
    ownconfig.pin_process(os.getcwd(), repo_config=False)

    sid = store.store_id_of(args.target)
    if sid:
        return store.clone(sid, args.directory or ctx.memory_dir, layout=args.layout)
    url, directory = args.target, args.directory
    if args.letta_agent and url and not directory:
        url, directory = None, url   # `clone --letta-agent ID DIR`
    return clone(url, directory, letta_agent=args.letta_agent, memory_dir=ctx.memory_dir,
                 auth_scheme=args.auth_scheme, layout=args.layout, branch=args.branch, notify=_notifier(ctx))


def do_sync(args: argparse.Namespace, ctx: Any) -> Any:
    from gitmemfs.core import hookless
    from gitmemfs.remote.sync import sync

    repo = ctx.repo()
    # A person's command: no hook or program the memory's config names runs in any git
    # it starts (rebase, merge, checkout, fetch, push; core/ownconfig.py).
    hookless.only_ours(repo)
    if repo.cfg("memory.store"):
        result = _store_sync(repo, args)
    else:
        result = sync(repo, notify=_notifier(ctx), deadline=args.deadline)
    if result.code and not ctx.json:
        # A state that needs attention is an error line on stderr like any other
        # failure; --json keeps the whole state object on stdout.
        raise MemfsError(result.message, code=result.code)
    return result


def _store_sync(repo: Any, args: argparse.Namespace) -> Any:
    """A hosted store: follow the redactions made there (admin's `redact`, a sibling
    of remote, so joined here), then sync."""
    from gitmemfs.remote import store, store_redact

    gone, texts = store_redact.redactions(repo)
    if gone:
        if texts:
            from gitmemfs.admin import redact
            redact.redact(repo, texts, [], reason=f"redacted in the store: {', '.join(gone[:5])}")
        store_redact.followed(repo, gone)
    return store.sync(repo, deadline=args.deadline)


def do_status(args: argparse.Namespace, ctx: Any) -> Any:
    from gitmemfs.core import ownconfig
    from gitmemfs.remote import status

    repo = ctx.repo()
    ownconfig.pin_process(repo.root)  # git status runs no fsmonitor or pager the memory names
    if repo.cfg("memory.store"):
        from gitmemfs.remote import store
        return store.status(repo)
    return status.status(repo)
