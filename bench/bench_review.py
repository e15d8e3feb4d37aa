"""`git memory review` on a large memory: 10,000 files and 10,000 commits.

The server runs as the person starts it (bin/git-memory review, on 127.0.0.1); each
`_ms` figure is the median time of one page request over loopback, from sending it to
the last byte (the server's time plus a loopback round trip, well under a millisecond).
On a shared, loaded machine that wall time is mostly waiting for a core, so each page
also has a `_cpu_ms` figure: the CPU the server and the git processes it ran used for
one request (from /proc: utime + stime of the server and its waited-for children).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.parse
import urllib.request

from bench_history import _memfile, _trailers, fast_import_history

from common import median_ms, sh

FIGURES = {
    "review_overview_first_ms": (None, "ms", "review page: at a glance, its first request (compiles the prompt)"),
    "review_overview_ms": (300, "ms", "review page: at a glance, 10,000 files, 10,000 commits (again, "
                                      "the prompt's figures kept for the commit)"),
    "review_history_page_ms": (150, "ms", "review page: one history page (50 commits), 10,000 commits"),
    "review_history_last_page_ms": (None, "ms", "review page: the oldest history page, 10,000 commits"),
    "review_overview_cpu_ms": (None, "ms", "CPU of one overview request (server and its git processes)"),
    "review_history_page_cpu_ms": (None, "ms", "CPU of one history page request (server and its git processes)"),
}
FILES = 10_000
COMMITS = 10_000


def build(path: str) -> str:
    sh("git", "memory", "init", path, cwd=os.path.dirname(path))
    first = {f"notes/n{i:05d}.md": _memfile(f"Note {i}", f"Note {i}: fact {i}.\n") for i in range(FILES)}
    first.update({f"system/s{i}.md": _memfile(f"Pinned {i}", f"Pinned fact {i}.\n") for i in range(20)})
    chain: list[tuple[str, dict[str, bytes | None]]] = [("bulk notes" + _trailers("create", "notes/"), first)]
    for n in range(1, COMMITS):
        rel = f"notes/n{n % FILES:05d}.md"
        chain.append((f"update note {n}" + _trailers("str_replace", rel),
                      {rel: _memfile(f"Note {n}", f"Note {n}: revised fact {n}.\n")}))
    fast_import_history(path, chain)
    return path


def run(workdir: str, repeat: int) -> dict[str, float]:
    repo = build(os.path.join(workdir, "mem"))
    proc = subprocess.Popen(["git-memory", "review", "--no-browser", "--json"], cwd=repo, text=True,
                            stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        info = json.loads(proc.stdout.readline() if proc.stdout else "{}")
        base = info["url"].split("/?")[0]
        token = urllib.parse.parse_qs(urllib.parse.urlsplit(info["url"]).query)["token"][0]

        def get(path: str) -> None:
            req = urllib.request.Request(base + path, headers={"Cookie": f"gitmemfs_review_{info['port']}={token}"})
            with urllib.request.urlopen(req, timeout=120) as res:
                assert res.status == 200
                res.read()

        def cpu_ms(path: str) -> float:
            before = _cpu(proc.pid)
            for _ in range(repeat):
                get(path)
            return (_cpu(proc.pid) - before) / repeat

        last = (COMMITS - 1) // 50
        first = median_ms(lambda _: get("/"), 1, warmup=0)
        return {"review_overview_first_ms": first, "review_overview_ms": median_ms(lambda _: get("/"), repeat),
                "review_history_page_ms": median_ms(lambda _: get("/history?page=1"), repeat),
                "review_history_last_page_ms": median_ms(lambda _: get(f"/history?page={last}"), repeat),
                "review_overview_cpu_ms": cpu_ms("/"), "review_history_page_cpu_ms": cpu_ms("/history?page=1")}
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _cpu(pid: int) -> float:
    """utime + stime + cutime + cstime of `pid`, in ms."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    ticks = sum(int(f) for f in fields[11:15])
    return ticks * 1000 / os.sysconf("SC_CLK_TCK")


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        print(run(tmp, int(sys.argv[1]) if len(sys.argv) > 1 else 5))
