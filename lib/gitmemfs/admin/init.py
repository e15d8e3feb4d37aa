"""`git memory init`: create (or adopt) a memory repository on branch `main`."""
from __future__ import annotations

import os
from typing import Mapping

from gitmemfs.core import git, memfile
from gitmemfs.core.errors import MemfsError
from gitmemfs.core.outcome import Outcome
from gitmemfs.core.repo import Repo, describe_git_dir, locate, read_config
from gitmemfs.core.writer import Change, WriteSession


def seeds() -> dict[str, str]:
    """The two files a new memory starts with (our own wording)."""
    return {"system/persona.md": PERSONA, "system/human.md": HUMAN}


PERSONA = memfile.render(
    "Who I am and how I work, in my own voice, with the values and habits I keep.",
    "I am an assistant with a long-term memory kept as files in a git repository.\n"
    "I keep that memory accurate and small: one fact in one place, dates written\n"
    "out in full, and a short, honest reason with every change I make.\n",
)
HUMAN = memfile.render(
    "What I know about the person I work with, what they prefer and what they are working on.",
    "Nothing recorded yet. When the user tells me about themselves, their preferences\n"
    "or their goals, I note it here with the date I learned it.\n",
)


def init(directory: str | None = None, *, memory_dir: str | None = None, agent_id: str | None = None,
         agent_name: str | None = None, remote: str | None = None,
         env: Mapping[str, str] | None = None, install_hooks: bool = True) -> Outcome:
    path = os.path.abspath(os.path.expanduser(directory)) if directory else locate(memory_dir, env)[0]
    found = describe_git_dir(path) if os.path.isdir(path) else None
    adopted = found is not None and os.path.realpath(found[0]) == os.path.realpath(path)
    if not adopted:
        if os.path.isdir(path) and os.listdir(path):
            raise MemfsError(f"memory init: {path} is not empty and not a git repository; choose an empty "
                             "directory, or run git init there and commit your files first")
        os.makedirs(path, exist_ok=True)
        git.run_light(["init", "-q", path], cwd=os.path.dirname(path) or ".")
        git.run_light(["symbolic-ref", "HEAD", "refs/heads/main"], cwd=path)
        found = describe_git_dir(path)
        assert found is not None
    top, git_dir, common = found
    repo = Repo(root=top, git_dir=git_dir, common_dir=common, config=read_config(top))
    _configure(repo, agent_id, agent_name, remote)
    hooks_note = _install_hooks(repo) if install_hooks else ""

    existing = repo.head()
    if existing:
        return Outcome(f"Reinitialized existing memory repository in {top}{hooks_note}",
                       extra={"path": top, "created": False, "commit": existing})
    with WriteSession(repo, tool="memory init") as session:
        changes = [Change(rel, text.encode()) for rel, text in seeds().items() if session.read(rel) is None]
        if not changes:
            raise MemfsError(f"memory init: {top} has no commits but already holds the seed files; "
                             "commit them with git commit")
        sha = session.commit(changes, op="init", reason="Initialize memory repository",
                             label="memory init")
    return Outcome(f"Initialized memory repository in {top} ({sha[:7]}){hooks_note}", sha,
                   [c.path for c in changes], extra={"path": top, "created": True})


def _configure(repo: Repo, agent_id: str | None, agent_name: str | None, remote: str | None) -> None:
    settings = {"memory.repo": "true"}
    if repo.cfg("memory.checkScope") is None:
        settings["memory.checkScope"] = "all"
    if agent_id:
        settings["memory.agentId"] = agent_id.strip()
    if agent_name:
        settings["memory.agentName"] = agent_name.strip()
    for key, value in settings.items():
        repo.git("config", "--local", key, value)
    if remote:
        current = repo.git("remote", "get-url", "origin", check=False)
        if current.code != 0:
            repo.git("remote", "add", "origin", remote)
            # main tracks origin/main, so `git memory sync` knows where to push.
            repo.git("config", "--local", "branch.main.remote", "origin")
            repo.git("config", "--local", "branch.main.merge", "refs/heads/main")
        elif current.out.strip() != remote:
            raise MemfsError(f"memory init: origin already points at {current.out.strip()}; change it "
                             f"with git remote set-url origin {remote}")
    repo.reload_config()


def _install_hooks(repo: Repo) -> str:
    try:
        from gitmemfs.gate import hooks
    except ImportError:  # hooks not built yet
        return ""
    return hooks.install_for_init(repo)
