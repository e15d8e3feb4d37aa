"""The hook's hot path: what it imports, and the hand-written readers that keep `re`
off it, checked against the patterns they replace."""
from __future__ import annotations

import re
import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from gitmemfs.core import memfile, rules

# The patterns the fast frontmatter reader used before it dropped `re` (the oracle).
KEY_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*):(?:[ \t]+(.*?))?[ \t]*$")
CHAR = "[^\x00-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]"
SAFE_PLAIN = re.compile(rf"^(?![ \-?:,\[\]{{}}#&*!|>'\"%@`]){CHAR}(?:(?!: | #){CHAR})*(?<![: ])$")
NON_STR = re.compile(r"(?i)^(?:y|n|yes|no|true|false|on|off|null|~|=|<<|[-+.0-9].*)$")
FLAT_SKILL = re.compile(r"^(?:memory/)?skills/[^/]+\.md$", re.IGNORECASE)

# Text biased towards the characters the readers care about.
TRICKY = st.text(alphabet=st.sampled_from(list("ab_-:# \t'\"?[]{}.0123y/sSkKmMdD\x85\x7f\x00\u017f\u0131\u0130"
                                               "\u212a\ufffe\u00e9")) | st.characters(), max_size=12
                 ).filter(lambda t: "\n" not in t)  # both readers get single lines (split, or sanitised)


@settings(max_examples=3000, deadline=None)
@given(TRICKY)
def test_key_line_matches_the_pattern(line: str) -> None:
    m = KEY_LINE.match(line)
    want = (m.group(1), m.group(2)) if m and m.group(2) else None
    assert memfile._key_line(line) == want


@settings(max_examples=3000, deadline=None)
@given(TRICKY)
def test_plain_scalar_tests_match_the_patterns(text: str) -> None:
    assert memfile._safe_plain(text) == bool(SAFE_PLAIN.match(text))
    if text:
        assert memfile._non_str(text) == bool(NON_STR.match(text)) or not text.isascii()


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(["memory/", "MEMORY/", "skills/", "sKills/", "\u017fkills/", "s\u212aills/",
                                 "x", "a.md", ".md", ".MD", "/", "\u0131", "\u212a"]), max_size=5).map("".join))
def test_flat_skill_matches_the_pattern(path: str) -> None:
    assert rules._flat_skill(path) == bool(FLAT_SKILL.match(path))


def test_description_line_breaks_become_spaces() -> None:
    assert memfile.sanitize_description(" a\r\nb\rc\nd ") == "a b c d"


def test_pre_commit_path_imports_no_heavy_module() -> None:
    """What the hook imports: none of re, enum, signal, typing, dataclasses, json, sh, yaml."""
    code = ("import sys; import gitmemfs.hookmain; "
            "print(' '.join(m for m in ('re', 'enum', 'signal', 'typing', 'dataclasses', 'json', 'sh', "
            "'yaml', 'functools', 'collections', 'subprocess') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-I", "-S", "-c", f"import sys; sys.path[:0] = {sys.path!r}; {code}"],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == ""
