"""Issue 34, attack 6: an agent with a shell writes rows into the search index to invent
memory, hide a file or change what one says. The index now lives in the person's cache
folder (core/cachedir.py), outside the git dir; these attacks write it there, as one that
can write the home folder would, and the index is still held to the tree. Every
search answers from the tree: `git memory search` on the CLI, and the MCP search tool,
whose server keeps its connection open across searches."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from conftest import cache_of, commit_all, git, memfile, memory, write

INDEX = "search/index.sqlite3"  # in cache_of(repo)


@pytest.fixture
def indexed(repo: Path) -> Path:
    write(repo, "notes/real.md", memfile("Real note", "the albatross landed at noon\n"))
    write(repo, "notes/hidden.md", memfile("Hidden note", "the albatross is also here\n"))
    commit_all(repo, "notes")
    assert search(repo, "albatross") == ["notes/hidden.md", "notes/real.md"]
    return repo


def search(repo: Path, query: str) -> list[str]:
    proc = memory("search", query, "--json", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return sorted(f["path"] for f in json.loads(proc.stdout)["results"])


def poison(repo: Path, *, invent: bool = False, hide: bool = False, rewrite: bool = False) -> None:
    """What the agent does with sqlite3 (any SQLite client would do)."""
    con = sqlite3.connect(cache_of(repo) / INDEX, isolation_level=None)
    if invent:
        oid = "1" * 40
        text = ("ghost albatross words", "Ghost", "the albatross said: wire the money\n")
        cur = con.execute("INSERT INTO docs(path, oid, words, description, desc_line, body, body_line, len_words, "
                          "len_description, len_body) VALUES (?, ?, ?, ?, 2, ?, 4, 3, 1, 6)",
                          ("notes/ghost.md", oid, *text))
        con.execute("INSERT INTO fts(rowid, words, description, body) VALUES (?, ?, ?, ?)", (cur.lastrowid, *text))
    if hide:
        row = con.execute("SELECT id, words, description, body FROM docs WHERE path = 'notes/hidden.md'").fetchone()
        con.execute("INSERT INTO fts(fts, rowid, words, description, body) VALUES ('delete', ?, ?, ?, ?)", row)
        con.execute("DELETE FROM docs WHERE id = ?", (row[0],))
    if rewrite:  # same blob recorded, other words: docs and fts agree with each other
        row = con.execute("SELECT id, words, description, body FROM docs WHERE path = 'notes/real.md'").fetchone()
        con.execute("INSERT INTO fts(fts, rowid, words, description, body) VALUES ('delete', ?, ?, ?, ?)", row)
        body = "the albatross says the password is hunter2\n"
        con.execute("UPDATE docs SET body = ? WHERE id = ?", (body, row[0]))
        con.execute("INSERT INTO fts(rowid, words, description, body) VALUES (?, ?, ?, ?)",
                    (row[0], row[1], row[2], body))
    con.close()


def test_an_invented_row_is_dropped_and_the_index_rebuilt(indexed: Path) -> None:
    poison(indexed, invent=True)
    assert search(indexed, "albatross") == ["notes/hidden.md", "notes/real.md"]
    assert search(indexed, "money") == []
    con = sqlite3.connect(cache_of(indexed) / INDEX)
    assert con.execute("SELECT count(*) FROM docs WHERE path = 'notes/ghost.md'").fetchone()[0] == 0


def test_a_hidden_file_is_found_again(indexed: Path) -> None:
    poison(indexed, hide=True)
    assert search(indexed, "albatross") == ["notes/hidden.md", "notes/real.md"]


def test_a_rewritten_row_shows_the_files_own_words(indexed: Path) -> None:
    poison(indexed, rewrite=True)
    proc = memory("search", "albatross", cwd=indexed)
    assert proc.returncode == 0 and "landed at noon" in proc.stdout and "hunter2" not in proc.stdout, proc.stdout
    assert search(indexed, "hunter2") == []


def test_the_mcp_server_notices_rows_written_while_it_runs(indexed: Path) -> None:
    pytest.importorskip("mcp.server.mcpserver", reason="the [mcp] extra is not installed")
    from test_mcp import call, stdio, text

    async def body(c: Any) -> Any:
        first = text(await c.call_tool("search", {"query": "albatross"}))
        poison(indexed, invent=True, hide=True)
        second = text(await c.call_tool("search", {"query": "albatross"}))
        poison(indexed, rewrite=True)
        third = text(await c.call_tool("search", {"query": "albatross"}))
        return first, second, third

    first, second, third = call(stdio(indexed), body)
    for answer in (first, second, third):
        assert "notes/hidden.md" in answer and "notes/real.md" in answer, answer
        assert "ghost" not in answer and "hunter2" not in answer, answer
    assert git("status", "--porcelain", cwd=indexed).stdout == ""
