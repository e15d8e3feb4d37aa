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
pre-commit, ...) means the ordinary `git commit` with every hook, as before.
"""
from __future__ import annotations

import os

from gitmemfs.core import earlycheck, git, privateindex
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

    __slots__ = ("folder", "pre_local", "post_local", "post_hook")

    def __init__(self, folder: str, pre_local: str | None, post_local: str | None, post_hook: str | None):
        self.folder = folder
        self.pre_local = pre_local
        self.post_local = post_local
        self.post_hook = post_hook


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


def plan(repo: Repo) -> Plan | None:
    """The hook-free commit's plan, or None when git's own hooks must run."""
    if os.environ.get("GIT_MEMFS_COMMIT_HOOKS") == "git":  # an escape hatch, and for A/B tests
        return None
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
    import subprocess  # only when a chained hook or the post-commit work is there

    proc = subprocess.run([path], cwd=repo.root, env=env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          pass_fds=repo.held_fds, check=False)
    return proc.returncode, proc.stdout


def commit(repo: Repo, the_plan: Plan, files: Sequence[str], pathspecs: Sequence[str], *,
           staged: bool, author: Sequence[str], message: str,
           index: privateindex.Snapshot | None = None) -> git.Result:
    """`git commit -- PATHS` with hooks off, their work done here. `staged`: the paths
    are already in the index (a new file must be); else they are tracked and
    `commit -- PATHS` takes them from the work tree, as the hooked commit does.

    `--only` (git's default with paths): with hooks off, whatever another process
    staged meanwhile must not ride along unchecked. With `index`, the writer's own
    snapshot of the index that the clean check read (core/privateindex.py), which
    no one else can stage into: `--include` commits it, ~3 ms quicker, and it then
    becomes git's index. (Not with a pre-commit.local, which may stage files.)"""
    env = _hook_env(repo, author)
    if index is not None and (the_plan.pre_local or staged):
        index.abandon()
        index = None
    if the_plan.pre_local:
        if not staged:  # the chained hook judges the index: make it what will be committed
            repo.git("add", "-A", "--", *pathspecs)
        code, out = _run_hook(the_plan.pre_local, repo, env)
        if code != 0:
            return git.Result(code, b"", out, ["pre-commit.local"])
    # git's own `maintenance run --auto` after a commit is started below, detached:
    # the edit does not wait for it (git detaches a gc it starts, too).
    maintain = repo.cfg_bool("maintenance.auto", True) and maintenance_due(repo)
    if index is not None and not index.lock_index():
        index = None  # git's index changed since the check, or another git holds it
    args = ["-c", "core.hooksPath=/dev/null", "-c", "maintenance.auto=false", *author, "commit", "-q",
            "--no-edit", "--cleanup=whitespace", "-F", "-", *(["--include"] if index else []), "--", *pathspecs]
    try:
        result = repo.git(*args, input=message, check=False, env=None if index is None else index.env())
        installed = index is None or result.code != 0 or index.install()
    finally:
        if index is not None:
            index.abandon()  # after a failure git's index is as it was
    if not installed:
        reset_paths(repo, files)
    if result.code == 0:
        if maintain:
            _maintain_in_background(repo)
        after = the_plan.post_hook or the_plan.post_local
        if after:
            _run_hook(after, repo, env)  # never fails the commit: it is made
    return result


def maintenance_due(repo: Repo) -> bool:
    """Whether git's `maintenance run --auto` after a commit may have work: False only
    when git's own test surely says no, so the edit starts no process for nothing.
    With no maintenance settings its one task is `gc --auto`, which runs when gc.auto
    is above 0 and objects/17 holds more than gc.auto/256 loose objects (git's sample
    of 1/256 of them), or more packs than gc.autoPackLimit (50) are there."""
    if any(key.startswith("maintenance.") and key != "maintenance.auto" for key in repo.config):
        return True  # a strategy or a task of its own: git decides
    if os.environ.get("GIT_OBJECT_DIRECTORY"):
        return True
    threshold = _integer(repo.cfg("gc.auto"), 6700)
    if threshold is None:
        return True
    if threshold <= 0:
        return False  # gc.auto=0: git never gathers up on its own
    objects = os.path.join(repo.common_dir, "objects")
    sample = -(-threshold // 256)
    try:
        loose = sum(1 for name in os.listdir(os.path.join(objects, "17"))
                    if len(name) == 38 and all(c in "0123456789abcdef" for c in name))
    except FileNotFoundError:
        loose = 0
    except OSError:
        return True
    if loose > sample:
        return True
    limit = _integer(repo.cfg("gc.autoPackLimit"), 50)
    if limit is None:
        return True
    if limit <= 0:
        return False
    try:
        names = set(os.listdir(os.path.join(objects, "pack")))
    except FileNotFoundError:
        return False
    except OSError:
        return True
    packs = sum(1 for n in names if n.endswith(".pack") and n[:-5] + ".keep" not in names)
    return packs > limit


def _integer(value: str | None, default: int) -> int | None:
    """A git integer setting (k, m, g suffixes); None when it is not one git reads so."""
    if value is None:
        return default
    text = value.strip().lower()
    scale = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get(text[-1:], 1)
    if scale != 1:
        text = text[:-1]
    digits = text[1:] if text[:1] in "+-" else text
    if not digits.isdigit() or not digits.isascii() or (digits[0] == "0" and len(digits) > 1):
        return None  # (git reads a leading 0 as octal, 0x as hex: left to git)
    return int(text) * scale


def _maintain_in_background(repo: Repo) -> None:
    """`git maintenance run --auto --quiet`, as git runs it after a commit, in its own
    session and not waited for; it never holds the writer lock (not passed on)."""
    try:
        git.start_detached(["maintenance", "run", "--auto", "--quiet"], cwd=repo.root)
    except (git.GitError, MemfsError):
        pass  # housekeeping only: the commit is made


def reset_paths(repo: Repo, paths: Sequence[str], wait: float = 5.0) -> bool:
    """`git reset -q -- PATHS`: their index entries as HEAD has them (after a writer
    was killed between its commit and installing its index), retried while another
    git holds the index lock."""
    import time

    deadline = time.monotonic() + wait
    while True:
        if repo.git("reset", "-q", "--", *[f":(literal){p}" for p in paths], check=False).code == 0:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def head_sha(repo: Repo) -> str | None:
    """HEAD's commit read from the ref files git has just written (no process);
    None when that is not certain (packed, detached, another ref backend)."""
    return earlycheck.read_head(repo.git_dir, repo.common_dir)


def commit_validated(repo: Repo, files: Sequence[str], *, new_files: bool, author: Sequence[str],
                     message: str, index: privateindex.Snapshot | None = None,
                     hook_env: dict[str, str] | None = None) -> tuple[git.Result, str | None]:
    """Commit `files` (already validated and written) in as few git processes as
    possible: (the commit's result, the new HEAD when it worked).

    Hook-free (see `plan`): `commit -- PATHS` alone for changed or deleted files,
    `add` first only for new ones; from the writer's own `index` when there is one.
    With git's hooks: `add`, then `commit`, as before, with `hook_env` (what a person
    approved, for our hooks to read). `index` is used or discarded.
    """
    pathspecs = [f":(literal){p}" for p in files]
    the_plan = plan(repo)
    staged = new_files or the_plan is None
    if index is not None and the_plan is None:  # git's own commit, with its hooks, as ever
        index.abandon()
        index = None
    if staged:
        repo.git("add", "-A", "--", *pathspecs)
    if the_plan is None:
        result = repo.git(*author, "commit", "-q", "--no-edit", "--cleanup=whitespace", "-F", "-", "--",
                          *pathspecs, input=message, check=False, env=hook_env)
    else:
        result = commit(repo, the_plan, files, pathspecs, staged=staged, author=author, message=message,
                        index=index)
    if result.code != 0:
        if not staged:  # as the hooked path leaves it: the caller tells "no effect" by the index
            repo.git("add", "-A", "--", *pathspecs, check=False)
        return result, None
    return result, head_sha(repo) or repo.head()
