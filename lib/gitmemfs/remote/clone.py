"""`git memory clone` (DESIGN §6): clone, mark the repository, install the hooks.

The network call goes through `network.Network` (credentials from `auth`,
transient failures retried); a failed clone leaves nothing behind.

The branch: `--branch NAME`, else the server's HEAD if it names a branch that
exists, else `main`, else the only branch; with several and none of those, the
clone is refused, naming them. A server made with a plain `git init --bare` (or
by gitolite) keeps HEAD at `master` after `main` is pushed: git then clones an
"empty" repository beside the real history, and the agent's first edit would
start a second, unrelated memory.
"""
from __future__ import annotations

import os
import shutil
import time
from typing import Mapping

from gitmemfs.core import durable, git, oserrors, writer
from gitmemfs.core.errors import MemfsError, UsageError
from gitmemfs.core.outcome import Outcome
from gitmemfs.core.redact import redact
from gitmemfs.core.repo import Repo, agent_home, describe_git_dir, read_config
from gitmemfs.gate import hooks
from gitmemfs.remote import auth as authmod
from gitmemfs.remote.network import Network
from gitmemfs.remote.sync import Notify, save_record


def clone(url: str | None, directory: str | None = None, *, letta_agent: str | None = None,
          memory_dir: str | None = None, auth_scheme: str | None = None, layout: str | None = None,
          branch: str | None = None, env: Mapping[str, str] | None = None,
          notify: Notify | None = None) -> Outcome:
    """Clone a memory repository, mark it, install the hooks. A failed clone leaves
    nothing behind; the token never touches the disk."""
    if bool(url) == bool(letta_agent):
        raise UsageError("git memory clone: give a URL or --letta-agent ID (not both)")
    if letta_agent:
        url = authmod.letta_url(letta_agent, env)
    assert url is not None
    url = authmod.check_url(url)
    if auth_scheme is not None:
        auth_scheme = authmod.valid_scheme(auth_scheme, "--auth-scheme")
    if branch is not None and (not branch or branch.startswith("-") or
                               git.run(["check-ref-format", "--branch", branch], check=False).code):
        raise UsageError(f"git memory clone: --branch {branch!r} is not a branch name")
    dest = _destination(url, directory, memory_dir, letta_agent, env)
    existed = _check_destination(dest)
    scheme = auth_scheme or authmod.configured_scheme()
    creds = authmod.for_remote(url, scheme, letta=True if letta_agent else None, env=env)
    net = Network(url, creds, notify=notify)
    created = _make_parent(dest)

    def wipe() -> None:
        _remove_contents(dest) if existed else shutil.rmtree(dest, ignore_errors=True)

    try:
        # No checkout yet: the branch is chosen once the remote's branches are known.
        net.run(["clone", "-q", "--no-checkout", "--origin", "origin", "--", url, dest],
                cwd=os.path.dirname(dest), label="git memory clone", timeout=git.CLONE_TIMEOUT, before_retry=wipe)
        repo, note = _adopt_clone(dest, creds, auth_scheme, letta_agent, layout, branch, url)
    except BaseException:
        wipe()
        if created:
            shutil.rmtree(created, ignore_errors=True)
        raise
    head = repo.head()
    branch = writer.status(repo)[1]
    where = f"{branch} at {head[:7]}" if head else f"empty repository, branch {branch}"
    return Outcome(f"Cloned {redact(url)} into {repo.root} ({where}){note}",
                   extra={"path": repo.root, "url": redact(url), "branch": branch, "head": head, "layout": layout,
                          "retries": net.retries, "auth": creds.as_dict(), "letta_agent": letta_agent})


def _destination(url: str, directory: str | None, memory_dir: str | None, letta_agent: str | None,
                 env: Mapping[str, str] | None) -> str:
    if directory:
        return os.path.abspath(os.path.expanduser(directory))
    if memory_dir:
        return os.path.abspath(os.path.expanduser(memory_dir))
    if letta_agent:
        return agent_home(letta_agent, env)
    name = url.rstrip("/")
    if name.endswith("/.git"):
        name = name[:-5]
    name = name.replace(":", "/").rsplit("/", 1)[-1]
    if name.endswith(".git"):
        name = name[:-4]
    if not name or name in (".", ".."):
        raise UsageError(f"git memory clone: cannot name a directory after {redact(url)}; give DIR")
    return os.path.abspath(name)


def _check_destination(dest: str) -> bool:
    """True if `dest` already exists (as an empty directory); refuse anything else."""
    if not os.path.lexists(dest):
        return False
    if not os.path.isdir(dest) or os.path.islink(dest):
        raise MemfsError(f"git memory clone: {dest} exists and is not a directory; choose another DIR")
    if os.listdir(dest):
        raise MemfsError(f"git memory clone: {dest} already exists and is not empty; choose another "
                         "directory, or remove it first")
    return True


