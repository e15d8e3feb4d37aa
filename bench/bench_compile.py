"""What the agent sees: `git memory compile`, `tree` and `tokens` end to end on a
100,000-file memory repo (DESIGN §11: compile ≤ 2 s; tree held to the same bar).

The repo is written straight into the object store with `git fast-import` (a few
seconds) instead of through the work tree: 40 in-context files in nested
system/ folders, 100,000 external notes in 1,000 folders, a few skills.
"""
from __future__ import annotations

import os
import subprocess

from common import median_ms, sh

FILES = 100_000
SYSTEM_FILES = 40

FIGURES = {
    "compile_100k_ms": (2000, "ms", "git memory compile end to end, 100,000-file repo, cold"),
    "compile_100k_warm_ms": (2000, "ms", "the same with the description cache of the previous run"),
    "tree_100k_ms": (2000, "ms", "git memory tree end to end, 100,000-file repo"),
    "tokens_100k_ms": (None, "ms", "git memory tokens end to end, 100,000-file repo, warm"),
}


def _memfile(description: str, body: str) -> bytes:
    return f"---\ndescription: {description}\n---\n{body}".encode()


def files(count: int = FILES) -> dict[str, bytes]:
    out = {}
    for i in range(SYSTEM_FILES):
        body = "".join(f"Fact {j} about topic {i}: something worth keeping in mind.\n" for j in range(12))
        out[f"system/topic{i % 5}/sub{i % 3}/note{i:02d}.md"] = _memfile(f"In-context note {i}", body)
    for i in range(count):
        out[f"notes/d{i // 100:03d}/note{i:05d}.md"] = _memfile(
            f"Note number {i} about a remembered fact", f"Remembered fact number {i}.\n")
    for name in ("pdf", "search", "deploy"):
        out[f"skills/{name}/SKILL.md"] = _memfile(f"The {name} skill", "Steps.\n")
    return out


def fast_import(repo: str, content: dict[str, bytes], message: str = "bulk memory") -> None:
    """One commit on top of main holding `content`, written by `git fast-import`."""
    chunks = []
    for mark, (_, data) in enumerate(content.items(), start=1):
        chunks.append(b"blob\nmark :%d\ndata %d\n%s\n" % (mark, len(data), data))
    msg = message.encode()
    chunks.append(b"commit refs/heads/main\nauthor Bench <bench@example.com> 1700000000 +0000\n"
                  b"committer Bench <bench@example.com> 1700000000 +0000\n"
                  b"data %d\n%s\nfrom refs/heads/main^0\n" % (len(msg), msg))
    for mark, path in enumerate(content, start=1):
        chunks.append(b"M 100644 :%d %s\n" % (mark, path.encode()))
    subprocess.run(["git", "fast-import", "--quiet", "--force"], cwd=repo, input=b"".join(chunks),
                   check=True, capture_output=True)


def build(path: str, count: int = FILES) -> str:
    sh("git", "memory", "init", path, cwd=os.path.dirname(path))
    # Only the commit matters: compile, tree and tokens never look at the work tree.
    fast_import(path, files(count))
    return path


def run(workdir: str, repeat: int) -> dict[str, float]:
    repo = build(os.path.join(workdir, "mem"))
    repeat = min(repeat, 5)

    def memory(*argv: str) -> None:
        # Output to /dev/null, as a shell's $(...) would take it: capturing megabytes
        # into this Python process would time the harness, not the command.
        proc = subprocess.run(["git", "memory", *argv], cwd=repo, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"git memory {' '.join(argv)} failed: {proc.stderr}")

    from gitmemfs.core import cachedir  # where the installed package keeps it

    cache = cachedir.path(os.path.join(repo, ".git"), cachedir.DESCRIPTIONS)

    def cold(_: int) -> None:
        if os.path.exists(cache):
            os.unlink(cache)
        memory("compile")

    return {
        "compile_100k_ms": median_ms(cold, repeat),
        "compile_100k_warm_ms": median_ms(lambda _: memory("compile"), repeat),
        "tree_100k_ms": median_ms(lambda _: memory("tree"), repeat),
        "tokens_100k_ms": median_ms(lambda _: memory("tokens"), repeat),
    }
