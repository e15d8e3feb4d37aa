"""Reading history: `git memory search` at HEAD on 100,000 files and over a 1,000-commit
history, `git memory log` of one file in a 10,000-commit history, and a retrieval
check with known answers (recall@5 of search over 200 planted facts).

Repositories are written with `git fast-import` (seconds, not minutes); the commands
run end to end through bin/, except the recall check, which asks its 200 questions
through the same Python API in one process.
"""
from __future__ import annotations

import os
import random
import subprocess
import sys

from bench_compile import build as build_100k

from common import median_ms, sh

FIGURES = {
    "search_100k_ms": (1000, "ms", "git memory search, a literal phrase at HEAD, 100,000-file repo"),
    "search_history_1000_ms": (None, "ms", "git memory search --history, 1,000-commit history of 200 files"),
    "log_file_10000_ms": (500, "ms", "git memory log PATH (follows renames), 10,000-commit history"),
    "search_100k_vs_git_grep": (None, "x", "search_100k_ms over a bare git grep of the same phrase (same run)"),
    "log_file_vs_git_log": (None, "x", "log_file_10000_ms over a bare git log --follow of the same file"),
    "search_recall_at_5": (None, "%", "recall@5 of search: 2,000 files, 200 planted facts, keyword "
                                      "questions (aim >= 90)"),
}


def _memfile(description: str, body: str) -> bytes:
    return f"---\ndescription: {description}\n---\n{body}".encode()


def fast_import_history(repo: str, commits: list[tuple[str, dict[str, bytes | None]]]) -> None:
    """A chain of commits on main, each setting (or deleting: None) some files."""
    out = []
    for n, (message, files) in enumerate(commits):
        msg = message.encode()
        out.append(b"commit refs/heads/main\nauthor Bench <bench@example.com> %d +0000\n"
                   b"committer Bench <bench@example.com> %d +0000\ndata %d\n%s\n"
                   % (1700000000 + n, 1700000000 + n, len(msg), msg))
        if n == 0:
            out.append(b"from refs/heads/main^0\n")
        for path, data in files.items():
            if data is None:
                out.append(b"D %s\n" % path.encode())
            else:
                out.append(b"M 100644 inline %s\ndata %d\n%s\n" % (path.encode(), len(data), data))
    subprocess.run(["git", "fast-import", "--quiet", "--force"], cwd=repo, input=b"".join(out), check=True,
                   capture_output=True)
    sh("git", "reset", "-q", "--hard", "main", cwd=repo)


def _trailers(op: str, path: str) -> str:
    return f"\n\nMemory-Op: {op}\nMemory-Path: {path}\n"


def history_repo(path: str, commits: int, files: int) -> str:
    """`commits` edits spread over `files` notes; every 50th commit deletes a note."""
    sh("git", "memory", "init", path, cwd=os.path.dirname(path))
    chain: list[tuple[str, dict[str, bytes | None]]] = []
    alive: set[int] = set()
    for n in range(commits):
        i = n % files
        rel = f"notes/n{i:03d}.md"
        if n % 50 == 49 and i in alive:
            chain.append((f"drop note {i}" + _trailers("delete", rel), {rel: None}))
            alive.discard(i)
            continue
        body = f"Note {i}, revision {n}: the codeword was word{n}.\n"
        chain.append((f"update note {i}" + _trailers("str_replace", rel), {rel: _memfile(f"Note {i}", body)}))
        alive.add(i)
    fast_import_history(path, chain)
    return path


# -- the retrieval check -----------------------------------------------------------------------

SYLLABLES = ["ka", "lo", "mi", "ren", "tu", "vax", "zel", "qua", "dor", "fin", "gar", "hul", "jin", "pex",
             "sor", "wyn", "bri", "cal", "nox", "ule"]
ATTRIBUTES = ["passport number", "favourite colour", "home town", "bank branch", "licence plate",
              "blood type", "shoe size", "locker code", "dentist", "wifi password"]
FILLER = ("the project meeting moved to thursday and everyone agreed on the plan while notes about "
          "budget travel lunch code review deadlines and the weekly report were shared with the team").split()