def _make_parent(dest: str) -> str | None:
    """Create dest's parent folders; return the topmost one created (to undo), if any."""
    parent = os.path.dirname(dest)
    top = None
    probe = parent
    while not os.path.exists(probe):
        top = probe
        probe = os.path.dirname(probe)
    oserrors.make_folders(parent, "git memory clone")
    return top


def _remove_contents(folder: str) -> None:
    for name in os.listdir(folder) if os.path.isdir(folder) else []:
        path = os.path.join(folder, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.unlink(path)


def _adopt_clone(dest: str, creds: authmod.Auth, auth_scheme: str | None,
                 letta_agent: str | None, layout: str | None = None, branch: str | None = None,
                 url: str = "") -> tuple[Repo, str]:
    found = describe_git_dir(dest)
    if found is None:
        raise MemfsError(f"git memory clone: git reported success but {dest} is not a repository")
    top, git_dir, common = found
    repo = Repo(root=top, git_dir=git_dir, common_dir=common, config=read_config(top))
    settings = {"memory.repo": "true"}
    if auth_scheme:
        settings["memory.authScheme"] = auth_scheme
    if letta_agent:
        settings["memory.agentId"] = letta_agent
    if layout:  # before the hooks: they judge by it from the first commit
        settings["memory.layout"] = layout
    for key, value in settings.items():
        repo.git("config", "--local", key, value)
    durable.configure(repo.git, repo.config)  # core.fsync: plain git there is durable too
    chose = _check_out(repo, branch, url)
    repo.reload_config()
    note = chose + hooks.install_for_init(repo)
    save_record(repo, last_fetch=time.time())
    return repo, note


def _check_out(repo: Repo, wanted: str | None, url: str) -> str:
    """Check out the branch the memory lives on (see the module doc); a note on how
    it was chosen when the server's HEAD did not say."""
    prefix = "refs/remotes/origin/"
    names = sorted(r[len(prefix):] for r in repo.git("for-each-ref", "--format=%(refname)", prefix).lines()
                   if r != prefix + "HEAD")
    current = writer.status(repo)[1]
    note = ""
    if wanted is not None:
        if wanted not in names:
            listed = ", ".join(names) if names else "none: the repository is empty"
            raise MemfsError(f"git memory clone: {redact(url)} has no branch {wanted} (its branches: {listed}); "
                             "give one of them to --branch")
        branch = wanted
    elif not names:
        _track_unborn(repo)
        return ""
    elif current in names:
        branch = current           # the server's HEAD names this branch (or git guessed it)
        if repo.git("rev-parse", "-q", "--verify", prefix + "HEAD", check=False).code != 0:
            note = (f"; the server's HEAD names no branch that exists, so {branch} was checked out "
                    f"(on the server: git symbolic-ref HEAD refs/heads/{branch})")
    else:
        if "main" in names:
            branch = "main"
        elif len(names) == 1:
            branch = names[0]
        else:
            raise MemfsError(f"git memory clone: the server's HEAD names no branch that exists"
                             f"{f' ({current})' if current else ''}, and it has several: {', '.join(names[:20])}; "
                             "choose one with --branch NAME")
        note = (f"; the server's HEAD names {current or 'no branch'}, which does not exist, so {branch} was "
                f"checked out (on the server: git symbolic-ref HEAD refs/heads/{branch})")
    if current and current != branch:
        repo.git("config", "--local", "--remove-section", f"branch.{current}", check=False)
    # -B: the branch git made for the server's HEAD, or a new one; the work tree is empty.
    # No hook runs in it: the hooks folder is written after, ours, and a hook planted
    # there meanwhile is not the person's (a person's command runs only the toolkit's).
    repo.git("-c", f"core.hooksPath={os.devnull}", "checkout", "-q", "--no-guess", "-B", branch, "--track",
             f"origin/{branch}")
    return note


def _track_unborn(repo: Repo) -> None:
    """An empty remote: start on `main`, tracking origin/main, so sync can push later."""
    branch = writer.status(repo)[1] or "main"
    if branch != "main" and not repo.cfg(f"branch.{branch}.remote"):
        repo.git("symbolic-ref", "HEAD", "refs/heads/main")
        branch = "main"
    if not repo.cfg(f"branch.{branch}.remote"):
        repo.git("config", "--local", f"branch.{branch}.remote", "origin")
        repo.git("config", "--local", f"branch.{branch}.merge", f"refs/heads/{branch}")
