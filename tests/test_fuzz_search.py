"""Property-based attacks on search's query reading (hypothesis), issue 24.

Pure properties over the in-process engine, many examples: any one-line text as a
ranked query is read into FTS5's query language without ever breaking it (no syntax
error, no injected operator, no column filter of the attacker's), and returns only
files that hold a query word; any text as a regex is either compiled or refused with
a usage error, never an exception of another kind. One end-to-end property through
`git memory search --regex --history` with patterns built to backtrack: refused by
the deadline, never a hang. `make fuzz` sets GIT_MEMFS_FUZZ (examples per pure
property); `make test` runs a fixed sample.
"""
from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from conftest import commit_all, git, memfile, memory, write
from fuzzkit import examples, profiles
from gitmemfs.core.errors import UsageError
from gitmemfs.view import regexbound, searchindex
from gitmemfs.view.search import Query, _rank_in

PURE, E2E = examples(e2e=3)
pure, slow = profiles(PURE, E2E)

DOCS = {
    "notes/a.md": "---\ndescription: Alpha notes\n---\nThe quick brown fox.\nNEAR AND OR NOT words.\n",
    "notes/b.md": "---\ndescription: Beta\n---\ncolumn:filter \"quoted\" text * ^ { }\n",
    "system/c.md": "---\ndescription: Pinned\n---\nCafé naïve résumé 東京 emoji 🙂\n",
}
SCRATCH = searchindex.scratch()
for _path, _text in DOCS.items():
    searchindex.add(SCRATCH, _path, "0" * 40, _text)

one_line = st.text(st.characters(blacklist_characters="\n\0", blacklist_categories=("Cs",)), min_size=1,
                   max_size=80).filter(str.strip)


@pure
@given(text=one_line)
@example(text='" OR body : x NOT "')
@example(text="NEAR(a b, 1) AND *")
@example(text="description: beta")
@example(text="the and of")
def test_fuzz_any_text_is_a_safe_ranked_query(text: str) -> None:
    q = Query(text)
    if not q.words:
        return  # the literal fallback takes it (git grep -F: no query language)
    for where in ("all", "path", "description", "body"):
        try:
            files, total = _rank_in(SCRATCH, q, where, [], "rank")
        except sqlite3.Error as exc:  # the query language broken by the text
            raise AssertionError(f"{text!r} broke the FTS5 query: {exc}") from None
        assert total >= len(files)
        for f in files:
            assert q.terms_in(f.description + "\n" + DOCS[f.path]) or q.terms_in(f.path), (text, f.path)


@pure
@given(pattern=st.text(max_size=40))
@example(pattern="(a+)+$")
@example(pattern="(" * 200)
@example(pattern="a{99999999999}")
def test_fuzz_any_regex_compiles_or_is_a_usage_error(pattern: str) -> None:
    try:
        regexbound.compile_checked(pattern, True)
    except UsageError:
        pass


backtracking = st.builds(lambda core, rep, tail: f"({core}{rep}){rep}{tail}",
                         st.sampled_from(["a", "a|a", "a|aa", "\\w", "[ab]"]), st.sampled_from(["+", "*"]),
                         st.sampled_from(["$", "b$", "c", "\\d"]))


@slow
@given(pattern=backtracking)
def test_fuzz_backtracking_patterns_are_stopped_in_history(tmp_path_factory: pytest.TempPathFactory,
                                                           pattern: str) -> None:
    repo: Path = tmp_path_factory.mktemp("fuzzsearch") / "mem"
    assert memory("init", "-q", str(repo), cwd=repo.parent).returncode == 0
    write(repo, "notes/a.md", memfile("As", "a" * 36 + "!\n"))
    commit_all(repo, "as")
    git("config", "memory.regexTimeout", "1", cwd=repo)
    proc = memory("search", "--regex", "--history", pattern, cwd=repo, timeout=60)
    assert proc.returncode in (0, 1), proc.stderr
    if proc.returncode == 1:
        assert proc.stderr.startswith("error: search: the regular expression") and "limit" in proc.stderr
