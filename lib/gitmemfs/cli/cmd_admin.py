"""`git memory protect | unprotect | personality | doctor`: a person's tools."""
from __future__ import annotations

import argparse
from typing import Any

from gitmemfs.cli.common import Report

TYPE_CHECKING = False
if TYPE_CHECKING:
    from gitmemfs.core.outcome import Outcome

REASON = "why (the commit message)"


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    for name, verb in (("protect", "protect files from agent edits"), ("unprotect", "lift that protection")):
        p = sub.add_parser(name, parents=[common], help=f"{verb} (a person's command)",
                           description=f"{verb.capitalize()}, in one commit: read_only in the frontmatter "
                                       "(letta layout, Markdown files) or the protectedPaths list in "
                                       ".memfs.config.json (letta-root, plain, other files). Running it is "
                                       "a person's approval, recorded as the trailer Memory-Approved: "
                                       "protect; no tool an agent is given runs it. Where the server gate "
                                       "has allowed signers (gpg.ssh.allowedSignersFile), only a commit "
                                       "signed by one of them counts: sign it with --sign, or set "
                                       "commit.gpgsign.")
        p.add_argument("paths", metavar="PATH", nargs="+")
        p.add_argument("-m", "--reason", required=True, help=REASON)
        p.add_argument("-S", "--sign", action="store_true",
                       help="sign the commit with your key (git's user.signingKey, gpg.format)")
        p.set_defaults(func=do_protect, protect=name == "protect")

    p = sub.add_parser("personality", parents=[common], help="list, show or apply a personality",
                       description="Personalities rewrite the bodies of the persona and human files (their "
                                   "other frontmatter is kept) in one commit. The catalogue ships with "
                                   "git-memfs; git config memory.personalityPath adds a folder of your own.")
    psub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    q = psub.add_parser("list", parents=[common], help="the ids, labels and descriptions")
    q.set_defaults(func=do_personality)
    q = psub.add_parser("show", parents=[common], help="the texts of one personality")
    q.add_argument("id", metavar="ID")
    q.set_defaults(func=do_personality)
    q = psub.add_parser("apply", parents=[common], help="switch to a personality (one commit)")
    q.add_argument("id", metavar="ID")
    q.add_argument("-m", "--reason", required=True, help=REASON)
    q.set_defaults(func=do_personality)

    p = sub.add_parser("redact", parents=[common], help="take a string or a file out of every version "
                       "(a person only)",
                       description="Replace each string by [REDACTED] in every version of every file and in "
                                   "every commit message, and/or remove files from every version; then expire "
                                   "reflogs, prune the old objects, drop the search index and finished dream "
                                   "runs, and commit a record on top naming no secret (salted hashes). "
                                   "Running this command is the person's approval, recorded as "
                                   "Memory-Approved: redact (sign it, commit.gpgsign, where the server lists "
                                   "allowed signers); no tool an agent is given (call, MCP, the SDK class, "
                                   "dreams) runs it. The strings are read from a file or standard input, one per "
                                   "line, never from the command line. Needs git-filter-repo "
                                   "(pip install '.[redact]' in a checkout).")
    p.add_argument("--text-file", metavar="FILE", help="the strings, one per line ('-': standard input)")
    p.add_argument("--path", dest="paths", metavar="PATH", action="append", default=[],
                   help="a file or folder to remove from every version (repeatable)")
    p.add_argument("--dry-run", action="store_true",
                   help="list the commits, files and refs that would change and count the occurrences")
    p.add_argument("--push", action="store_true",
                   help="then send the new history to the upstream remote and the mirror (--force-with-lease "
                        "on what each has, catching up with commits pushed meanwhile: the one force push "
                        "this toolkit makes)")
    p.add_argument("-m", "--reason", help="the record commit's subject")
    p.set_defaults(func=do_redact)

    p = sub.add_parser("doctor", parents=[common], help="audit the memory; exit 1 on problems",
                       description="A deterministic audit of a commit (default HEAD) for people and CI: every "
                                   "gate rule and limit, a file and a folder of one name, paths that differ "
                                   "only in case, broken [[path]] links, folders without MEMORY.md, skills "
                                   "outside skills/<name>/SKILL.md, a missing persona. Each problem says how to "
                                   "fix it. Exit 1 when there is any.")
    p.add_argument("--rev", default="HEAD", metavar="REV", help="the commit to audit (default HEAD)")
    p.set_defaults(func=do_doctor)


def do_protect(args: argparse.Namespace, ctx: Any) -> Outcome:
    from gitmemfs.admin import protect
    from gitmemfs.core import hookless

    repo = ctx.repo()
    hookless.only_ours(repo)  # a person's command: no hook or program an agent planted runs in it
    return protect.change(repo, args.paths, args.reason, protect=args.protect, sign=args.sign)


def do_redact(args: argparse.Namespace, ctx: Any) -> Outcome:
    import sys

    from gitmemfs.admin import redact
    from gitmemfs.core import hookless
    from gitmemfs.core.errors import UsageError

    texts: list[str] = []
    if args.text_file == "-":
        texts = redact.read_texts(sys.stdin.read())
    elif args.text_file:
        try:
            with open(args.text_file, encoding="utf-8") as fh:
                texts = redact.read_texts(fh.read())
        except OSError as exc:
            raise UsageError(f"redact: can't read {args.text_file}: {exc.strerror}") from None
    repo = ctx.repo()
    hookless.only_ours(repo)  # a person's command: no hook or program an agent planted runs in it
    targets = []
    if args.push and not args.dry_run:
        from gitmemfs.remote import redacted

        targets = redacted.targets(repo)
    out = redact.redact(repo, texts, args.paths, dry_run=args.dry_run, reason=args.reason)
    if targets:
        from gitmemfs.core import ownconfig
        from gitmemfs.remote import redacted

        # Again just before the network: a key an agent wrote while filter-repo ran.
        ownconfig.refuse_planted(ownconfig.entries(repo.root))
        lines = redacted.push(repo, targets)
        out.message += "\n" + "\n".join(lines)
        out.extra["pushed"] = [t.label for t in targets]
    return out


def do_personality(args: argparse.Namespace, ctx: Any) -> Any:
    from gitmemfs.admin import personality

    if args.action == "apply":
        return personality.apply(ctx.repo(), args.id, args.reason)
    repo = _maybe_repo(ctx)
    if args.action == "show":
        chosen = personality.get(args.id, repo)
        text = "\n".join([f"{chosen.id}: {chosen.label} — {chosen.description}", ""]
                         + [part for which in ("persona", "human")
                            for part in (f"## {which} ({chosen.texts[which][0]})", chosen.texts[which][1])])
        return Report(text.rstrip("\n"), chosen.as_dict())
    known = personality.catalogue(repo)
    lines = [f"{p.id:<10} {p.label} — {p.description}" + ("" if p.source == "builtin" else f" [{p.source}]")
             for p in known.values()]
    return Report("\n".join(lines), {"personalities": [
        {"id": p.id, "label": p.label, "description": p.description, "source": p.source} for p in known.values()]})


def _maybe_repo(ctx: Any) -> Any:
    """The memory repo when there is one (its memory.personalityPath), else None."""
    from gitmemfs.core.errors import MemfsError

    try:
        return ctx.repo()
    except MemfsError:
        return None


def do_doctor(args: argparse.Namespace, ctx: Any) -> Any:
    from gitmemfs.admin import doctor

    return doctor.diagnose(ctx.repo(), args.rev)
