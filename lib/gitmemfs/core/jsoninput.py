"""JSON that a person or an agent hands us, read strictly.

Python's `json` takes the last of two equal keys (`{"command": "view", "command":
"delete"}` deletes), reads `NaN` and `Infinity`, turns `1e400` into infinity,
converts a number of any length (quadratic on Python 3.10) and recurses once per
nesting level until the interpreter's limit. Every JSON input (`git memory call`,
`.memfs.config.json`) goes through `loads`, which refuses all of these with one
sentence instead.
"""
from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterable

MAX_DEPTH = 64        # objects and arrays inside each other; tool calls use 2 or 3
MAX_DIGITS = 100      # in one number: no count, line or limit needs more


class JSONInputError(ValueError):
    """Not JSON we accept; the message says why (no position for the limits)."""


class DuplicateKey(JSONInputError):
    """A key given twice in one object, at any depth; `.key` is the key."""

    def __init__(self, key: str):
        super().__init__(f"the key {key!r} appears twice in one object; give each key once")
        self.key = key


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKey(key)
        out[key] = value
    return out


def _constant(name: str) -> float:
    raise JSONInputError(f"{name} is not a JSON number")


def _int(text: str) -> int:
    if len(text) > MAX_DIGITS:
        raise JSONInputError(f"a number of {len(text)} digits is too long (at most {MAX_DIGITS})")
    return int(text)


def _float(text: str) -> float:
    if len(text) > MAX_DIGITS:
        raise JSONInputError(f"a number of {len(text)} characters is too long (at most {MAX_DIGITS})")
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise JSONInputError(f"the number {text} is out of range")
    return value


def depth(value: Any) -> int:
    """How deeply objects and arrays nest in `value` (a scalar: 0), without recursion."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        children: Iterable[Any]
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        if level > MAX_DEPTH:
            break
        stack.extend((child, level + 1) for child in children)
    return deepest


def unique_keys(text: str | bytes) -> Any:
    """The value of `text` with only the duplicate-key rule (a protocol message: MCP's
    wire, stdio and HTTP alike): DuplicateKey, or JSONInputError for text that is not JSON."""
    try:
        return json.loads(text, object_pairs_hook=_pairs)
    except JSONInputError:
        raise
    except RecursionError:
        raise JSONInputError("it nests objects and arrays too deeply") from None
    except ValueError as exc:  # JSONDecodeError, bytes that are not UTF-8
        raise JSONInputError(str(exc)) from None


def loads(text: str | bytes) -> Any:
    """The value of `text`, or JSONInputError (a ValueError) saying what is wrong."""
    try:
        value = json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant,
                           parse_int=_int, parse_float=_float)
    except JSONInputError:
        raise
    except RecursionError:
        raise JSONInputError(f"it nests objects and arrays more than {MAX_DEPTH} deep") from None
    except json.JSONDecodeError as exc:
        raise JSONInputError(f"{exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except ValueError as exc:  # bytes that are not UTF-8, and the like
        raise JSONInputError(str(exc)) from None
    if depth(value) > MAX_DEPTH:
        raise JSONInputError(f"it nests objects and arrays more than {MAX_DEPTH} deep")
    return value
