"""`GitMemoryTool` in process against the SDK's own `BetaLocalFilesystemMemoryTool`, 100 files.

Both classes get the same 100 files under `/memories` and the same calls. View is a ratio
to the reference's own view in this run; a write is a ratio to the cost of one plain `git
commit` of the same kind of change in our repository (write the file, `git add`, `git
commit`, the installed hooks running), since a commit is what we add to the reference.
"""
from __future__ import annotations

import os
from typing import Any, Callable

from common import median_ms, sh

FIGURES = {
    "anthropic_view_ms": (None, "ms", "view of a file and of /memories, GitMemoryTool, 100 files"),
    "anthropic_view_ref_ms": (None, "ms", "the same views through BetaLocalFilesystemMemoryTool"),
    "anthropic_view_ratio": (2.0, "x", "GitMemoryTool view / the reference's view, same run"),
    "anthropic_create_ms": (None, "ms", "create (one commit), GitMemoryTool"),
    "anthropic_str_replace_ms": (None, "ms", "str_replace (one commit), GitMemoryTool"),
    "anthropic_plain_commit_ms": (None, "ms", "write + git add + git commit of one file, same repo and hooks"),
    "anthropic_create_over_commit": (1.0, "x", "create / one plain git commit"),
    "anthropic_str_replace_over_commit": (1.0, "x", "str_replace / one plain git commit"),
    "anthropic_adopt_ms": (None, "ms", "str_replace after a file was written beside the tool: two commits"),
    "anthropic_adopt_over_commit": (2.0, "x", "that outside change adopted plus the str_replace / one plain "
                                             "git commit"),
}

FILES = 100


def run(workdir: str, repeat: int) -> dict[str, float]:
    try:
        from anthropic.tools import BetaLocalFilesystemMemoryTool

        from gitmemfs.integrations.anthropic import GitMemoryTool
    except ImportError:  # the [anthropic] extra is not installed: nothing to measure
        return {}
    ref = BetaLocalFilesystemMemoryTool(os.path.join(workdir, "ref"))
    ours = GitMemoryTool(os.path.join(workdir, "ours"), git_dir=os.path.join(workdir, "ours.git"))
    for tool in (ref, ours):
        for i in range(FILES):
            tool.call({"command": "create", "path": f"/memories/topic{i // 10}/note{i:03d}.txt",
                       "file_text": f"fact number {i}\nline two\n"})
    repo = str(ours.memory_root)

    def views(tool: Any) -> Callable[[int], None]:
        def act(_i: int) -> None:
            tool.call({"command": "view", "path": "/memories/topic4/note042.txt"})
            tool.call({"command": "view", "path": "/memories"})
        return act

    view = median_ms(views(ours), repeat)
    view_ref = median_ms(views(ref), repeat)
    create = median_ms(lambda i: ours.call({"command": "create", "path": f"/memories/new/n{i + 1}.txt",
                                         "file_text": "new fact\n"}), repeat)
    edit = median_ms(lambda i: ours.call({"command": "str_replace", "path": "/memories/topic0/note000.txt",
                                       "old_str": f"fact number {0 if i < 0 else f'v{i}'}\n",
                                       "new_str": f"fact number v{i + 1}\n"}), repeat)

    def adopted(i: int) -> None:
        os.makedirs(os.path.join(repo, "hand"), exist_ok=True)
        with open(os.path.join(repo, "hand", f"h{i + 1}.txt"), "w") as fh:  # a person's file, beside the tool
            fh.write("written by hand\n")
        ours.call({"command": "str_replace", "path": "/memories/topic0/note001.txt",
                   "old_str": f"fact number {1 if i < 0 else f'a{i}'}\n", "new_str": f"fact number a{i + 1}\n"})

    adopt = median_ms(adopted, repeat)

    def plain_commit(i: int) -> None:
        rel = f"plain/p{i + 1}.txt"
        os.makedirs(os.path.join(repo, "plain"), exist_ok=True)
        with open(os.path.join(repo, rel), "w") as fh:
            fh.write("plain fact\n")
        sh("git", "add", "--", rel, cwd=repo)
        sh("git", "commit", "-q", "-m", f"plain {i + 1}", cwd=repo)

    commit = median_ms(plain_commit, repeat)
    return {"anthropic_view_ms": view, "anthropic_view_ref_ms": view_ref, "anthropic_view_ratio": view / view_ref,
            "anthropic_create_ms": create, "anthropic_str_replace_ms": edit, "anthropic_plain_commit_ms": commit,
            "anthropic_create_over_commit": create / commit, "anthropic_str_replace_over_commit": edit / commit,
            "anthropic_adopt_ms": adopt, "anthropic_adopt_over_commit": adopt / commit}
