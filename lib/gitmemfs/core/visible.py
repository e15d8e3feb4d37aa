"""Text from the memory made safe for a person to read: the one helper.

An agent writes descriptions, bodies, commit messages and (in old history) paths;
a control character among them (ESC, BEL, a C1 CSI) would move a person's cursor,
retitle the window or worse once printed; a bidirectional override (U+202E and
its kin, the "Trojan Source" characters) would make a person read text in another
order than it is; an invisible character (a zero-width space, a joiner, a soft
hyphen, a tag character, a Hangul filler) would make two texts look alike and
differ. `visible` shows each as an escape (`\\x1b`, `\\x07`, `\\x9b`, `\\u202e`,
`\\u200b`, `\\U000e0041`), keeping newlines, tabs and CRLF line ends.

Invisible characters are kept where they are part of what a person expects to see
drawn (docs/threat-model.md gives the rule):
- ZWJ (U+200D) between two pictographs (an emoji ZWJ sequence, 👩‍💻), the left one
  perhaps with U+FE0F or a skin tone after it;
- ZWJ and ZWNJ (U+200C) after a virama (Indic conjuncts: RFC 5892's CONTEXTJ rule),
  ZWNJ between two letters of a joining script (Persian's می‌خواهم);
- U+FE0E/U+FE0F after a pictograph or a keycap base (1️⃣), U+FE00–FE0D and
  U+E0100–E01EF after a CJK ideograph (a standardised or ideographic variant),
  Mongolian's variation selectors and vowel separator after a Mongolian letter;
- tag characters only as one of the three subdivision flags Unicode recommends
  (🏴 then gbeng, gbsct or gbwls and the cancel tag).

Where it runs is decided at the output boundary (cli/common.py, the hooks, the review
page's templates): docs/editing.md says which output is escaped when.

On the edit and hook paths: no `re`, no `unicodedata` for ASCII, and text without a
control character (nearly all of it) costs one `min` over it.
"""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Iterable

# Unicode's explicit direction marks, embeddings, overrides and isolates: the ones a
# terminal's bidi rendering acts on (Unicode TR9), never needed to show a script.
BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
# Drawn as nothing: format characters (category Cf, but for the prepended concatenation
# marks U+0600-0605 and kin, which are drawn) and the other default-ignorable code points
# (combining grapheme joiner, Hangul fillers, Khmer's inherent vowels, the unassigned
# ones), line and paragraph separators. Each is escaped unless CONTEXT keeps it.
INVISIBLE = (0x00AD, 0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, *range(0x180B, 0x1810), *range(0x200B, 0x200E),
             0x2028, 0x2029, *range(0x2060, 0x2066), *range(0x206A, 0x2070), 0x3164, *range(0xFE00, 0xFE10),
             0xFEFF, 0xFFA0, *range(0xFFF0, 0xFFFC), *range(0x13430, 0x13440), *range(0x1BCA0, 0x1BCA4),
             *range(0x1D173, 0x1D17B), *range(0xE0000, 0xE1000))
ZWNJ, ZWJ, VS15, VS16, CANCEL_TAG = "\u200c", "\u200d", "\ufe0e", "\ufe0f", "\U000e007f"
# Invisible characters that are kept in the right company (`_kept`); the rest of INVISIBLE never is.
CONTEXT = frozenset([ZWNJ, ZWJ, *map(chr, range(0xFE00, 0xFE10)), *map(chr, range(0xE0100, 0xE01F0)),
                     *map(chr, range(0xE0020, 0xE0080)), "\u180b", "\u180c", "\u180d", "\u180e", "\u180f"])
