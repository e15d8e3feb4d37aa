"""`git memory init`: create (or adopt) a memory repository on branch `main`."""
from __future__ import annotations

import os
from typing import Mapping

from gitmemfs.core import durable, git, memfile, oserrors
from gitmemfs.core import layout as layouts
from gitmemfs.core.errors import MemfsError
from gitmemfs.core.outcome import Outcome
from gitmemfs.core.repo import Repo, describe_git_dir, locate, read_config
from gitmemfs.core.writer import Change, WriteSession


def seeds(layout: str = layouts.LETTA) -> dict[str, str]:
    """The files a new memory starts with (our own wording), in the layout's shape:
    letta: system/persona.md and system/human.md; letta-root: a root MEMORY.md
    index with persona.md and human.md beside it; plain: nothing."""
    if layout == layouts.PLAIN:
        return {}
    if layout == layouts.ROOT:
        return {
            layouts.INDEX: ROOT_INDEX,
            "persona.md": layouts.render_new(layout, "persona.md", PERSONA_DESCRIPTION, PERSONA_BODY),
            "human.md": layouts.render_new(layout, "human.md", HUMAN_DESCRIPTION, HUMAN_BODY),
        }
    return {"system/persona.md": PERSONA, "system/human.md": HUMAN}


PERSONA_DESCRIPTION = "Who I am and how I work, in my own voice, with the values and habits I keep."
PERSONA_BODY = ("I am an assistant with a long-term memory kept as files in a git repository.\n"
                "I keep that memory accurate and small: one fact in one place, dates written\n"
                "out in full, and a short, honest reason with every change I make.\n")
HUMAN_DESCRIPTION = "What I know about the person I work with, what they prefer and what they are working on."
HUMAN_BODY = ("Nothing recorded yet. When the user tells me about themselves, their preferences\n"
              "or their goals, I note it here with the date I learned it.\n")
PERSONA = memfile.render(PERSONA_DESCRIPTION, PERSONA_BODY)
HUMAN = memfile.render(HUMAN_DESCRIPTION, HUMAN_BODY)
ROOT_INDEX = ("# Memory\n\n"
              "Every Markdown file at this level is always in context. A folder holds memory\n"
              "only when it has its own MEMORY.md index.\n\n"
              "- [persona.md](persona.md): who I am and how I work\n"
              "- [human.md](human.md): the person I work with\n")


