"""The compiled memory a session starts with (`git memory compile --absolute` of
HEAD), kept for the commit it was made of.

Claude Code asks for it at every SessionStart (startup, resume, clear, compact),
and most of those find the memory where the last one left it. Compiling a
1,000-file memory means listing the tree, reading the core files through
`cat-file`, laying out the index and importing the compiler: most of the hook.
The text is a function of the commit, the settings passed to the compiler and
the compiler's own code, so it is kept in one file in the memory's cache folder
(core/cachedir.py: outside the git dir an agent's shell writes) under that key;
a key that differs in anything (another commit, memory.layout, core.quotePath,
the memory's folder, a hosted store's description, another release or an edited
module of core/ or view/)
compiles again and replaces it. Like compile's descriptions cache next to it, a
file that cannot be read or written is simply not used.
"""
from __future__ import annotations

import json
import os

from gitmemfs.core import cachedir, git

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

HEADER = "git-memfs projection 1 "  # bump when what the key covers changes
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def compiled(repo: Any) -> str:
    res = git.run(["rev-parse", "-q", "--verify", "HEAD^{commit}"], cwd=repo.root, check=False)
    head = res.out.strip() if res.code == 0 else ""
    if not head:  # unborn (or damaged: the compiler says which)
        return compile_text(repo, "HEAD")
    path = repo.cache(cachedir.PROJECTION)
    key = HEADER + json.dumps([head, repo.cfg("memory.layout"), repo.cfg_bool("core.quotePath", True),
                               repo.root, code_stamp(), compiler_store(repo)]) + "\n"
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            if fh.readline() == key:
                return fh.read()
    except (OSError, UnicodeDecodeError):
        pass
    text = compile_text(repo, head)
    tmp = f"{path}.{os.getpid()}.tmp"
    cachedir.prepare(path)
    try:
        with open(tmp, "w", encoding="utf-8", newline="") as fh:
            fh.write(key + text)
        os.replace(tmp, path)
    except OSError:  # read-only git dir, full disk: next time compiles again
        try:
            os.unlink(tmp)
        except OSError:
            pass
    return text


def compile_text(repo: Any, rev: str) -> str:
    from gitmemfs.core import snapshot
    from gitmemfs.view import compile as compiler

    snap = snapshot.load(repo.root, rev)
    layout = compiler.layout_of(snap, repo.cfg("memory.layout"))
    projection, _ = compiler.project(snap, root=repo.root, layout=layout,
                                     quote_path=repo.cfg_bool("core.quotePath", True),
                                     cache=repo.cache(cachedir.DESCRIPTIONS),
                                     hosted=compiler.hosted_store(repo.cfg))
    return projection.text


def compiler_store(repo: Any) -> dict[str, str] | None:
    """A hosted store's name and description (config, not the commit): part of the key."""
    from gitmemfs.view import compile as compiler

    return compiler.hosted_store(repo.cfg)


def code_stamp() -> str:
    """The release and the newest change to the modules the projection comes from
    (core/ reads and checks the files, view/ lays them out)."""
    from gitmemfs import __version__

    newest, size, count = 0, 0, 0
    for folder in ("core", "view"):
        try:
            with os.scandir(os.path.join(_PACKAGE, folder)) as entries:
                for entry in entries:
                    if entry.name.endswith(".py"):
                        st = entry.stat()
                        newest, size, count = max(newest, st.st_mtime_ns), size + st.st_size, count + 1
        except OSError:
            return f"{__version__} unknown {os.getpid()}"  # never matches: compile every time
    return f"{__version__} {newest} {size} {count}"