# Extended_Pictographic (Unicode's emoji-data.txt), in ranges: what an emoji sequence joins.
PICTOGRAPHIC = ((0x00A9, 0x00A9), (0x00AE, 0x00AE), (0x203C, 0x203C), (0x2049, 0x2049), (0x2122, 0x2122),
                (0x2139, 0x2139), (0x2194, 0x2199), (0x21A9, 0x21AA), (0x231A, 0x231B), (0x2328, 0x2328),
                (0x2388, 0x2388), (0x23CF, 0x23CF), (0x23E9, 0x23F3), (0x23F8, 0x23FA), (0x24C2, 0x24C2),
                (0x25AA, 0x25AB), (0x25B6, 0x25B6), (0x25C0, 0x25C0), (0x25FB, 0x25FE), (0x2600, 0x27BF),
                (0x2934, 0x2935), (0x2B05, 0x2B07), (0x2B1B, 0x2B1C), (0x2B50, 0x2B50), (0x2B55, 0x2B55),
                (0x3030, 0x3030), (0x303D, 0x303D), (0x3297, 0x3297), (0x3299, 0x3299), (0x1F000, 0x1F0FF),
                (0x1F10D, 0x1F10F), (0x1F12F, 0x1F12F), (0x1F16C, 0x1F171), (0x1F17E, 0x1F17F),
                (0x1F18E, 0x1F18E), (0x1F191, 0x1F19A), (0x1F1AD, 0x1F1E5), (0x1F201, 0x1F20F),
                (0x1F21A, 0x1F21A), (0x1F22F, 0x1F22F), (0x1F232, 0x1F23A), (0x1F23C, 0x1F23F),
                (0x1F249, 0x1F3FA), (0x1F400, 0x1F53D), (0x1F546, 0x1F64F), (0x1F680, 0x1F6FF),
                (0x1F774, 0x1F77F), (0x1F7D5, 0x1F7FF), (0x1F80C, 0x1F80F), (0x1F848, 0x1F84F),
                (0x1F85A, 0x1F85F), (0x1F888, 0x1F88F), (0x1F8AE, 0x1F8FF), (0x1F90C, 0x1F93A),
                (0x1F93C, 0x1F945), (0x1F947, 0x1FAFF), (0x1FC00, 0x1FFFD))
SKIN_TONES = range(0x1F3FB, 0x1F400)
KEYCAP_BASES = "0123456789#*"
JOINING_SCRIPTS = ((0x0620, 0x074F), (0x0750, 0x077F), (0x07C0, 0x07FF), (0x0840, 0x085F), (0x0860, 0x089F),
                   (0x08A0, 0x08FF), (0x1820, 0x18AA), (0xA840, 0xA877), (0xFB50, 0xFDFF), (0xFE70, 0xFEFC),
                   (0x10AC0, 0x10AFF), (0x10D00, 0x10D3F), (0x10F30, 0x10F6F))  # Arabic, Syriac, N'Ko, …
CJK = ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x3FFFF))
MONGOLIAN_LETTERS = (0x1820, 0x18AA)
FLAGS = frozenset("".join(chr(0xE0000 + ord(c)) for c in name) for name in ("gbeng", "gbsct", "gbwls"))

_ESCAPES = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7f, *range(0x80, 0xa0)) if chr(c) not in "\n\t"}
_ESCAPES.update({c: f"\\u{c:04x}" for c in BIDI})
# _ESCAPES and every invisible character, built on first use (~1 ms: plane 14 alone has
# 4,000). The context characters of plane 14 (tags, VS17-256) are in it too: their
# escape in the answer is what sends the text down the slow path.
_table: dict[int, str] = {}
BMP_CONTEXT = tuple(c for c in CONTEXT if c < "\U00010000")
# For JSON: C0 is escaped by json itself; DEL and C1 are legal raw in JSON strings.
_JSON_ESCAPES = {c: f"\\u{c:04x}" for c in (0x7f, *range(0x80, 0xa0))}


def visible(text: str) -> str:
    """`text` with every control character (C0 but newline and tab, DEL, C1), every
    bidirectional control and every invisible character out of its company escaped."""
    if text.isascii() and "\x7f" not in text \
            and min(text.replace("\n", " ").replace("\t", " "), default=" ") >= " ":
        return text  # the usual case, at C speed
    if "\r\n" in text:  # a CRLF file's line ends stay line ends
        return "\r\n".join(_escaped(part) for part in text.split("\r\n"))
    return _escaped(text)


def escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0xa0 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _escaped(text: str) -> str:
    if text.isascii():
        return text.translate(_ESCAPES)
    table = _table or _build()
    shown = text.translate(table)
    if "\\U000e" not in shown and not any(c in text for c in BMP_CONTEXT):
        return shown  # no character whose company decides (a few fast scans)
    out: list[str] = []
    start = 0
    for i in _context_positions(text):
        out.append(text[start:i].translate(table))
        out.append(text[i] if _kept(text, i) else escape(text[i]))
        start = i + 1
    out.append(text[start:].translate(table))
    return "".join(out)


def _build() -> dict[int, str]:
    _table.update(_ESCAPES)
    _table.update({c: escape(chr(c)) for c in INVISIBLE if c >= 0x10000 or chr(c) not in CONTEXT})
    return _table


def _context_positions(text: str) -> list[int]:
    found: list[int] = []
    for char in CONTEXT.intersection(text):
        at = text.find(char)
        while at >= 0:
            found.append(at)
            at = text.find(char, at + 1)
    return sorted(found)


def _within(char: str, ranges: Iterable[tuple[int, int]]) -> bool:
    code = ord(char)
    return any(lo <= code <= hi for lo, hi in ranges)


def _pictograph(char: str) -> bool:
    return _within(char, PICTOGRAPHIC)


def _base(text: str, i: int) -> str:
    """The character before `i`, past combining marks: the letter a joiner follows."""
    import unicodedata

    while i > 0 and unicodedata.combining(text[i - 1]) not in (0, 9):
        i -= 1
    return text[i - 1] if i > 0 else ""


def _kept(text: str, i: int) -> bool:
    """Whether the invisible character at `i` belongs where it is (the module's rule)."""
    import unicodedata

    char = text[i]
    before = text[i - 1] if i > 0 else ""
    after = text[i + 1] if i + 1 < len(text) else ""
    if char in (ZWJ, ZWNJ):
        if before and unicodedata.combining(before) == 9:  # a virama: a conjunct's half form
            return True
        if char == ZWNJ:
            left = _base(text, i)
            return bool(left and after) and _within(left, JOINING_SCRIPTS) and _within(after, JOINING_SCRIPTS) \
                and unicodedata.category(left)[0] == "L" and unicodedata.category(after)[0] == "L"
        modified = before == VS16 or bool(before) and ord(before) in SKIN_TONES  # 🏳️‍🌈, 🧑🏽‍💻
        left = (text[i - 2] if i >= 2 else "") if modified else before
        return len(left) == 1 and len(after) == 1 and _pictograph(left) and _pictograph(after)
    code = ord(char)
    if char in (VS15, VS16):
        return bool(before) and (_pictograph(before) or before in KEYCAP_BASES and after == "\u20e3")
    if 0xFE00 <= code <= 0xFE0D or 0xE0100 <= code <= 0xE01EF:
        return bool(before) and _within(before, CJK)
    if 0x180B <= code <= 0x180F:  # Mongolian free variation selectors and the vowel separator
        return bool(before) and _within(before, (MONGOLIAN_LETTERS,))
    # A tag character: kept only inside 🏴 + one of FLAGS + the cancel tag.
    start = i
    while start > 0 and 0xE0020 <= ord(text[start - 1]) <= 0xE007F and text[start - 1] != CANCEL_TAG:
        start -= 1
    end = text.find(CANCEL_TAG, i)
    return start > 0 and text[start - 1] == "\U0001f3f4" and end >= 0 and text[start:end] in FLAGS


def json_safe(encoded: str) -> str:
    """A JSON document (from json.dumps) with DEL and C1 characters as \\u escapes:
    the same value, and nothing a terminal would act on."""
    if encoded.isascii() and "\x7f" not in encoded:
        return encoded
    return encoded.translate(_JSON_ESCAPES)
