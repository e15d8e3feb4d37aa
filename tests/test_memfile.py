"""Frontmatter parsing and rendering (pure functions)."""
from __future__ import annotations

import random
import string

import pytest
import yaml

from gitmemfs.core import memfile
from gitmemfs.core.memfile import FrontmatterError


def test_parse_splits_frontmatter_and_keeps_body_exact() -> None:
    text = "---\ndescription: Contacts\n---\n\n--- not a delimiter\n---\nbody  \n"
    mf = memfile.parse(text)
    assert mf.description == "Contacts"
    assert mf.body == "\n--- not a delimiter\n---\nbody  \n"
    assert memfile.render_file(mf) == text


@pytest.mark.parametrize("text,reason", [
    ("no frontmatter\n", "missing"),
    ("--- \ndescription: x\nnever closed\n", "unclosed"),
    ("---\n---\n", "description"),
    ("---\ndescription: '  '\n---\n", "description"),
    ("---\ndescription: [a\n---\n", "yaml"),
    ("---\n- a\n- b\n---\n", "not_mapping"),
    ("---\ndescription: a\ndescription: b\n---\n", "duplicate"),
])
def test_parse_errors(text: str, reason: str) -> None:
    with pytest.raises(FrontmatterError) as info:
        memfile.parse(text)
    assert info.value.reason == reason


def test_real_yaml_quotes_comments_and_block_scalars() -> None:
    mf = memfile.parse('---\n# a comment\ndescription: "Quoted: value"  # trailing\nread_only: "true"\n---\nb')
    assert mf.description == "Quoted: value" and mf.read_only
    mf = memfile.parse("---\ndescription: >\n  folded\n  text\n---\n")
    assert mf.description == "folded text"


@pytest.mark.parametrize("value,protected", [
    ("true", True), ("True", True), ('"true"', True), ("yes", True), ("on", True), ("'1'", True),
    ("maybe", True), ("[1]", True),
    ("false", False), ("no", False), ("'false'", False), ("0", False), ('""', False), ("", False),
    ("null", False), ("~", False),
])
def test_read_only_is_fail_closed(value: str, protected: bool) -> None:
    mf = memfile.parse(f"---\ndescription: d\nread_only: {value}\n---\n")
    assert mf.read_only is protected


def test_render_is_deterministic_and_quotes_only_when_needed() -> None:
    assert memfile.render("Plain words", "") == "---\ndescription: Plain words\n---\n"
    assert memfile.render("Plain words", "b") == "---\ndescription: Plain words\n---\nb"
    for tricky in ["yes", "no", "null", "123", "1.5", "a: b", "#tag", "x #y", "- item", "[list]", "{m}",
                   "'quoted'", '"dq"', "trailing:", "@at", "`tick`", "%pct", "&anchor", "*alias", "!tag",
                   "|pipe", ">fold", "?q", "naïve café", "tab\tinside", "2024-01-01"]:
        rendered = memfile.render(tricky, "")
        loaded = yaml.safe_load(rendered.split("---\n")[1])
        assert loaded == {"description": tricky}, (tricky, rendered)
        assert memfile.parse(rendered).description == tricky


def test_description_is_sanitized_to_one_line() -> None:
    assert memfile.render("a\r\nb\rc\n\nd", "").splitlines()[1] == "description: a b c  d"


def test_fast_path_agrees_with_yaml() -> None:
    rng = random.Random(7)
    alphabet = string.ascii_letters + string.digits + " .,;:#'\"-_/()[]{}!?@&*|>%`~é"
    for _ in range(3000):
        value = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12)))
        fm = f"description: {value}\nlimit: {rng.randint(0, 99)}\n"
        fast = memfile._fast_entries(fm)
        if fast is None:
            continue
        slow = memfile._yaml_entries(fm)
        assert [(e.key, e.value) for e in fast] == [(e.key, e.value) for e in slow], value


def test_encoding_problems() -> None:
    assert memfile.encoding_problem(b"\xff\xfeh\x00").kind == "utf16le"
    assert memfile.encoding_problem(b"\xfe\xff\x00h").kind == "utf16be"
    assert memfile.encoding_problem(b"a\x00b").kind == "nul"
    assert memfile.encoding_problem(b"\xc3\x28").kind == "utf8"
    assert memfile.encoding_problem(b"\xef\xbb\xbf---").kind == "bom"
    assert memfile.encoding_problem("héllo".encode()) is None


def test_crlf_round_trip() -> None:
    body, crlf = memfile.to_lf("a\r\nb\r\n")
    assert (body, crlf) == ("a\nb\n", True)
    assert memfile.from_lf(body, crlf) == "a\r\nb\r\n"
    assert memfile.to_lf("a\r\nb\n") == ("a\r\nb\n", False)
