"""Search: recall on natural-language questions against plain BM25, and speed.

Recall: the conversations and questions of bench/recallset.py (written apart from the
ranker), stored one file per session and one file per five turns. Each question is asked
through `search()` (the engine `git memory search`, `call` and MCP use), limit 5; a hit is
the file holding the answer's turn among the first 1 or 5. The baseline is plain BM25
(the `rank_bm25` package's BM25Okapi, lower-cased word tokens, no tuning) over the same
files' text. The miss ratio is ours over BM25's at 5 (the bar: <= 0.8).

Speed, through `git memory search` end to end: a query on a 10,000-file memory with the
index present (warm), and the first search after a commit that changed one file (the
index brought up to date from the tree diff), as a ratio of the warm figure; and the time
to build the index of a 100,000-file memory from nothing.
"""
from __future__ import annotations

import os
import re
import subprocess
import time

import recallset
from bench_compile import build as build_100k
from bench_compile import fast_import

from common import median_ms, sh

FIGURES = {
    "recall_session_hit5": (None, "%", "hit@5 of search, one file per session (ours)"),
    "recall_session_hit5_bm25": (None, "%", "hit@5 of plain BM25 (rank_bm25), same files"),
    "recall_session_hit1": (None, "%", "hit@1 of search, one file per session"),
    "recall_session_hit1_bm25": (None, "%", "hit@1 of plain BM25, same files"),
    "recall_session_miss_ratio": (0.8, "x", "our misses at 5 over BM25's, session files"),
    "recall_turns5_hit5": (None, "%", "hit@5 of search, one file per five turns"),
    "recall_turns5_hit5_bm25": (None, "%", "hit@5 of plain BM25, five-turn files"),
    "recall_turns5_hit1": (None, "%", "hit@1 of search, five-turn files"),
    "recall_turns5_hit1_bm25": (None, "%", "hit@1 of plain BM25, five-turn files"),
    "recall_turns5_miss_ratio": (0.8, "x", "our misses at 5 over BM25's, five-turn files"),
    "search_10k_warm_ms": (150, "ms", "git memory search on 10,000 files, index present"),
    "search_after_commit_ratio": (1.2, "x", "first search after a one-file commit over search_10k_warm_ms"),
    "search_index_build_100k_s": (None, "s", "building the search index of a 100,000-file memory"),
}

_TOKEN = re.compile(r"\w+")


def _bm25_top(texts: dict[str, str], question: str, k: int) -> list[str]:
    from rank_bm25 import BM25Okapi

    paths = sorted(texts)
    model = _bm25_cache.get(id(texts))
    if model is None:
        model = _bm25_cache[id(texts)] = BM25Okapi([_TOKEN.findall(texts[p].lower()) for p in paths])
    scores = model.get_scores(_TOKEN.findall(question.lower()))
    ranked = sorted(range(len(paths)), key=lambda i: -scores[i])
    return [paths[i] for i in ranked[:k]]


_bm25_cache: dict[int, object] = {}


def recall(workdir: str, chunk: int | None) -> dict[str, float]:
    from gitmemfs.core.repo import open_repo
    from gitmemfs.view.search import search

    memories, questions = recallset.build()
    hits = {"ours1": 0, "ours5": 0, "bm1": 0, "bm5": 0}
    for mem in memories:
        path = os.path.join(workdir, f"{mem.name}-{chunk or 'session'}")
        sh("git", "memory", "init", "-q", path, cwd=workdir)
        texts = recallset.files(mem, chunk)
        fast_import(path, {p: t.encode() for p, t in texts.items()})
        repo = open_repo(path)
        for q in (q for q in questions if q.memory == mem.name):
            answer = recallset.answer_file(q, chunk)
            ours = [f.path for f in search(repo, q.text, limit=5).files]
            theirs = _bm25_top(texts, q.text, 5)
            hits["ours1"] += ours[:1] == [answer]
            hits["ours5"] += answer in ours
            hits["bm1"] += theirs[:1] == [answer]
            hits["bm5"] += answer in theirs
    n = len(questions)
    name = "session" if chunk is None else f"turns{chunk}"
    ours5, bm5 = hits["ours5"] / n, hits["bm5"] / n
    return {f"recall_{name}_hit5": 100 * ours5, f"recall_{name}_hit5_bm25": 100 * bm5,
            f"recall_{name}_hit1": 100 * hits["ours1"] / n, f"recall_{name}_hit1_bm25": 100 * hits["bm1"] / n,
            f"recall_{name}_miss_ratio": (1 - ours5) / max(1 - bm5, 1e-9)}


def _ten_thousand(path: str) -> str:
    sh("git", "memory", "init", "-q", path, cwd=os.path.dirname(path))
    words = ("harbour lantern orchard meadow copper violin glacier saffron tunnel willow falcon "
             "quartz ember prairie canyon thistle").split()
    files = {}
    for i in range(10000):
        body = " ".join(words[(i * 7 + j) % len(words)] for j in range(40)) + f" item {i}.\n"
        files[f"notes/d{i // 100:03d}/n{i:05d}.md"] = f"---\ndescription: Note {i}\n---\n{body}".encode()
    fast_import(path, files)
    sh("git", "reset", "-q", "--hard", "main", cwd=path)  # the work tree, for the edits below
    return path


def run(workdir: str, repeat: int) -> dict[str, float]:
    figures: dict[str, float] = {}
    if os.environ.get("BENCH_SEARCH_SPEED_ONLY") != "1":
        figures.update(recall(workdir, None))
        figures.update(recall(workdir, 5))

    def search(repo: str, *argv: str) -> None:
        proc = subprocess.run(["git", "memory", "search", *argv], cwd=repo, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"git memory search failed: {proc.stderr}")

    ten = _ten_thousand(os.path.join(workdir, "ten"))
    query = "copper lantern near the glacier"
    figures["search_10k_warm_ms"] = median_ms(lambda _: search(ten, query), repeat, warmup=2)

    def after_commit(i: int) -> None:
        target = os.path.join(ten, "notes/d000/n00000.md")
        with open(target, "a") as fh:
            fh.write(f"edit {i}\n")
        sh("git", "commit", "-q", "--no-verify", "-am", f"edit {i}", cwd=ten)
        start = time.perf_counter()
        search(ten, query)
        samples.append((time.perf_counter() - start) * 1000)

    samples: list[float] = []
    for i in range(max(repeat, 5)):
        after_commit(i)
    samples.sort()
    figures["search_after_commit_ratio"] = samples[len(samples) // 2] / figures["search_10k_warm_ms"]

    big = build_100k(os.path.join(workdir, "big"))
    start = time.perf_counter()
    search(big, "remembered fact")
    figures["search_index_build_100k_s"] = time.perf_counter() - start
    return figures


if __name__ == "__main__":
    import sys
    import tempfile

    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:0] = [here, os.path.join(os.path.dirname(here), "lib")]
    from common import hermetic_env

    with tempfile.TemporaryDirectory() as tmp:
        hermetic_env(tmp)
        print(run(tmp, int(os.environ.get("BENCH_REPEAT", "5"))))
