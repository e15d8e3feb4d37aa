"""Text from the memory made safe for a person's terminal: the one helper.

An agent writes descriptions, bodies, commit messages and (in old history) paths;
a control character among them (ESC, BEL, a C1 CSI) would move a person's cursor,
retitle the window or worse once printed; a bidirectional override (U+202E and
its kin, the "Trojan Source" characters) would make a person read text in another
order than it is. `visible` shows each as an escape (`\\x1b`, `\\x07`, `\\x9b`,
`\\u202e`), keeping newlines, tabs and CRLF line ends. Where it runs is decided at
the output boundary (cli/common.py, the hooks): docs/editing.md says which output is
escaped when.

On the edit and hook paths: no `re`, and text without a control character (nearly
all of it) costs one `min` over it.
"""
from __future__ import annotations

_ESCAPES = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7f, *range(0x80, 0xa0)) if chr(c) not in "\n\t"}
# Unicode's explicit direction marks, embeddings, overrides and isolates: the ones a
# terminal's bidi rendering acts on (Unicode TR9), never needed to show a script.
BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
_ESCAPES.update({c: f"\\u{c:04x}" for c in BIDI})
# For JSON: C0 is escaped by json itself; DEL and C1 are legal raw in JSON strings.
_JSON_ESCAPES = {c: f"\\u{c:04x}" for c in (0x7f, *range(0x80, 0xa0))}


def visible(text: str) -> str:
    """`text` with every control character (C0 but newline and tab, DEL, C1) and every
    bidirectional control escaped."""
    if text.isascii() and "\x7f" not in text \
            and min(text.replace("\n", " ").replace("\t", " "), default=" ") >= " ":
        return text  # the usual case, at C speed
    if "\r\n" in text:  # a CRLF file's line ends stay line ends
        return "\r\n".join(part.translate(_ESCAPES) for part in text.split("\r\n"))
    return text.translate(_ESCAPES)


def json_safe(encoded: str) -> str:
    """A JSON document (from json.dumps) with DEL and C1 characters as \\u escapes:
    the same value, and nothing a terminal would act on."""
    if encoded.isascii() and "\x7f" not in encoded:
        return encoded
    return encoded.translate(_JSON_ESCAPES)
