"""Property-based attacks on the JSON inputs (hypothesis), issue 24.

Every JSON a person or an agent hands us (`git memory call`, `.memfs.config.json`)
is read by core/jsoninput.py. The generator here writes JSON text itself (objects
as lists of pairs, so a key can repeat; nesting of any depth; numbers as text,
including NaN, Infinity, 1e400 and very long ones) and knows, independently of the
reader, whether each text has a duplicate key, nests over the limit or holds a
number JSON does not have. An escape is any of those accepted, a valid text read
as a different value, or any exception but the one refusal.

End to end: random payloads through `git memory call` (duplicate `command` keys,
deep nesting, every kind of `insert_line`), which must answer in one JSON object
with exit 0, 1 or 2, never an internal error, and change nothing unless the call
was a valid one (and then exactly the edit it asked for).

`make fuzz` sets GIT_MEMFS_FUZZ_JSON (examples per pure property) and
GIT_MEMFS_FUZZ_E2E (five times that many calls) and prints the count and the escapes.
"""
from __future__ import annotations

import json
import math
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from conftest import git, memfile, memory, write
from fuzzkit import Tally, examples, profiles
from gitmemfs.core import constraints, jsoninput

# Examples per pure property: GIT_MEMFS_FUZZ_JSON, else GIT_MEMFS_FUZZ (make fuzz sets both).
PURE, E2E = examples(e2e=4, pure_env="GIT_MEMFS_FUZZ_JSON")
pure, slow = profiles(PURE, E2E * 5)
TALLY = Tally("json")
summary = TALLY.summary()


def escaped(kind: str, ok: bool, detail: object) -> None:
    TALLY.tried(kind)  # every check here is one example
    TALLY.escaped(kind, ok, detail)


# -- a JSON writer that knows what it wrote ------------------------------------------------------

class Doc:
    """JSON text plus the facts the reader must find: the value (when valid), whether a
    key repeats in one object, the nesting depth, and a number JSON or we refuse."""

    def __init__(self, text: str, value: Any, dup: bool, depth: int, bad_number: bool):
        self.text = text
        self.value = value
        self.dup = dup
        self.depth = depth
        self.bad_number = bad_number

    @property
    def acceptable(self) -> bool:
        return not self.dup and self.depth <= jsoninput.MAX_DEPTH and not self.bad_number


# Numbers as text, with whether we must refuse them and their value otherwise.
GOOD_NUMBERS = st.one_of(
    st.integers(-10**30, 10**30).map(lambda n: (str(n), n)),
    st.floats(allow_nan=False, allow_infinity=False, width=64).map(lambda f: (repr(f), f)),
    st.sampled_from([("0", 0), ("-0", 0), ("1.5", 1.5), ("2.0", 2.0), ("1e3", 1000.0), ("1E-7", 1e-7),
                     ("-2.5e+2", -250.0), ("1e308", 1e308)]),
)
BAD_NUMBERS = st.one_of(
    st.sampled_from(["NaN", "Infinity", "-Infinity", "1e400", "-1e400", "1e309", "9" * 101, "-" + "1" * 150,
                     "1." + "0" * 120]),
    st.integers(101, 5000).map(lambda n: "7" * n),
)
KEYS = st.sampled_from(["command", "reason", "file_path", "insert_line", "a", "", "é", "\u0000x", "k\"q"])
SCALARS = st.one_of(st.none(), st.booleans(), st.text(max_size=12))


def scalar_doc(value: Any) -> Doc:
    return Doc(json.dumps(value), value, False, 0, False)


@st.composite
def docs(draw: st.DrawFn, level: int = 0) -> Doc:
    kind = draw(st.sampled_from(["scalar", "number", "bad", "list", "object"] if level < 4 else
                                ["scalar", "number", "bad"]))
    if kind == "scalar":
        return scalar_doc(draw(SCALARS))
    if kind == "number":
        text, value = draw(GOOD_NUMBERS)
        return Doc(text, value, False, 0, False)
    if kind == "bad":
        return Doc(draw(BAD_NUMBERS), None, False, 0, True)
    children = draw(st.lists(docs(level + 1), max_size=4))
    if kind == "list":
        doc = Doc("[" + ", ".join(c.text for c in children) + "]", [c.value for c in children],
                  any(c.dup for c in children), 1 + max((c.depth for c in children), default=0),
                  any(c.bad_number for c in children))
    else:
        keys = draw(st.lists(KEYS, min_size=len(children), max_size=len(children)))
        doc = Doc("{" + ", ".join(f"{json.dumps(k)}: {c.text}" for k, c in zip(keys, children)) + "}",
                  {k: c.value for k, c in zip(keys, children)},
                  len(set(keys)) < len(keys) or any(c.dup for c in children),
                  1 + max((c.depth for c in children), default=0), any(c.bad_number for c in children))
    # Now and then, bury it deep (the limit, just over it, or far past the interpreter's).
    wrap = draw(st.sampled_from([0] * 6 + [jsoninput.MAX_DEPTH - doc.depth, jsoninput.MAX_DEPTH + 1 - doc.depth,
                                           200, 1100, 5000]))
    if wrap > 0 and level == 0:
        as_list = draw(st.booleans())
        text = ("[" * wrap + doc.text + "]" * wrap) if as_list else ('{"a":' * wrap + doc.text + "}" * wrap)
        value = doc.value
        for _ in range(min(wrap, 100)):  # (only compared when within the limit)
            value = [value] if as_list else {"a": value}
        doc = Doc(text, value, doc.dup, doc.depth + wrap, doc.bad_number)
    return doc


