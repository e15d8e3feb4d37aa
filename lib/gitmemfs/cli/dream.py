"""`git dream`: reflect on a transcript and tidy memory in a sandboxed worktree."""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Sequence

from gitmemfs import __version__
from gitmemfs.cli.common import boundary, print_json, print_text
from gitmemfs.cli.parser import Parser, add_global_options
from gitmemfs.core.repo import open_repo

DESCRIPTION = """\
Run a dream pass over a memory repository: an agent command of your choice works on
its own branch (dream/<id>) in a private worktree, confined by a Landlock sandbox to
that worktree and its branch. It may reflect on a transcript (--from) and maintain a
document (--to). Its commits are then validated with the memory rules and merged into
the memory, left for review (--merge explicit), or kept at refs/dreams/kept/<id>:
nothing the agent wrote is lost."""

EPILOG = """\
outcomes (exit status): merged, merged_after_rebase (the memory moved and the dream's
commits were replayed onto it), merged_after_resolve (dream.resolve=agent resolved a
conflict), no_changes, pending, no_payload, not_due, started (0);
failed, check_failed, merge_conflict, dirty_uncommitted (1); usage (2);
busy, parent_dirty (3, retry later); sandbox_unavailable, not a memory repository (4).

agents: --agent, else $GIT_DREAM_AGENT, else git config dream.agent (the variable
beats the config, as $GIT_EDITOR beats core.editor). The command runs
as /bin/sh -c CMD in the worktree with MEMORY_DIR, DREAM_ID, DREAM_PROMPT_FILE,
DREAM_BASE, AGENT_ID and AGENT_NAME set and the prompt on stdin. builtin:tidy and
builtin:notes are offline agents. Recipes for Claude Code, Codex, Letta and llm:
git memory help --example lists them (agents/*.sh) and prints their paths.

environment: the agent gets an allow-list (PATH, HOME, LANG, LC_*, TERM, git's
config locations, the model API variables ANTHROPIC_*, OPENAI_*, GEMINI_API_KEY,
GOOGLE_API_KEY) plus dream.passEnv; everything else is withheld, tokens and agent
sockets (SSH_AUTH_SOCK, GPG_AGENT_INFO, DBUS_SESSION_BUS_ADDRESS) included. Secrets
in a source or -i text are masked before they reach the prompt. Sandboxed, the
agent may open TCP connections only to dream.sandbox.allowPort (443 by default),
the person's unix sockets are hidden from it, and it reads only its own work, the
system, the toolkit, what its recipe declares and dream.sandbox.allowRead.

config: dream.agent, dream.timeout (1500), dream.merge (auto|explicit),
dream.project (the project --from auto reads; default: the current directory),
dream.resolve (off|agent: on a conflict the replay cannot fix, run the agent once more
on the new HEAD with the conflicts in its prompt),
dream.trigger (off, or a list of steps, compaction, commits; steps and compaction
come from the harness hooks git memory install puts in), dream.every (25),
dream.sandbox.allowWrite (repeatable),
dream.sandbox.allowRead (repeatable; any: reads are not confined),
dream.sandbox.allowChmod (false), dream.sandbox.allowPort (repeatable: a TCP port
the agent may connect to, 443 when unset; any: the network is not confined),
dream.passEnv (repeatable: a variable the agent gets besides the allow-list)."""


def build_parser() -> Parser:
    parser = Parser(prog="git dream", description=DESCRIPTION, epilog=EPILOG,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    add_global_options(parser, suppress=False)
    parser.add_argument("--version", action="version", version=f"git-memfs {__version__}")
    parser.add_argument("--agent", metavar="CMD", help="agent command, or builtin:tidy / builtin:notes")
    parser.add_argument("--from", dest="source", metavar="SOURCE",
                        help="reflect on new content of transcript:FILE.jsonl, openhands:DIR|FILE, "
                             "claude-code:DIR|FILE, codex:DIR|FILE, or auto (every new Claude Code and "
                             "Codex session of this project)")
    parser.add_argument("--reread", action="store_true",
                        help="with --from: read the source again from where the last dream that consumed "
                             "it began (a dream that changed nothing still consumes what it read)")
    parser.add_argument("--to", metavar="PATH", help="maintain this document (e.g. AGENTS.md) through "
                                                     "system/<name> in memory")
    parser.add_argument("-i", "--instruction", metavar="TEXT", help="an extra instruction for the agent")
    parser.add_argument("--timeout", metavar="S", help="seconds before the agent is killed (default: "
                                                       "dream.timeout, else 1500)")
    parser.add_argument("--merge", choices=("auto", "explicit"),
                        help="auto: merge validated work; explicit: leave it pending for review")
    parser.add_argument("--no-sandbox", action="store_true",
                        help="run the agent unconfined (also GIT_DREAM_SANDBOX=0)")
    parser.add_argument("--auto", action="store_true",
                        help="run only if due (dream.trigger has commits, and dream.every memory commits)")
    parser.add_argument("--background", action="store_true", help="detach and run in the background")
    parser.add_argument("--verbose", action="store_true", help="also copy the agent's output to stderr")
    common = Parser(add_help=False)
    add_global_options(common, suppress=True)
    # Optional: without a command, git dream runs a pass.
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser,
                                title="commands (without one, git dream runs a pass)")
    p = sub.add_parser("list", parents=[common], help="runs that hold work (kept or pending)",
                       description="List dream runs whose work is kept or waiting for review: why each "
                                   "was kept, and the one command that merges or drops it.")
    p.add_argument("--all", action="store_true", help="every recorded run")
    p = sub.add_parser("show", parents=[common], help="one run: outcome, commits, diffstat, log",
                       description="Show a dream run: its outcome, commits and diffstat.")
    p.add_argument("id", metavar="ID", help="run id (or a unique prefix)")
    p = sub.add_parser("finish", parents=[common], help="verify a pending run was merged (or --merge it)",
                       description="Verify that a pending or kept run is part of the memory, and clean it "
                                   "up; with --merge, merge it through the dream's validation first.")
    p.add_argument("id", metavar="ID", help="run id (or a unique prefix)")
    p.add_argument("--merge", action="store_true", help="validate and merge the run's work now")
    p = sub.add_parser("drop", parents=[common], help="discard a kept or pending run",
                       description="Delete a run's kept ref, branch and record (with --note, the record "
                                   "stays, marked dropped, with the note).")
    p.add_argument("id", metavar="ID", help="run id (or a unique prefix)")
    p.add_argument("--note", metavar="TEXT", help="why it was dropped; kept in the run record")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    return boundary(list(sys.argv[1:] if argv is None else argv), _main)


