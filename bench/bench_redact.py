"""`git memory redact` on a 10,000-commit memory: a string in a few files across the
history replaced in every version, reflogs expired, objects pruned, the record made."""
from __future__ import annotations

import os
import subprocess
import time

from common import sh

FIGURES = {
    "redact_10000_commits_s": (None, "s", "git memory redact of one string, 10,000-commit memory (one run)"),
}


def _history(path: str, commits: int) -> None:
    sh("git", "memory", "init", "-q", path, cwd=os.path.dirname(path))
    chunks = []
    for n in range(commits):
        body = f"entry {n}" + (" token sk-bench-0123456789" if n % 2500 == 7 else "") + "\n"
        data = f"---\ndescription: Note {n % 100}\n---\n{body}"
        message = f"commit {n}"
        chunks.append(f"commit refs/heads/main\nauthor B <b@example.invalid> {1700000000 + n} +0000\n"
                      f"committer B <b@example.invalid> {1700000000 + n} +0000\n"
                      f"data {len(message)}\n{message}\n" + ("from refs/heads/main^0\n" if n == 0 else "")
                      + f"M 100644 inline notes/n{n % 100:02d}.md\ndata {len(data)}\n{data}\n")
    subprocess.run(["git", "fast-import", "--quiet"], cwd=path, input="".join(chunks).encode(), check=True)
    sh("git", "reset", "-q", "--hard", "main", cwd=path)


def run(workdir: str, repeat: int) -> dict[str, float]:
    path = os.path.join(workdir, "hist")
    _history(path, 10000)
    start = time.perf_counter()
    sh("git", "memory", "redact", "--text-file", "-", cwd=path, input="sk-bench-0123456789\n")
    return {"redact_10000_commits_s": time.perf_counter() - start}
