"""What the installed git hooks run: `python -I -c BOOT LIB HOOK SCRIPT [ARGS...]` (see
`gate.hooks.script`), or the hook file itself as a Python script that calls `run()`
(what 0.3's installer wrote for the gates).

A stable entry point: hooks installed by any version name `gitmemfs.hookmain`
(see `core.detach.BOOT`), so this module stays here, at the top, imported by
nothing else.

Every commit pays for this module's imports, so it stays lean: no `sh`, no
`typing`, no `dataclasses`, no `json`, and `yaml` only when a file's frontmatter
needs it. The hook scripts (`hooks.script()`, `githooks/memfs-hook`) start it with
`-I` so neither the repository's files nor PYTHON* variables can change what runs.

After its own work a hook runs `<hook>.local` from the same folder, if there is
one: that is where a repository keeps the hook it had before ours.
"""
from __future__ import annotations

import os
import sys

from gitmemfs.core import git
from gitmemfs.core.errors import MemfsError
from gitmemfs.core.redact import redact

HEADER = "Frontmatter validation failed:"  # upstream's wording; agents know it
# The hooks that only judge and answer: nothing of theirs outlives them.
_JUDGES = ("pre-commit", "pre-merge-commit", "pre-receive", "update")


def run(argv: list[str]) -> None:
    """main(), then exit. A judging hook leaves at once (`os._exit`, after flushing):
    it has no thread, log or atexit work, and Python's own tear-down of the modules
    it imported costs ~2 ms of every commit. The others exit as usual."""
    code = main(argv)
    if argv and argv[0] in _JUDGES:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        sys.stderr.write("usage: python -m gitmemfs.hookmain HOOK SCRIPT [ARGS...]\n")
        return 2
    hook, script, args = argv[0], argv[1], argv[2:]
    # The runner sets these for every git it starts; set them here too, so the
    # `.local` hook and any git started outside the runner judge the stored objects.
    os.environ.update(git.OBJECTS_AS_STORED)
    if hook == "mirror-push":  # the detached child of post-commit, not a git hook
        from gitmemfs.remote import mirror
        return mirror.background_push(args[0] if args else ".")
    handler = HANDLERS.get(hook)
    if handler is None:
        sys.stderr.write(f"git-memfs: no such hook: {hook}\n")
        return 2
    stdin = sys.stdin.buffer.read() if hook in READS_STDIN else None
    try:
        code = handler(args, stdin)
    except Exception as exc:  # noqa: BLE001 - a gate fails closed, with a readable line
        _say(f"error: git-memfs {hook} hook failed: {type(exc).__name__}: {exc} "
             "(try git memory hooks install; please report it if it persists)")
        return 0 if hook == "post-commit" else 1
    if code != 0:
        return code
    return run_local(script, hook, args, stdin)


# -- the hooks ------------------------------------------------------------------------

def pre_commit(args: list[str], stdin: bytes | None) -> int:
    """pre-commit and pre-merge-commit: the staged tree against HEAD."""
    cwd, env = os.getcwd(), git.hook_env()
    try:
        # The diff first: git works on it while this process imports the rules.
        diff = git.start(git.STAGED_DIFF, cwd=cwd, env=env)
        from gitmemfs.gate import check

        report = check.staged(cwd, env=env, diff=diff)
    except MemfsError as exc:
        return _fail(f"error: git-memfs could not check this commit: {exc}")
    if report.ok:
        return 0
    _say(HEADER, "", *report.lines())
    return 1


def post_commit(args: list[str], stdin: bytes | None) -> int:
    """Never fails the commit: it is already made."""
    try:
        from gitmemfs.remote import mirror
        mirror.after_commit(os.getcwd())
    except Exception as exc:  # noqa: BLE001 - a mirror problem must not disturb the commit
        sys.stderr.write(redact(f"git-memfs: mirror push not started: {exc}\n"))
    # A due dream starts detached (DESIGN §9.8): the commit never waits for it, and
    # maybe_launch never raises. The installed script only starts Python when a key
    # of gate.hooks.POST_COMMIT_KEYS is set, and dream.trigger is one of them.
    from gitmemfs.dream import trigger
    trigger.maybe_launch(os.getcwd())
    return 0


def pre_receive(args: list[str], stdin: bytes | None) -> int:
    """Server side: every ref update of the push, all in one check."""
    return _gate(_updates(stdin))


def update(args: list[str], stdin: bytes | None) -> int:
    """Server side, one ref at a time: `update REF OLD NEW`."""
    if len(args) != 3:
        return _fail("error: git-memfs update hook: expected REF OLD NEW")
    ref, old, new = args
    return _gate([(old, new, ref)])


def post_receive(args: list[str], stdin: bytes | None) -> int:
    """Server side, after the refs moved: land the pushes made to refs/land/ (serve/land.py)."""
    from gitmemfs.serve import land

    return land.post_receive(os.getcwd(), _updates(stdin))


def _updates(stdin: bytes | None) -> list[tuple[str, str, str]]:
    updates = []
    for line in (stdin or b"").decode("utf-8", "surrogateescape").splitlines():
        parts = line.split()
        if len(parts) == 3:
            updates.append((parts[0], parts[1], parts[2]))
    return updates


def _gate(updates: list[tuple[str, str, str]]) -> int:
    from gitmemfs.gate import check

    try:
        report = check.pushed(os.getcwd(), updates, note=True)
    except MemfsError as exc:
        return _fail(f"error: git-memfs could not check this push: {exc}")
    if report.ok:
        return 0
    from gitmemfs.gate import approved

    names = dict.fromkeys(ref for _, _, ref in updates)
    refs = ", ".join(names)
    lines = report.lines()
    if any(approved.UNCOUNTED in line for line in lines):
        footer = "Push refused: the fix is this server's configuration (see the note above), not the commits."
    elif all(p.path in names and p.commit is None for p in report.problems):  # about refs, not files
        footer = "Push refused: nothing changed on the server."
    else:
        footer = "Push refused: fix those commits (git memory check shows them) and push again."
    _say(f"Memory validation failed for {refs}:", "", *lines, "", footer)
    return 1


HANDLERS = {"pre-commit": pre_commit, "pre-merge-commit": pre_commit, "post-commit": post_commit,
            "pre-receive": pre_receive, "update": update, "post-receive": post_receive}
READS_STDIN = {"pre-receive", "post-receive"}


# -- helpers --------------------------------------------------------------------------

def _say(*lines: str) -> None:
    from gitmemfs.core.visible import visible  # a person reads it (a commit, a push's remote: lines)

    sys.stderr.write(visible(redact("\n".join(lines))) + "\n")


def _fail(line: str) -> int:
    _say(line)
    return 1


def run_local(script: str, hook: str, args: list[str], stdin: bytes | None) -> int:
    """Chain to `<hook>.local` next to the hook script, as git would run a hook."""
    local = os.path.join(os.path.dirname(script), hook + ".local")
    if not os.path.exists(local):
        return 0
    if not os.access(local, os.X_OK):
        sys.stderr.write(f"hint: {local} was ignored because it is not executable "
                         f"(chmod +x it to run it after the memory checks)\n")
        return 0
    argv = [local, *args]
    if stdin is None:
        sys.stdout.flush()
        sys.stderr.flush()
        os.execv(local, argv)  # its exit status becomes the hook's
    import subprocess
    return subprocess.run(argv, input=stdin).returncode