def _main(argv: Sequence[str]) -> int:
    from gitmemfs.core import approval

    for var in approval.VARS:  # a dream approves nothing (limits, protection) whoever starts it
        os.environ.pop(var, None)
    args = build_parser().parse_args(argv)
    as_json = bool(args.json)
    quiet = bool(getattr(args, "quiet", False))
    repo = open_repo(args.memory_dir)
    if args.command == "list":
        from gitmemfs.dream import manage
        return _emit(manage.list_runs(repo, show_all=args.all), as_json, quiet)
    if args.command == "show":
        from gitmemfs.dream import manage
        return _emit(manage.show(repo, args.id), as_json, quiet)
    if args.command == "finish":
        from gitmemfs.dream import manage
        return _emit(manage.finish(repo, args.id, merge=args.merge), as_json, quiet)
    if args.command == "drop":
        from gitmemfs.dream import manage
        return _emit(manage.drop(repo, args.id, note=args.note), as_json, quiet)
    from gitmemfs.dream import lifecycle, runner, target

    if args.to is not None:
        target.resolve(args.to)  # usage errors before anything starts
    opts = lifecycle.Options(agent=args.agent, source=args.source, to=args.to, instruction=args.instruction,
                             timeout=args.timeout, merge=args.merge, no_sandbox=args.no_sandbox,
                             auto=args.auto, verbose=args.verbose, reread=args.reread,
                             progress=not (as_json or quiet), notices=not quiet)
    if args.background:
        return _emit(_background(repo, opts, args), as_json, quiet)
    runner.Interrupts.install()
    return _emit(lifecycle.dream(repo, opts), as_json, quiet)


def _background(repo: Any, opts: Any, args: argparse.Namespace) -> Any:
    """Check what can be checked now (settings, --from, --to, the sandbox, --auto's
    due-ness), then re-run this dream detached (own session, stdio redirected, no fds
    inherited) and report `started` with the usual keys."""
    from gitmemfs.dream import lifecycle, trigger
    from gitmemfs.dream.finalize import Result

    if opts.auto:
        waiting = lifecycle.not_due(repo)
        if waiting is not None:
            return waiting
    refused = lifecycle.validate(repo, opts, os.environ)
    if refused is not None:
        return refused
    rest: list[str] = []
    if args.source:
        kind, colon, loc = args.source.partition(":")
        # The child runs from the repository root: make the source path absolute.
        if kind == "auto" and not colon:  # the project is where this command was started
            rest += ["--from", f"auto:{lifecycle.project_of(repo, os.environ)}"]
        else:
            rest += ["--from", f"{kind}:{os.path.abspath(os.path.expanduser(loc))}" if colon else args.source]
    if args.to is not None:
        rest += ["--to", os.path.abspath(os.path.expanduser(args.to))]
    for flag, value in (("--agent", args.agent), ("--instruction", args.instruction),
                        ("--timeout", args.timeout), ("--merge", args.merge)):
        if value is not None:
            rest += [flag, value]
    for flag, on in (("--no-sandbox", args.no_sandbox), ("--auto", args.auto), ("--verbose", args.verbose),
                     ("--reread", args.reread)):
        if on:
            rest.append(flag)
    pid = trigger.launch_detached(repo.root, repo.common_dir, rest)
    log = os.path.join(repo.common_dir, "dream", "logs", "background.log")
    return Result("started", log=log, extra={"pid": pid},
                  message=f"git dream started in the background (pid {pid}); see git dream list, output in {log}")


def _emit(result: Any, as_json: bool, quiet: bool = False) -> int:
    code = getattr(result, "code", 0) or 0
    if as_json:
        print_json(result.as_dict())
    elif code == 0:
        if not quiet:
            print_text(result.message)
    else:
        text = " ".join(result.message.split("\n"))
        log = getattr(result, "log", None)
        if log and log not in text:  # a failure always says where the whole story is
            text += f" (log: {log})"
        print_text("error: " + text, sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
