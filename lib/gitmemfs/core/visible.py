"""Text from the memory made safe for a person to read: the one helper.

An agent writes descriptions, bodies, commit messages and (in old history) paths;
a control character among them (ESC, BEL, a C1 CSI) would move a person's cursor,
retitle the window or worse once printed; a bidirectional override (U+202E and
its kin, the "Trojan Source" characters) would make a person read text in another
order than it is; an invisible character (a zero-width space, a joiner, a soft
hyphen, a tag character, a Hangul filler) would make two texts look alike and
differ. `visible` shows each as an escape (`\\x1b`, `\\x07`, `\\x9b`, `\\u202e`,
`\\u200b`, `\\U000e0041`), keeping newlines, tabs and CRLF line ends.

Lookalikes are escaped too, so text that looks the same is the same:
- a space of another kind (U+00A0, U+2000-U+200A, U+202F, ...; the ideographic space
  U+3000 is kept beside East Asian text);
- in a word that mixes scripts which share letter shapes (Latin, Cyrillic, Greek,
  Armenian, Cherokee, Coptic, and the styled Latin of fullwidth, mathematical and
  letterlike forms), each letter not of the word's main script (Sаrah: the Cyrillic а);
- a word of styled Latin (𝐒𝐚𝐫𝐚𝐡, Ｓａｒａｈ, the Kelvin sign), and, in mostly Latin
  text, a word of one of those other scripts made only of letters that look Latin
  (Ѕаѕһа), every letter of it.

Invisible characters are kept where they are part of what a person expects to see
drawn (docs/threat-model.md gives the rule):
- ZWJ (U+200D) inside an emoji ZWJ sequence Unicode recommends (👩‍💻, 🏳️‍🌈; core/emojizwj.py),
  not between two pictographs no font joins (🔥‍🔥);
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
                     *map(chr, range(0xE0020, 0xE0080)), "\u180b", "\u180c", "\u180d", "\u180e", "\u180f",
                     "\u3000"])
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
# Spaces of another kind than U+0020 (category Zs): a name with one looks like a name without.
SPACES = (0x00A0, 0x1680, *range(0x2000, 0x200B), 0x202F, 0x205F)
IDEOGRAPHIC_SPACE = "\u3000"  # kept beside East Asian text (EAST_ASIAN), escaped elsewhere
EAST_ASIAN = ((0x1100, 0x11FF), (0x2E80, 0x2FDF), (0x3000, 0x33FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF),
              (0xAC00, 0xD7AF), (0xF900, 0xFAFF), (0xFF00, 0xFFEF), (0x20000, 0x3FFFF))
# Scripts whose letters share shapes with Latin ones (Unicode TR39's confusables), by block.
LOOKALIKE_SCRIPTS = (((0x0370, 0x03FF), "Greek"), ((0x1F00, 0x1FFF), "Greek"), ((0x0400, 0x052F), "Cyrillic"),
                     ((0x1C80, 0x1C8F), "Cyrillic"), ((0x2DE0, 0x2DFF), "Cyrillic"), ((0xA640, 0xA69F), "Cyrillic"),
                     ((0x0530, 0x058F), "Armenian"), ((0x13A0, 0x13FF), "Cherokee"), ((0xAB70, 0xABBF), "Cherokee"),
                     ((0x2C80, 0x2CFF), "Coptic"), ((0x2100, 0x218F), "styled"), ((0x24B6, 0x24E9), "styled"),
                     ((0xFF21, 0xFF5A), "styled"), ((0x1D400, 0x1D7FF), "styled"), ((0x1F130, 0x1F189), "styled"))
# Letters of those scripts drawn like a Latin letter in common fonts (TR39's confusables.txt
# lists these among others): а е о р с у х і ј ѕ һ ԁ ԛ ԝ ӏ ԍ ү and capitals; Greek ο ρ ν and
# capitals; Armenian օ ո ս հ ց; Cherokee capitals. Styled Latin is a lookalike whole.
LATIN_SHAPED = frozenset(
    "\u0430\u0435\u043e\u0440\u0441\u0443\u0445\u0456\u0458\u0455\u04bb\u0501\u051b\u051d\u04cf"
    "\u050d\u04af\u0410\u0412\u0415\u041a\u041c\u041d\u041e\u0420\u0421\u0422\u0425\u0405\u0406"
    "\u0408\u04ae\u051a\u051c\u03bf\u03c1\u03bd\u0391\u0392\u0395\u0396\u0397\u0399\u039a\u039c"
    "\u039d\u039f\u03a1\u03a4\u03a5\u03a7\u0585\u0578\u057d\u0570\u0581\u13aa\u13f4\u13df\u13ac"
    "\u13bb\u13c6\u13e6\u13de\u13b7\u13e2\u13da\u13a2\u13d9\u13b3\u13c3\u13d4")
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
    lookalikes = _lookalike_letters(text)
    if not lookalikes and "\\U000e" not in shown and not any(c in text for c in BMP_CONTEXT):
        return shown  # no character whose company decides (a few fast scans)
    out: list[str] = []
    start = 0
    for i in sorted(set(_context_positions(text)) | lookalikes):
        out.append(text[start:i].translate(table))
        out.append(text[i] if i not in lookalikes and _kept(text, i) else escape(text[i]))
        start = i + 1
    out.append(text[start:].translate(table))
    return "".join(out)


def _build() -> dict[int, str]:
    _table.update(_ESCAPES)
    _table.update({c: escape(chr(c)) for c in (*INVISIBLE, *SPACES) if c >= 0x10000 or chr(c) not in CONTEXT})
    return _table


# Every letter of LOOKALIKE_SCRIPTS, deleted by one C-speed translate: text without any
# (nearly all of it) is not looked at letter by letter. Built on first use.
_lookalike_table: dict[int, None] = {}
_script_of: dict[str, str] = {}


def _script(char: str) -> str:
    """The lookalike script of a letter ("Latin", "Cyrillic", ..., "styled"), "" for any other."""
    found = _script_of.get(char)
    if found is None:
        code = ord(char)
        found = "Latin" if char.isascii() else next((name for (lo, hi), name in LOOKALIKE_SCRIPTS
                                                      if lo <= code <= hi), "")
        if found == "styled":
            import unicodedata

            folded = unicodedata.normalize("NFKC", char)
            found = "styled" if folded.isascii() and folded.isalpha() else ""
        elif not found:
            import unicodedata

            found = "Latin" if unicodedata.name(char, "").startswith("LATIN ") else ""
        _script_of[char] = found
    return found


def _lookalike_letters(text: str) -> set[int]:
    """Positions of the letters that make a word look like another (the module's rule)."""
    if not _lookalike_table:
        _lookalike_table.update({c: None for (lo, hi), _ in LOOKALIKE_SCRIPTS for c in range(lo, hi + 1)})
    if len(text.translate(_lookalike_table)) == len(text):
        return set()
    import unicodedata

    words: list[list[tuple[int, str]]] = []
    word: list[tuple[int, str]] = []
    for i, char in enumerate(text):
        if char.isalpha():
            word.append((i, _script(char)))
        elif not (word and unicodedata.category(char)[0] == "M"):  # a mark stays in its word
            if word:
                words.append(word)
            word = []
    if word:
        words.append(word)
    counts: dict[str, int] = {}
    for word in words:
        for _, script in word:
            counts[script] = counts.get(script, 0) + 1
    others = sum(n for script, n in counts.items() if script not in ("Latin", "styled", ""))
    mostly_latin = counts.get("Latin", 0) + counts.get("styled", 0) > others
    found: set[int] = set()
    for word in words:
        scripts = {script for _, script in word if script}
        if len(scripts) > 1:
            tally = {s: sum(1 for _, t in word if t == s) for s in scripts}
            main = max(sorted(scripts, key=lambda s: s != "Latin"), key=lambda s: tally[s])
            found.update(i for i, script in word if script and script != main)
        elif scripts == {"styled"} or mostly_latin and scripts and scripts != {"Latin"} and \
                all(text[i] in LATIN_SHAPED for i, _ in word):
            found.update(i for i, _ in word)
    return found


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
        return _recommended_join(text, i)
    if char == IDEOGRAPHIC_SPACE:
        return any(c and _within(c, EAST_ASIAN) for c in (before, after))
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


def _element_before(text: str, end: int) -> int:
    """Where the emoji element ending just before `end` starts (a pictograph, perhaps
    with U+FE0F or a skin tone after it), or -1."""
    i = end - 1
    if i >= 0 and (text[i] == VS16 or ord(text[i]) in SKIN_TONES):
        i -= 1
    return i if i >= 0 and _pictograph(text[i]) else -1


def _element_after(text: str, start: int) -> int:
    """Where the emoji element starting at `start` ends, or -1."""
    if start >= len(text) or not _pictograph(text[start]):
        return -1
    end = start + 1
    if end < len(text) and (text[end] == VS16 or ord(text[end]) in SKIN_TONES):
        end += 1
    return end


def _recommended_join(text: str, i: int) -> bool:
    """Whether the ZWJ at `i` is inside an emoji ZWJ sequence Unicode recommends: the
    whole chain of elements it joins, U+FE0F aside, is in core/emojizwj.py."""
    lo = _element_before(text, i)
    hi = _element_after(text, i + 1)
    if lo < 0 or hi < 0:
        return False
    while lo > 0 and text[lo - 1] == ZWJ and _element_before(text, lo - 1) >= 0:
        lo = _element_before(text, lo - 1)
    while hi < len(text) and text[hi] == ZWJ and _element_after(text, hi + 1) >= 0:
        hi = _element_after(text, hi + 1)
    from gitmemfs.core.emojizwj import SEQUENCES

    return text[lo:hi].replace(VS16, "") in SEQUENCES


def json_safe(encoded: str) -> str:
    """A JSON document (from json.dumps) with DEL and C1 characters as \\u escapes:
    the same value, and nothing a terminal would act on."""
    if encoded.isascii() and "\x7f" not in encoded:
        return encoded
    return encoded.translate(_JSON_ESCAPES)
