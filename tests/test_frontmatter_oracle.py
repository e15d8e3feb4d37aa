"""python-frontmatter as an independent oracle for our frontmatter parser (core/memfile.py).

Hypothesis builds memory files from frontmatter's parts: the delimiters, what comes
before them, keys (repeated or not) and every kind of YAML value. On a file our rules
accept, our metadata must be python-frontmatter's: the same keys, each value the same
string, or, where YAML types a plain scalar (`123`, `yes`, `2024-01-01`), the text
YAML types that way; the body is theirs once stripped. On a file we refuse, it must
refuse too (no metadata a memory file could have: our key rules applied to what it
read), or read it differently in one of the ways docs/development.md lists (the
`DIFFERENCES` below, one name per entry there).
"""
from __future__ import annotations

import json
from typing import Any

import frontmatter
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from conftest import ROOT
from fuzzkit import Tally, examples, profiles
from gitmemfs.core import memfile, rules

PURE, _E2E = examples(e2e=1)
pure, _slow = profiles(PURE, 1)
tally = Tally("frontmatter_oracle")
summary = tally.summary()

# The ways python-frontmatter reads a file we refuse, each listed in docs/development.md.
DIFFERENCES = {
    "duplicate-keys": "a key given twice: python-frontmatter keeps the last value",
    "leading-blank": "blank text before the opening `---`: python-frontmatter strips the file first",
    "long-delimiter": "a delimiter of four or more dashes: python-frontmatter takes it for `---`",
    "other-formats": "TOML (`+++`) or JSON (`{`) frontmatter: python-frontmatter reads those too",
}

WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -_.,'!?éü:#",
               min_size=0, max_size=16)
TYPED = ["true", "True", "yes", "no", "off", "false", "null", "~", "123", "-7", "1e3", "0x1f", "2024-01-01",
         "12:30", ".5", "+1"]
SCALAR = st.one_of(
    WORD,                                                    # plain, YAML-special characters and all
    st.sampled_from(TYPED),                                  # what YAML types
    WORD.map(json.dumps),                                    # double-quoted, escapes included
    WORD.map(lambda w: "'" + w.replace("'", "''") + "'"),    # single-quoted
    st.sampled_from(["|\n  line one\n  line two", ">\n  folded\n  text", "|-\n  one line",
                     "[a, b]", "{k: v}", "\n  - a\n  - b", '"a\\nb"', "&x anchored", "!!str 12", "a # comment"]),
)
KEY = st.sampled_from(["description", "read_only", "read_only", "limit", "limit", "title", "Description"])


@st.composite
def memory_files(draw: st.DrawFn) -> tuple[str, set[str]]:
    """(a file, which of DIFFERENCES its build used)."""
    used: set[str] = set()
    entries = draw(st.lists(st.tuples(KEY, SCALAR), min_size=0, max_size=draw(st.sampled_from([0, 2, 3]))))
    if draw(st.booleans()):  # half the files start as a memory file would
        entries.insert(draw(st.integers(0, len(entries))), ("description", draw(WORD.filter(str.strip))))
    if len({k for k, _ in entries}) < len(entries):
        used.add("duplicate-keys")
    lead = draw(st.sampled_from(["", "", "", "", "", "\n", " \n", "\t\n\n"]))
    if lead:
        used.add("leading-blank")
    opening = draw(st.sampled_from(["---"] * 6 + ["--- ", "---\t", "----", "+++", "{"]))
    closing = draw(st.sampled_from(["---"] * 6 + ["---  ", "-----", "+++", "}", ""]))
    if "----" in opening or "----" in closing:
        used.add("long-delimiter")
    if "+" in opening + closing or "{" in opening or "}" in closing:
        used.add("other-formats")
    eol = draw(st.sampled_from(["\n", "\n", "\r\n"]))
    body = draw(st.text(alphabet="abc \n-#:é", max_size=30))
    lines = [f"{key}: {value}" for key, value in entries]
    head = eol.join([opening, *(line.replace("\n", eol) for line in lines)] + ([closing] if closing else []))
    return lead + head + eol + body, used