def init(directory: str | None = None, *, memory_dir: str | None = None, agent_id: str | None = None,
         agent_name: str | None = None, remote: str | None = None,
         env: Mapping[str, str] | None = None, install_hooks: bool = True,
         layout: str | None = None, personality: str | None = None) -> Outcome:
    path = os.path.abspath(os.path.expanduser(directory)) if directory else locate(memory_dir, env)[0]
    found = describe_git_dir(path) if os.path.isdir(path) else None
    adopted = found is not None and os.path.realpath(found[0]) == os.path.realpath(path)
    if not adopted:
        if os.path.lexists(path) and not os.path.isdir(path):
            raise MemfsError(f"memory init: {path} is a file, not a folder; choose a new or empty directory")
        if os.path.isdir(path) and os.listdir(path):
            raise MemfsError(f"memory init: {path} is not empty and not a git repository; choose an empty "
                             "directory, or run git init there and commit your files first")
        oserrors.make_folders(path, "memory init")
        git.run(["init", "-q", path], cwd=os.path.dirname(path) or ".")
        git.run(["symbolic-ref", "HEAD", "refs/heads/main"], cwd=path)
        found = describe_git_dir(path)
    if found is None:
        raise MemfsError(f"memory init: git made no repository at {path}")
    top, git_dir, common = found
    repo = Repo(root=top, git_dir=git_dir, common_dir=common, config=read_config(top))
    try:
        chosen = layouts.valid(layout)
    except ValueError as exc:
        raise MemfsError(f"memory init: {exc}") from None
    if chosen is not None and repo.head() and _layout_of(repo) != chosen:
        raise MemfsError(f"memory init: {top} already holds a {_layout_of(repo)} memory; a layout is "
                         "chosen when the repository is created (or set git config memory.layout)")
    _configure(repo, agent_id, agent_name, remote)
    _record_layout(repo, chosen)
    hooks_note = _install_hooks(repo) if install_hooks else ""

    existing = repo.head()
    if existing:
        return Outcome(f"Reinitialized existing memory repository in {top}{hooks_note}",
                       extra={"path": top, "created": False, "commit": existing})
    chosen = chosen or layouts.LETTA
    files = seeds(chosen)
    if personality is not None:
        from gitmemfs.admin import personality as personalities

        if chosen == layouts.PLAIN:
            raise MemfsError("memory init: --personality needs a Letta layout; a plain memory has no persona file")
        files.update(personalities.seeds(personality, chosen))
    if not files:
        return _empty_commit(repo, top, chosen, hooks_note)
    with WriteSession(repo, tool="memory init") as session:
        changes = [Change(rel, text.encode()) for rel, text in files.items() if session.read(rel) is None]
        if not changes:
            raise MemfsError(f"memory init: {top} has no commits but already holds the seed files; "
                             "commit them with git commit")
        sha = session.commit(changes, op="init", reason="Initialize memory repository",
                             label="memory init")
    return Outcome(f"Initialized memory repository in {top} ({sha[:7]}){hooks_note}", sha,
                   [c.path for c in changes], extra={"path": top, "created": True, "layout": chosen})


def _record_layout(repo: Repo, chosen: str | None) -> None:
    """The layout is recorded once, when the memory is made or adopted: plain (no file
    marks it) and letta-root (so deleting the root MEMORY.md cannot quietly turn it
    into the system/ layout). The system/ layout is the default and needs no record;
    a commit that adds or removes the root index is a layout change either way."""
    if repo.cfg(layouts.CONFIG_KEY):
        return
    name = chosen or (_layout_of(repo) if repo.head() else None)
    if name in (layouts.PLAIN, layouts.ROOT):
        repo.git("config", "--local", layouts.CONFIG_KEY, name)
        repo.reload_config()


def _layout_of(repo: Repo) -> str:
    return layouts.of_repo(repo)[0]


def _empty_commit(repo: Repo, top: str, layout: str, hooks_note: str) -> Outcome:
    """A layout without seed files (plain) still starts with a commit, so every
    command has a HEAD to read."""
    with WriteSession(repo, tool="memory init"):
        author = repo.author()
        args = (author.config() if author else []) + ["commit", "-q", "--allow-empty", "-m",
                                                      f"Initialize memory repository ({layout} layout)"]
        repo.git(*args)
        sha = repo.head() or ""
    return Outcome(f"Initialized memory repository in {top} ({sha[:7]}, {layout} layout){hooks_note}", sha,
                   [], extra={"path": top, "created": True, "layout": layout})


def _configure(repo: Repo, agent_id: str | None, agent_name: str | None, remote: str | None) -> None:
    settings = {"memory.repo": "true"}
    # An agent is told to run plain `git commit`: a global commit.gpgsign=true would make
    # that prompt for a key (or fail) in a memory that never signs (DESIGN §3). A local
    # choice (a person who signs approvals) is kept.
    if repo.git("config", "--local", "--get", "commit.gpgsign", check=False).code != 0:
        settings["commit.gpgsign"] = "false"
    if repo.cfg("memory.checkScope") is None:
        settings["memory.checkScope"] = "all"
    if agent_id:
        settings["memory.agentId"] = agent_id.strip()
    if agent_name:
        settings["memory.agentName"] = agent_name.strip()
    for key, value in settings.items():
        repo.git("config", "--local", key, value)
    durable.configure(repo.git, repo.config)  # a plain `git commit` there is durable too
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
