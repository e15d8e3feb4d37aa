"""Committing a change the write path has already validated, without our own hooks.

`git commit` would start our pre-commit hook (a second Python that re-checks the
exact bytes the write path has just checked with the same rules) and our
post-commit hook. When the hooks folder holds nothing git would run on a commit
but ours and their `.local` chains, this commits with hooks off
(`core.hooksPath=/dev/null`) and does what the hooks would have done:

- `pre-commit.local` runs first, on the index as it will be committed; a refusal
  stops the commit as it would from git;
- after the commit, `post-commit.local` runs, or, when a mirror or dream
  trigger is configured (the installed post-commit's own shortcut test), our
  post-commit hook itself, so the mirror push and the dream trigger fire exactly
  as they do after any commit.

Any other hook (commit-msg, prepare-commit-msg, reference-transaction, a foreign
pre-commit, ...) means the ordinary `git commit` with every hook, as before; so
does a hook defined in config (`hook.<name>.event`, git >= 2.54) for any event a
commit runs, whether or not the installed git knows such hooks yet. Git's
housekeeping after a commit is git's own: `git maintenance run --auto`, started
detached after the commit as git starts it, git deciding whether there is work.
"""
from __future__ import annotations

import os

from gitmemfs.core import git
from gitmemfs.core.errors import MemfsError
from gitmemfs.core.repo import Repo

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Sequence

# gate.hooks.MARKER (core cannot import gate; tests/test_hotpath.py keeps them equal).
MARKER = b"git-memfs-hook:"
OURS = ("pre-commit", "pre-merge-commit", "post-commit")
# The settings our post-commit acts on (gate.hooks.POST_COMMIT_KEYS, lower-cased as
# `git config --list` prints them; the test keeps the two lists equal).
POST_COMMIT_KEYS = ("memory.mirrorurl", "letta.memoryrepository.url", "dream.trigger")
# Hooks `git commit` never runs: they may be there, and change nothing here.
NOT_ON_COMMIT = frozenset((
    "pre-merge-commit.local", "pre-receive", "update", "post-receive", "post-update", "proc-receive",
    "pre-push", "post-checkout", "post-merge", "pre-rebase", "post-rewrite", "applypatch-msg",
    "pre-applypatch", "post-applypatch", "push-to-checkout", "sendemail-validate", "fsmonitor-watchman",
    "p4-changelist", "p4-prepare-changelist", "p4-post-changelist", "p4-pre-submit",
))


class Plan:
    """What committing without our hooks has to do in their place."""

    __slots__ = ("folder", "pre_local", "post_local", "post_hook", "own_post")

    def __init__(self, folder: str, pre_local: str | None, post_local: str | None, post_hook: str | None,
                 own_post: bool = False):
        self.folder = folder
        self.pre_local = pre_local
        self.post_local = post_local
        self.post_hook = post_hook
        self.own_post = own_post  # our post-commit work, started from this install, not from a file


_OWN_ONLY = False


def only_ours(repo: Repo) -> None:
    """For a person's command (protect, unprotect, redact, sync; issue 34): from here on no
    hook file runs in any git this process starts (git-filter-repo's, the push's and
    the commit's included), and a commit does our own post-commit work from this
    install, never from the hooks folder: a hook an agent planted there
    (`pre-commit.local`, `commit-msg`, `reference-transaction`, `pre-push`, a
    look-alike of ours) would run with the person's keys and ssh-agent. Nor does a
    program the memory's config names (core/ownconfig.py): refused when found, and
    the fixed-name ones pinned to the person's own values."""
    from gitmemfs.core import ownconfig

    ownconfig.pin_process(repo.root, [("core.hooksPath", os.devnull)])
    global _OWN_ONLY
    _OWN_ONLY = True


def _own_plan(repo: Repo) -> Plan:
    events = configured_hooks(repo)
    if events:
        raise MemfsError(f"hooks are defined in git config for {', '.join(sorted(set(events)))} (hook.<name>.event); "
                         "a person's command runs only git-memfs's own hooks: remove them "
                         "(git config --get-regexp '^hook[.]' lists them) and run it again")
    folder = hooks_folder(repo)
    due = os.path.exists(os.path.join(folder, "post-commit")) and any(repo.cfg(k) for k in POST_COMMIT_KEYS)
    return Plan(folder, None, None, None, own_post=due)


def hooks_folder(repo: Repo) -> str:
    setting = repo.cfg("core.hooksPath")
    if setting:
        return os.path.join(repo.root, os.path.expanduser(setting))
    return os.path.join(repo.common_dir, "hooks")


