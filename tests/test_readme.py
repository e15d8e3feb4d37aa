"""The docs' examples are transcripts, and they run: every ```console block of
README.md and of each page under docs/ is one step of that page's transcript. A
page's `$ ` commands run in order from an empty home folder of its own (the docs'
/home/me, mapped to a temp folder), as a reader would type them: a page makes its
memory at ~/agent-memory itself (its set-up shown, collapsed in a <details> when long),
and each command's output must match what the page shows. Commands run in
~/agent-memory once it exists (the docs `cd` there after making it).

Matching: commit ids (7-64 hex digits) match any id; `…` matches any text (the
docs elide with it); the docs' home and repository paths stand for the temp ones.
A block that needs what a test machine lacks (a real hosted server, a specific
terminal) is preceded by `<!-- transcript: skip: REASON -->`. Hidden set-up
(`<!-- transcript: setup: … -->`, `<!-- transcript: fresh -->`, fixtures the page
does not show) is refused: a reader could not reproduce the page. A command
may open a here-document (`cat > ../x <<'EOF'`): its lines, through the closing word,
belong to the command.
"""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT

HOME = "/home/me"
REPO = "/home/me/agent-memory"


class Block:
    def __init__(self, line: int, text: str, skip: str | None, setup: list[str], fresh: bool = False):
        self.line = line
        self.skip = skip
        self.setup = setup
        self.fresh = fresh
        self.steps: list[tuple[str, list[str]]] = []  # (command, expected output lines)
        heredoc = None  # the word that ends a here-document the last command opened
        for raw in text.split("\n"):
            if heredoc is not None:  # the here-document is part of the command
                command, output = self.steps[-1]
                self.steps[-1] = (command + "\n" + raw, output)
                heredoc = None if raw == heredoc else heredoc
            elif raw.startswith("$ "):
                self.steps.append((raw[2:], []))
                opened = re.search(r"<<-?\s*(['\"]?)(\w+)\1", raw)
                heredoc = opened.group(2) if opened else None
            elif self.steps:
                self.steps[-1][1].append(raw)


def blocks(readme: str) -> list[Block]:
    out = []
    lines = readme.split("\n")
    i = 0
    skip: str | None = None
    setup: list[str] = []
    fresh = False
    while i < len(lines):
        line = lines[i]
        m = re.fullmatch(r"<!-- transcript: (skip|setup|fresh)(?:: (.*))? -->", line.strip())
        if m:
            if m.group(1) == "skip":
                skip = m.group(2)
            elif m.group(1) == "fresh":
                fresh = True
            else:
                setup.append(m.group(2))
        elif line.strip() == "```console":
            start = i + 1
            j = start
            while lines[j].strip() != "```":
                j += 1
            out.append(Block(start, "\n".join(lines[start:j]), skip, setup, fresh))
            skip, setup, fresh = None, [], False
            i = j
        elif line.startswith("```"):  # another kind of block: annotations do not carry over it
            skip, setup, fresh = None, [], False
        i += 1
    return out


def pattern(expected: list[str]) -> re.Pattern[str]:
    """The expected output as a regex: ids and `…` are wildcards."""
    text = "\n".join(expected).rstrip()
    parts = re.split(r"(…|\b[0-9a-f]{7,64}\b)", text)
    regex = "".join(".*?" if p == "…" else "[0-9a-f]{7,64}" if re.fullmatch(r"[0-9a-f]{7,64}", p)
                    else re.escape(p) for p in parts)
    return re.compile(regex, re.DOTALL)


def masked(output: str, home: Path) -> str:
    text = output.replace(str(home / "agent-memory"), REPO).replace(str(home), HOME)
    text = re.sub(r"\b\d{8}T\d{6}Z\b", "20250301T101500Z", text)  # backup ref stamps
    return "\n".join(line.rstrip() for line in text.rstrip().split("\n"))


DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def page_blocks(page: Path) -> list[Block]:
    return blocks(page.read_text(encoding="utf-8"))


def page_name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def test_the_pages_hold_the_examples() -> None:
    assert len(DOCS) >= 15, "README.md and the docs/ tree"
    assert page_blocks(ROOT / "README.md"), "the README shows a first edit"
    assert sum(len(page_blocks(page)) for page in DOCS) >= 10


def test_the_docs_index_links_every_page() -> None:
    index = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    for page in DOCS[1:]:
        relative = page.relative_to(ROOT / "docs").as_posix()
        if page.name != "README.md" and not relative.startswith("results/"):
            assert f"]({relative})" in index, f"docs/README.md does not link {relative}"


@pytest.mark.parametrize("page", DOCS, ids=page_name)
def test_relative_links_lead_to_files(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if not re.match(r"[a-z]+:", target):
            assert (page.parent / target).exists(), f"{page_name(page)} links {target}, which is not there"


@pytest.mark.parametrize("page", DOCS, ids=page_name)
def test_every_console_block_runs_or_says_why_not(page: Path) -> None:
    for block in page_blocks(page):
        assert block.steps, f"{page_name(page)} line {block.line}: a console block without a `$ ` command"
        assert block.skip is None or len(block.skip) > 10, f"{page_name(page)} line {block.line}: give the reason"
        assert not block.setup and not block.fresh, (
            f"{page_name(page)} line {block.line}: hidden set-up; show it in the page (a console block, in "
            "<details> when long) so a reader can run every block as written")


@pytest.mark.parametrize("page", [page for page in DOCS if page_blocks(page)], ids=page_name)
def test_transcripts(page: Path, tmp_path: Path) -> None:
    where = page_name(page)
    home = tmp_path / "home" / "me"
    home.mkdir(parents=True)
    env = {**os.environ, "HOME": str(home), "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"), "COLUMNS": "80",
           "CHECKOUT": str(ROOT)}
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Me\n\temail = me@example.com\n[init]\n\tdefaultBranch = main\n")
    for name in ("GIT_MEMFS_PYTHON",):
        env.pop(name, None)
    repo = home / "agent-memory"

    def sh(command: str) -> tuple[int, str]:
        # stdout and stderr in one stream, in the order a terminal shows them
        proc = subprocess.run(["bash", "-c", command], cwd=repo if repo.exists() else home, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              stdin=subprocess.DEVNULL, timeout=120)
        return proc.returncode, proc.stdout

    failures = []
    for block in page_blocks(page):
        if block.skip:
            continue
        for command, expected in block.steps:
            _, out = sh(command)
            got = masked(out, home)
            if not pattern(expected).fullmatch(got):
                failures.append(f"{where} line {block.line}: $ {command}\n--- {where}\n" + "\n".join(expected)
                                + f"\n--- actual\n{got}\n")
    assert not failures, "\n".join(failures)