def ours(text: str) -> memfile.MemFile | None:
    """Our reading of a memory file, None when our rules refuse it."""
    if rules.check_state("system/note.md", text.encode(), scope="all"):
        return None
    return memfile.parse(text)


def theirs(text: str) -> tuple[dict[str, Any], str] | None:
    """python-frontmatter's reading, None when it raises."""
    try:
        post = frontmatter.loads(text)
    except (yaml.YAMLError, ValueError):
        return None
    return dict(post.metadata), post.content


def a_memory_file(metadata: dict[str, Any]) -> bool:
    """Whether metadata, as python-frontmatter read it, is what a memory file holds:
    our key rules applied to its reading."""
    desc = metadata.get("description")
    return (set(metadata) <= set(memfile.ALLOWED_KEYS) and isinstance(desc, str) and bool(desc.strip())
            and "\n" not in desc.strip() and "\r" not in desc.strip())


def same_value(mine: memfile.Entry, value: Any) -> bool:
    """One entry against python-frontmatter's value: the same string, or the text
    that YAML types as that value (for us every scalar is text)."""
    if not mine.scalar:  # a list or a mapping (read_only's fail-closed protection)
        return isinstance(value, (list, dict))
    if isinstance(value, str):
        return mine.value == value
    return yaml.safe_load(mine.value or "") == value


@pure
@given(memory_files())
def test_our_metadata_is_python_frontmatters(case: tuple[str, set[str]]) -> None:
    text, used = case
    tally.tried("files")
    mine, read = ours(text), theirs(text)
    if mine is not None:
        tally.tried("accepted")
        assert read is not None, f"python-frontmatter raised on a file we accept: {text!r}"
        metadata, content = read
        tally.escaped("accepted", [e.key for e in mine.entries] == list(metadata),
                      f"keys differ: {[e.key for e in mine.entries]} != {list(metadata)} in {text!r}")
        for entry in mine.entries:
            tally.escaped("accepted", same_value(entry, metadata[entry.key]),
                          f"{entry.key}: ours {entry.value!r}, theirs {metadata[entry.key]!r} in {text!r}")
        tally.escaped("accepted", mine.description == str(metadata["description"]).strip()
                      or not isinstance(metadata["description"], str), f"description differs in {text!r}")
        tally.escaped("accepted", mine.body.strip() == content, f"body differs: {mine.body!r} vs {content!r}")
        return
    tally.tried("refused")
    refused_too = read is None or not a_memory_file(read[0])
    tally.escaped("refused", refused_too or bool(used),
                  f"python-frontmatter reads {read and read[0]!r} from a file we refuse, for no listed "
                  f"reason: {text!r}")


def test_the_listed_differences_are_real_and_in_the_docs() -> None:
    """Each difference happens on a file of its own (we refuse it, python-frontmatter
    reads a memory file's metadata), and docs/development.md lists each one."""
    shown = {
        "duplicate-keys": "---\ndescription: one\ndescription: two\n---\n",
        "leading-blank": "\n---\ndescription: one\n---\n",
        "long-delimiter": "----\ndescription: one\n----\n",
        "other-formats": '{\n"description": "one"\n}\n',
    }
    assert set(shown) == set(DIFFERENCES)
    docs = (ROOT / "docs" / "development.md").read_text()
    for name, text in shown.items():
        read = theirs(text)
        assert ours(text) is None and read is not None and a_memory_file(read[0]), name
        assert f"`{name}`" in docs, f"docs/development.md does not list {name}"


@pytest.mark.parametrize("text, description, read_only", [
    ("---\ndescription: Plain words\n---\nbody\n", "Plain words", None),
    ("---\ndescription: \"Quoted: with a colon\"\nread_only: true\n---\n", "Quoted: with a colon", True),
    ("---\r\ndescription: 'It''s CRLF'\r\n---\r\nbody\r\n", "It's CRLF", None),
    ("---\ndescription: 2024-01-01\n---\n", "2024-01-01", None),
])
def test_examples_both_read_alike(text: str, description: str, read_only: bool | None) -> None:
    mine, read = ours(text), theirs(text)
    assert mine is not None and read is not None
    assert mine.description == description and str(read[0]["description"]) == description
    assert read[0].get("read_only") == read_only and mine.read_only is bool(read_only)