def _ours(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            head = fh.read(512)
    except OSError:
        return False
    return MARKER in head


def configured_hooks(repo: Repo) -> list[str]:
    """The events of hooks defined in config (`hook.<name>.event`) that a commit may
    run: git >= 2.54 runs them besides the hooks folder's."""
    return [event.strip() for key, values in repo.config.items()
            if key.startswith("hook.") and key.endswith(".event") and key.count(".") >= 2
            for event in values if event.strip() not in NOT_ON_COMMIT]


def plan(repo: Repo) -> Plan | None:
    """The hook-free commit's plan, or None when git's own hooks must run."""
    if _OWN_ONLY:
        return _own_plan(repo)
    if os.environ.get("GIT_MEMFS_COMMIT_HOOKS") == "git":  # an escape hatch, and for A/B tests
        return None
    if configured_hooks(repo):
        return None  # hooks defined in config: git runs them (and the folder's)
    folder = hooks_folder(repo)
    found: dict[str, str] = {}
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.endswith(".sample") or not os.access(entry.path, os.X_OK) or entry.is_dir():
                    continue
                found[entry.name] = entry.path
    except FileNotFoundError:
        return Plan(folder, None, None, None)
    except OSError:
        return None
    for name, path in found.items():
        if name in OURS:
            if not _ours(path):
                return None  # someone else's hook under our name: let git run it
        elif name not in ("pre-commit.local", "post-commit.local") and name not in NOT_ON_COMMIT:
            return None
    post_hook = found.get("post-commit")
    due = post_hook is not None and any(repo.cfg(k) for k in POST_COMMIT_KEYS)
    # Our post-commit runs post-commit.local itself; otherwise we run it.
    return Plan(folder, found.get("pre-commit.local"),
                None if due else found.get("post-commit.local"), post_hook if due else None)


def _hook_env(repo: Repo, author: Sequence[str]) -> dict[str, str]:
    """What git puts in a commit hook's environment that a hook may look at."""
    env = dict(os.environ)
    env["GIT_INDEX_FILE"] = os.path.join(repo.git_dir, "index")
    env.setdefault("GIT_EDITOR", ":")
    env["GIT_PREFIX"] = ""
    for i in range(0, len(author) - 1, 2):
        key, _, value = author[i + 1].partition("=")
        if key == "user.name":
            env["GIT_AUTHOR_NAME"] = value
        elif key == "user.email":
            env["GIT_AUTHOR_EMAIL"] = value
    return env


def _run_hook(path: str, repo: Repo, env: dict[str, str]) -> tuple[int, bytes]:
    return _run_command([path], repo, env)


def _run_command(argv: list[str], repo: Repo, env: dict[str, str]) -> tuple[int, bytes]:
    import subprocess  # only when a chained hook or the post-commit work is there

    proc = subprocess.run(argv, cwd=repo.root, env=env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          pass_fds=repo.held_fds, check=False)
    return proc.returncode, proc.stdout


def commit(repo: Repo, the_plan: Plan, pathspecs: Sequence[str], *, staged: bool,
           author: Sequence[str], message: str) -> git.Result:
    """`git commit -- PATHS` with hooks off, their work done here. `staged`: the paths
    are already in the index (a new file must be); else they are tracked and
    `commit -- PATHS` takes them from the work tree, as the hooked commit does.
    `--only` (git's default with paths): with hooks off, whatever another process
    staged meanwhile must not ride along unchecked."""
    env = _hook_env(repo, author)
    if the_plan.pre_local:
        if not staged:  # the chained hook judges the index: make it what will be committed
            repo.git("add", "-A", "--", *pathspecs)
        code, out = _run_hook(the_plan.pre_local, repo, env)
        if code != 0:
            return git.Result(code, b"", out, ["pre-commit.local"])
    # git's own `maintenance run --auto` is started below, detached, so the edit does
    # not wait for it (git waits for it, and it detaches a gc it starts).
    args = ["-c", "core.hooksPath=/dev/null", "-c", "maintenance.auto=false", *author, "commit", "-q",
            "--no-edit", "--cleanup=whitespace", "-F", "-", "--", *pathspecs]
    result = repo.git(*args, input=message, check=False)
    if result.code == 0:
        if repo.cfg_bool("maintenance.auto", True):
            _maintain_in_background(repo)
        after = the_plan.post_hook or the_plan.post_local
        if after:
            _run_hook(after, repo, env)  # never fails the commit: it is made
        elif the_plan.own_post:  # our entry point by name; /dev/null: no `.local` to chain to
            import sys

            from gitmemfs.core.detach import BOOT, LIB
            _run_command([sys.executable, "-I", "-c", BOOT, LIB, "post-commit", os.devnull], repo, env)
    return result


def _maintain_in_background(repo: Repo) -> None:
    """`git maintenance run --auto --quiet`, as git runs it after a commit, in its own
    session and not waited for; it never holds the writer lock (not passed on)."""
    try:
        git.start_detached(["maintenance", "run", "--auto", "--quiet"], cwd=repo.root)
    except (git.GitError, MemfsError):
        pass  # housekeeping only: the commit is made


def commit_validated(repo: Repo, files: Sequence[str], *, new_files: bool, author: Sequence[str],
                     message: str, hook_env: dict[str, str] | None = None) -> tuple[git.Result, str | None]:
    """Commit `files` (already validated and written) in as few git processes as
    possible: (the commit's result, the new HEAD when it worked).

    Hook-free (see `plan`): `commit -- PATHS` alone for changed or deleted files,
    `add` first only for new ones. With git's hooks: `add`, then `commit`, as before,
    with `hook_env` (what a person approved, for our hooks to read).
    """
    pathspecs = [f":(literal){p}" for p in files]
    the_plan = plan(repo)
    staged = new_files or the_plan is None
    if staged:
        repo.git("add", "-A", "--", *pathspecs)
    if the_plan is None:
        result = repo.git(*author, "commit", "-q", "--no-edit", "--cleanup=whitespace", "-F", "-", "--",
                          *pathspecs, input=message, check=False, env=hook_env)
    else:
        result = commit(repo, the_plan, pathspecs, staged=staged, author=author, message=message)
    if result.code != 0:
        if not staged:  # as the hooked path leaves it: the caller tells "no effect" by the index
            repo.git("add", "-A", "--", *pathspecs, check=False)
        return result, None
    return result, repo.committed_head()
