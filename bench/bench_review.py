"""`git memory review` on a large memory: 10,000 files and 10,000 commits.

The package is the one users install (common.installed: `pip install .` into a fresh
venv, plus the [review] extra's packages), and the memory has what a person reviews:
two proposals (edits of a read_only file) and, where dreams can run here (Landlock),
a kept dream run, so the overview's Pending card previews them. The server runs as
the person starts it (pip's `git-memory review`, on 127.0.0.1); each
`_ms` figure is the median time of one page request over loopback, from sending it to
the last byte (the server's time plus a loopback round trip, well under a millisecond).
On a shared, loaded machine that wall time is mostly waiting for a core, so each page
also has a `_cpu_ms` figure: the CPU the server and the git processes it ran used for
one request (from /proc: utime + stime of the server and its waited-for children).
"""
from __future__ import annotations

import configparser
import json
import os
import subprocess
import sys
import urllib.parse
import urllib.request
from typing import Callable

from bench_history import _memfile, _trailers, fast_import_history

from common import ROOT, installed, median_ms, sh

FIGURES = {
    "review_overview_first_ms": (None, "ms", "review page: at a glance, its first request (compiles the prompt)"),
    "review_overview_ms": (300, "ms", "review page: at a glance, 10,000 files, 10,000 commits (again, "
                                      "the prompt's figures kept for the commit)"),
    "review_history_page_ms": (150, "ms", "review page: one history page (50 commits), 10,000 commits"),
    "review_history_last_page_ms": (None, "ms", "review page: the oldest history page, 10,000 commits"),
    "review_overview_cpu_ms": (None, "ms", "CPU of one overview request (server and its git processes)"),
    "review_history_page_cpu_ms": (None, "ms", "CPU of one history page request (server and its git processes)"),
    "review_pending_ms": (None, "ms", "review page: Pending, each item's diff, verdict and prompt size (again)"),
    "review_pending_items": (None, "", "items on the Pending page (2 proposals, a kept dream where dreams run)"),
    "review_files_ms": (None, "ms", "review page: the file tree (10,020 files, pinned and external)"),
    "review_file_ms": (None, "ms", "review page: one file, rendered, with its own history"),
    "review_commit_ms": (None, "ms", "review page: one commit and its word-level diff"),
    "review_search_ms": (None, "ms", "review page: a search over the memory"),
    "review_plots_ms": (None, "ms", "review page: size over time and edits per week, 10,000 commits"),
}
OTHERS = 3  # requests per view below: they have no budget, each is shown to work at this size
FILES = 10_000
COMMITS = 10_000


RULES = "system/rules.md"


def build(path: str, env: dict[str, str] | None = None) -> str:
    sh("git", "memory", "init", path, cwd=os.path.dirname(path), env=env)
    first = {f"notes/n{i:05d}.md": _memfile(f"Note {i}", f"Note {i}: fact {i}.\n") for i in range(FILES)}
    first.update({f"system/s{i}.md": _memfile(f"Pinned {i}", f"Pinned fact {i}.\n") for i in range(20)})
    first[RULES] = b"---\ndescription: Ground rules\nread_only: true\n---\nNever share secrets.\n"
    chain: list[tuple[str, dict[str, bytes | None]]] = [("bulk notes" + _trailers("create", "notes/"), first)]
    for n in range(1, COMMITS):
        rel = f"notes/n{n % FILES:05d}.md"
        chain.append((f"update note {n}" + _trailers("str_replace", rel),
                      {rel: _memfile(f"Note {n}", f"Note {n}: revised fact {n}.\n")}))
    fast_import_history(path, chain)
    sh("git", "reset", "-q", "--hard", cwd=path, env=env)  # the work tree at main, as a clone has it
    return path


def pending_items(repo: str, env: dict[str, str]) -> None:
    """Two proposals and (where a dream can run) a dream run kept for review."""
    agent = {**env, "AGENT_ID": "bench-agent", "MEMORY_DIR": repo}
    sh("git", "memory", "str_replace", RULES, "Never share secrets.", "Never share passwords.", "-m", "narrower",
       "--propose", cwd=repo, env=agent)
    sh("git", "memory", "insert", RULES, "1", "Be kind.", "-m", "kindness", "--propose", cwd=repo, env=agent)
    cmd = 'git memory create notes/dreamed.md "Dreamed a fact." -d "A dreamed note" -m "Add a dreamed note"'
    sh("git", "dream", "--agent", cmd, "--merge", "explicit", cwd=repo, env=env, check=False)


def with_review(env: dict[str, str]) -> dict[str, str]:
    """The [review] extra's packages in the installed venv (pip's own resolver)."""
    cfg = configparser.ConfigParser()
    cfg.read(os.path.join(ROOT, "setup.cfg"))
    wanted = [line.strip() for line in cfg["options.extras_require"]["review"].splitlines() if line.strip()]
    python = os.path.join(env["PATH"].split(os.pathsep)[0], "python")
    sh(python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *wanted, cwd=ROOT, env=env)
    return env


def run(workdir: str, repeat: int) -> dict[str, float]:
    env = with_review(dict(installed(workdir)))
    repo = build(os.path.join(workdir, "mem"), env)
    pending_items(repo, env)
    proc = subprocess.Popen(["git-memory", "review", "--no-browser", "--json"], cwd=repo, text=True,
                            stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env)
    try:
        info = json.loads(proc.stdout.readline() if proc.stdout else "{}")
        base = info["url"].split("/?")[0]
        token = urllib.parse.parse_qs(urllib.parse.urlsplit(info["url"]).query)["token"][0]

        def get(path: str) -> str:
            req = urllib.request.Request(base + path, headers={"Cookie": f"gitmemfs_review_{info['port']}={token}"})
            with urllib.request.urlopen(req, timeout=120) as res:
                assert res.status == 200
                return str(res.read().decode())

        def cpu_ms(path: str) -> float:
            before = _cpu(proc.pid)
            for _ in range(repeat):
                get(path)
            return (_cpu(proc.pid) - before) / repeat

        last = (COMMITS - 1) // 50
        first = median_ms(lambda _: get("/"), 1, warmup=0)
        items = get("/pending").count('class="pending"')
        return {"review_pending_items": items, "review_pending_ms": median_ms(lambda _: get("/pending"), repeat),
                "review_overview_first_ms": first, "review_overview_ms": median_ms(lambda _: get("/"), repeat),
                "review_history_page_ms": median_ms(lambda _: get("/history?page=1"), repeat),
                "review_history_last_page_ms": median_ms(lambda _: get(f"/history?page={last}"), repeat),
                "review_overview_cpu_ms": cpu_ms("/"), "review_history_page_cpu_ms": cpu_ms("/history?page=1"),
                **views(get)}
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def views(get: Callable[[str], str]) -> dict[str, float]:
    """The other views at this size, each checked for what it must show."""
    newest = get("/history").split('<a href="/commit/', 1)[1].split('"', 1)[0]
    checks = {"review_files_ms": ("/files", "more (search finds them)"),
              "review_file_ms": (f"/files?path={RULES}", "read_only"),
              "review_commit_ms": (f"/commit/{newest}", "<ins>"),
              "review_search_ms": ("/search?q=revised+fact+9999", "notes/n09999.md"),
              "review_plots_ms": ("/plots", "Edits per week")}
    out = {}
    for name, (path, expect) in checks.items():
        assert expect in get(path), (path, expect)
        out[name] = median_ms(lambda _, path=path: get(path), OTHERS, warmup=0)
    return out


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