def recall_memory(seed: int = 15) -> tuple[dict[str, bytes], list[tuple[str, str]]]:
    """2,000 files; 200 hold a planted fact `<Name>'s <attribute> is <value>.`; 200 questions
    `<name> <attribute>` whose answer file is known. Distractors name the same people
    and the same attributes, just never together as the fact."""
    rng = random.Random(seed)
    names: list[str] = []
    while len(names) < 200:
        name = "".join(rng.choice(SYLLABLES) for _ in range(3)).capitalize()
        if name not in names:
            names.append(name)
    files: dict[str, bytes] = {}
    questions = []
    slots = rng.sample(range(2000), 200)
    for k, slot in enumerate(slots):
        attr = ATTRIBUTES[k % len(ATTRIBUTES)]
        value = f"{rng.randrange(10**5, 10**6)}"
        questions.append((f"{names[k].lower()} {attr.split()[0]}", f"people/p{slot:04d}.md"))
        files[f"people/p{slot:04d}.md"] = (names[k], attr, value)  # type: ignore[assignment]
    out: dict[str, bytes] = {}
    for i in range(2000):
        rel = f"people/p{i:04d}.md"
        lines = [" ".join(rng.choice(FILLER) for _ in range(12)) + "." for _ in range(rng.randrange(5, 25))]
        # Distractors: other people and attributes mentioned on their own lines.
        for _ in range(3):
            lines.insert(rng.randrange(len(lines) + 1), f"Met {rng.choice(names)} at the {rng.choice(FILLER)}.")
        lines.insert(rng.randrange(len(lines) + 1), f"Asked about the {rng.choice(ATTRIBUTES)} again.")
        if rel in files:
            name, attr, value = files[rel]  # type: ignore[misc]
            lines.insert(rng.randrange(len(lines) + 1), f"{name}'s {attr} is {value}.")
        out[rel] = _memfile(f"Notes page {i}", "\n".join(lines) + "\n")
    return out, questions


def recall_at_5(workdir: str) -> float:
    from bench_compile import fast_import

    path = os.path.join(workdir, "recall")
    sh("git", "memory", "init", path, cwd=workdir)
    content, questions = recall_memory()
    fast_import(path, content)
    from gitmemfs.core.repo import open_repo
    from gitmemfs.view.search import search

    repo = open_repo(path)
    found = 0
    for query, answer in questions:
        top = [f.path for f in search(repo, query, limit=5).files]
        found += answer in top
    return 100.0 * found / len(questions)


def run(workdir: str, repeat: int) -> dict[str, float]:
    repeat = min(repeat, 5)

    def memory(repo: str, *argv: str) -> None:
        proc = subprocess.run(["git", "memory", *argv], cwd=repo, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"git memory {' '.join(argv)} failed: {proc.stderr}")

    big = build_100k(os.path.join(workdir, "big"))
    figures = {"search_100k_ms": median_ms(lambda _: memory(big, "search", "remembered fact number 77777"),
                                           repeat)}
    figures["search_100k_vs_git_grep"] = figures["search_100k_ms"] / median_ms(
        lambda _: sh("git", "grep", "-n", "-F", "-i", "-e", "remembered fact number 77777", "HEAD", cwd=big),
        repeat)
    hist = history_repo(os.path.join(workdir, "hist"), 1000, 200)
    figures["search_history_1000_ms"] = median_ms(lambda _: memory(hist, "search", "--history", "word449"),
                                                  repeat)
    long = history_repo(os.path.join(workdir, "long"), 10000, 100)
    figures["log_file_10000_ms"] = median_ms(lambda _: memory(long, "log", "notes/n042.md"), repeat)
    figures["log_file_vs_git_log"] = figures["log_file_10000_ms"] / median_ms(
        lambda _: sh("git", "log", "--follow", "--oneline", "--", "notes/n042.md", cwd=long), repeat)
    figures["search_recall_at_5"] = recall_at_5(workdir)
    return figures


if __name__ == "__main__":
    import tempfile

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
    with tempfile.TemporaryDirectory() as tmp:
        print(run(tmp, 3))
