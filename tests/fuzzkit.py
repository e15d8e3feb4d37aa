"""What the property-based attack files share: how many examples to run, hypothesis
profiles, and the tally each file prints at its end.

`make test` runs a fixed, bounded sample (derandomized, so CI is repeatable); `make fuzz`
sets GIT_MEMFS_FUZZ (examples per pure property) and GIT_MEMFS_FUZZ_E2E (per end-to-end
one) and explores anew. Each file prints `fuzz (NAME): {"examples": N, "escapes": 0, ...}`
and writes that line to $GIT_MEMFS_FUZZ_<NAME>_REPORT when set.
"""
from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Callable, Iterator

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

FIXED = not os.environ.get("GIT_MEMFS_FUZZ")


def examples(e2e: int, *, pure_env: str = "GIT_MEMFS_FUZZ") -> tuple[int, int]:
    """(examples per pure property, per end-to-end property)."""
    pure = os.environ.get(pure_env) or os.environ.get("GIT_MEMFS_FUZZ") or 300
    return int(pure), int(os.environ.get("GIT_MEMFS_FUZZ_E2E") or e2e)


def profiles(pure: int, e2e: int) -> tuple[settings, settings]:
    """Hypothesis settings for the fast properties and for the slow ones (real git)."""
    common = {"deadline": None, "database": None, "derandomize": FIXED}
    return (settings(max_examples=pure, **common,  # type: ignore[arg-type]
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]),
            settings(max_examples=e2e, **common,  # type: ignore[arg-type]
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                            HealthCheck.filter_too_much]))


class Tally:
    """Examples tried and escapes found, per property, for one file's summary line."""

    def __init__(self, name: str):
        self.name = name
        self.count: Counter[str] = Counter()
        self.escapes: Counter[str] = Counter()

    def tried(self, kind: str) -> None:
        """One example of a property, counted once however many checks it makes."""
        self.count[kind] += 1

    def escaped(self, kind: str, ok: bool, detail: object) -> None:
        """A check of an example: an escape is counted, and fails the test."""
        if not ok:
            self.escapes[kind] += 1
        assert ok, detail

    def summary(self) -> Callable[[], Iterator[None]]:
        """A module fixture that prints (and reports) the tally when the file is done."""
        @pytest.fixture(scope="module", autouse=True)
        def summary() -> Iterator[None]:
            yield
            line = json.dumps({"examples": sum(self.count.values()), "escapes": sum(self.escapes.values()),
                               "per_property": dict(self.count)})
            print(f"\nfuzz ({self.name}): {line}")
            out = os.environ.get(f"GIT_MEMFS_FUZZ_{self.name.upper()}_REPORT")
            if out:
                Path(out).write_text(line + "\n")
        return summary


# -- memory paths at and past the bounds (core/entries.py) --------------------------------------

# Letters (one of them two bytes in UTF-8) and the characters a terminal acts on; no '.', ' ',
# '\\' or '~', so a name is refused for its bounds or its characters, never for its spelling.
CONTROLS = "\x1b\x07\x00\x08\r\n\t\x7f\x9b\x85"
_NAME_CHARS = "abcdé" + CONTROLS


def path_strategy(max_depth: int = 40, max_name: int = 300) -> st.SearchStrategy[str]:
    """Paths ending in `.md`: how deep, how long a name, and whether a control character
    is in it are what varies, each drawn on both sides of its bound."""
    name = st.one_of(
        st.integers(1, max_name).map(lambda n: "a" * n),
        st.text(st.sampled_from(_NAME_CHARS), min_size=1, max_size=12),
        st.text(st.sampled_from("abcdé"), min_size=1, max_size=12),
    )
    return st.lists(name, min_size=1, max_size=max_depth).map(lambda parts: "/".join(parts) + ".md")


def path_over_bounds(path: str) -> bool:
    """An oracle of our own for the bounds (not entries' code): deeper than 32, a name
    over 255 bytes, over 512 bytes in all, or a C0, DEL or C1 character."""
    parts = path.split("/")
    too_long = any(len(p.encode("utf-8", "surrogatepass")) > 255 for p in parts)
    control = any(ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0 for c in path)
    return len(parts) > 32 or len(path.encode("utf-8", "surrogatepass")) > 512 or too_long or control
