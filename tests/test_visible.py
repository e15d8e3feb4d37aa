"""core/visible.py on its own: lookalikes shown as escapes, what a person expects drawn
kept, and the emoji ZWJ list (core/emojizwj.py) as Unicode's, through the `emoji` package."""
from __future__ import annotations

import pytest

from gitmemfs.core.visible import visible

LOOKALIKE = [
    ("S\u0430rah", "S\\u0430rah"),  # a Cyrillic а inside a Latin word
    ("p\u0430yp\u0430l.com", "p\\u0430yp\\u0430l.com"),
    ("call \u0405\u0430\u0455\u04bb\u0430 today", "call \\u0405\\u0430\\u0455\\u04bb\\u0430 today"),  # Ѕаѕһа, whole
    ("ask \U0001d412\U0001d41a\U0001d42b\U0001d41a\U0001d421", "ask " + "".join(
        f"\\U{c:08x}" for c in (0x1D412, 0x1D41A, 0x1D42B, 0x1D41A, 0x1D421))),  # mathematical bold
    ("\U0001d412arah", "\\U0001d412arah"),
    ("\uff33arah", "\\uff33arah"),  # fullwidth S
    ("Kelvin \u212a", "Kelvin \\u212a"),
    ("the Greek \u039a\u0391\u0399", "the Greek \\u039a\\u0391\\u0399"),  # ΚΑΙ in Latin text
    ("a\u00a0b c\u2009d e\u202ff", "a\\u00a0b c\\u2009d e\\u202ff"),
    ("x\u3000y", "x\\u3000y"),
    ("\U0001f525\u200d\U0001f525", "\U0001f525\\u200d\U0001f525"),  # no font joins these
    ("\U0001f469\u200d\U0001f525", "\U0001f469\\u200d\U0001f525"),
]
KEPT = [
    "\u041f\u0440\u0438\u0432\u0435\u0442, \u043a\u0430\u043a \u0434\u0435\u043b\u0430? \u0441\u043e\u0440",  # Russian
    "\u0395\u03bb\u03bb\u03b7\u03bd\u03b9\u03ba\u03ac and English",
    "na\u00efve caf\u00e9 Z\u00fcrich \u00c5ngstr\u00f6m",
    "\u6771\u4eac\u3000\u5927\u962a",  # an ideographic space in Japanese
    "\U0001f469\U0001f3fd\u200d\U0001f4bb \u2764\ufe0f\u200d\U0001f525 \U0001f3f3\ufe0f\u200d\U0001f308 "
    "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466 \U0001f525\U0001f469\u200d\U0001f4bb",
    "\U0001f9d1\U0001f3fb\u200d\U0001f91d\u200d\U0001f9d1\U0001f3ff \u2764\u200d\U0001f525",  # unqualified too
]


@pytest.mark.parametrize("text,shown", LOOKALIKE)
def test_lookalikes_are_escaped(text: str, shown: str) -> None:
    assert visible(text) == shown


@pytest.mark.parametrize("text", KEPT)
def test_scripts_and_sequences_a_person_expects_are_drawn(text: str) -> None:
    assert visible(text) == text


def test_the_emoji_zwj_list_is_unicodes() -> None:
    """core/emojizwj.py is what tools/make_emoji_zwj.py writes from the installed `emoji`
    package: stale when the package moved on (run `make emoji`)."""
    pytest.importorskip("emoji", reason="the emoji package comes with the [dev] extra")
    import importlib.util
    import os

    tool = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools", "make_emoji_zwj.py")
    spec = importlib.util.spec_from_file_location("make_emoji_zwj", tool)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with open(module.OUT, encoding="utf-8") as fh:
        assert fh.read() == module.render(), "core/emojizwj.py is stale: run make emoji"