def same(a: Any, b: Any) -> bool:
    """Equal as JSON values (0 and -0 alike; floats compared exactly)."""
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) \
            and a == b and math.isfinite(a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


@pure
@given(docs())
@example(Doc('{"command": "view", "command": "delete"}', None, True, 1, False))
@example(Doc("[" * 1000 + "]" * 1000, None, False, 1000, False))
@example(Doc('{"insert_line": 1e400}', None, False, 1, True))
def test_fuzz_the_json_reader_refuses_exactly_what_it_must(doc: Doc) -> None:
    try:
        value = jsoninput.loads(doc.text)
    except jsoninput.JSONInputError as exc:
        escaped("json_reader", not doc.acceptable, f"refused a valid text {doc.text[:200]!r}: {exc}")
        return
    except Exception as exc:  # noqa: BLE001 - any other failure is an escape
        escaped("json_reader", False, f"{type(exc).__name__} on {doc.text[:200]!r}")
        return
    escaped("json_reader", doc.acceptable and same(value, doc.value),
            f"accepted {doc.text[:200]!r} as {str(value)[:200]} (dup={doc.dup}, depth={doc.depth}, "
            f"bad_number={doc.bad_number})")


@pure
@given(docs(), st.sampled_from(["version", "maxDepth", "maxFileCharacters", "maxCoreMemoryCharacters",
                                "fileCharacterLimits", "protectedPaths"]), st.booleans())
def test_fuzz_the_limits_file_never_takes_a_duplicate_or_breaks(doc: Doc, key: str, twice: bool) -> None:
    """`.memfs.config.json` with a random value for a key, the key given once or twice."""
    body = f'"{key}": {doc.text}'
    text = "{" + (body + ", " + body if twice else body) + "}"
    try:
        raw = constraints.parse(text.encode())
    except constraints.ConstraintsError:
        escaped("limits_file", True, "")
        return
    except Exception as exc:  # noqa: BLE001
        escaped("limits_file", False, f"{type(exc).__name__} on {text[:200]!r}")
        return
    escaped("limits_file", not twice and doc.acceptable and same(raw[key], doc.value),
            f"accepted {text[:200]!r}")


# -- end to end: git memory call -----------------------------------------------------------------

@pytest.fixture(scope="module")
def seed_repo() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="fuzz-json-"))
    repo = folder / "seed"
    assert memory("init", str(repo), cwd=folder).returncode == 0
    write(repo, "notes/n.md", memfile("notes", "one\ntwo\nthree\n"))
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "seed", cwd=repo)
    yield repo
    shutil.rmtree(folder, ignore_errors=True)


def fresh(seed: Path) -> Path:
    target = Path(tempfile.mkdtemp(prefix="fuzz-json-repo-")) / "mem"
    shutil.copytree(seed, target, symlinks=True)
    return target


LINES = st.one_of(GOOD_NUMBERS, BAD_NUMBERS.map(lambda t: (t, None)),
                  st.sampled_from([('"2"', "2"), ("true", True), ("null", None), ("[1]", [1])]))


@slow
@given(line=LINES, dup=st.sampled_from([None, "view", "delete", "create"]), bury=st.sampled_from([0, 0, 70, 2000]))
@example(line=("2", 2), dup="delete", bury=0)
@example(line=("1.5", 1.5), dup=None, bury=0)
@example(line=("1e400", None), dup=None, bury=0)
@example(line=("2", 2), dup=None, bury=2000)
def test_fuzz_calls_with_odd_json(seed_repo: Path, line: tuple[str, Any], dup: str | None, bury: int) -> None:
    repo = fresh(seed_repo)
    try:
        fields = ['"command": "insert"', '"reason": "fuzz"', '"file_path": "notes/n.md"',
                  f'"insert_line": {line[0]}', '"insert_text": "NEW"']
        if dup:
            fields.append(f'"command": "{dup}"')
        payload = "{" + ", ".join(fields) + "}"
        if bury:
            payload = '{"name": "memory", "input": ' + '{"x": ' * bury + payload + "}" * bury + "}"
        before = git("rev-parse", "HEAD", cwd=repo).stdout
        text = (repo / "notes/n.md").read_text()
        proc = memory("--json", "call", cwd=repo, input=payload)
        out = proc.stdout + proc.stderr
        ok = proc.returncode in (0, 1, 2) and "internal error" not in out and "Traceback" not in out
        try:
            answer = json.loads(proc.stdout)
        except ValueError:
            answer = None
        ok = ok and isinstance(answer, dict)
        value = line[1]
        valid = (not dup and not bury and isinstance(value, (int, float)) and not isinstance(value, bool)
                 and float(value).is_integer())
        after = git("rev-parse", "HEAD", cwd=repo).stdout
        if valid:
            lines = ["one", "two", "three"]
            lines.insert(min(max(int(value), 1) - 1, 3), "NEW")
            ok = ok and proc.returncode == 0 and (repo / "notes/n.md").read_text() == memfile(
                "notes", "\n".join(lines) + "\n")
        else:
            ok = ok and proc.returncode != 0 and after == before and (repo / "notes/n.md").read_text() == text
        status = git("status", "--porcelain", cwd=repo).stdout
        escaped("call_json", ok and status == "", f"{payload[:300]!r} -> {proc.returncode} {out[:400]}")
    finally:
        shutil.rmtree(repo.parent, ignore_errors=True)
