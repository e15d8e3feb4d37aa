"""Locale-independent sort keys that follow ICU's root collation.

Upstream sorts names with JavaScript's `localeCompare`, i.e. ICU collation for
the host's locale, so its output depends on the machine. We emulate ICU's root
collation instead: the same order as upstream on an en-US host, and the same
bytes on every machine. The rules (reference/upstream-blocks-tree.md §3.2):

- case is ignored at first (`Zed` sorts after `fmonly`); on a tie lowercase
  comes before uppercase;
- punctuation is not ignored: it sorts before digits, digits before letters;
  digits compare one by one (`item10` < `item9`);
- an accented letter sorts with its base letter, after the plain one.

ASCII names follow ICU exactly (checked against Node's ICU on random strings);
other scripts are approximated by code point after Latin letters.
"""
from __future__ import annotations

import unicodedata
from typing import Tuple

# ICU root's primary order of punctuation and symbols (ASCII, Latin-1, general
# punctuation, arrows, currency), lowest first. Characters in one string share a
# primary weight and differ only at the case level, in the order given.
_PUNCTUATION = [
    " ", "‾", "_", "‗", "-", "‐‑", "‒", "–", "—", "―", "⁓", ",", ";", "⁏", ":", "!", "‼",
    "⁉", "¡", "?", "⁈", "⁇", "¿", "‽", ".․", "·", "⁕", "⁖", "⁘", "⁙", "⁚", "⁛",
    "⁜", "⁝", "⁞", "'‘’‚‛", "‹", "›", '"“”„‟', "«", "»", "(", ")", "[", "]", "{", "}", "⁅",
    "⁆", "‖", "§", "¶", "⁋", "@", "*", "⁎", "⁑", "/", "\\", "&", "⁊", "#", "%", "‰", "‱",
    "†", "‡", "•", "‣", "‧", "⁃", "⁌", "⁍", "′", "″", "‴", "⁗", "‵", "‶", "‷", "‸", "※",
    "‿", "⁔", "⁀", "⁐", "⁁", "⁂", "`", "´", "^", "¯", "¨", "¸", "°", "©", "®", "←", "→",
    "↑", "↓", "↔", "↕", "↖", "↗", "↘", "↙", "+", "±", "÷", "×", "<", "=", ">", "¬", "|",
    "¦", "~", "⁒", "⁄", "¤", "¢", "$", "£", "¥", "₠", "₡", "₢", "₣", "₤", "₥", "₦", "₩",
    "₪", "₫", "€", "₭", "₮", "₯", "₰", "₱", "₲", "₳", "₴", "₵", "₶", "₷", "₸", "₹", "₺",
    "₻", "₼", "₽", "₾", "₿", "₧", "₨",
]
# ICU's order of the common combining accents (an accented letter's second level).
_ACCENTS = (
    0x34F, 0x332, 0x313, 0x343, 0x314, 0x301, 0x341, 0x300, 0x340, 0x306, 0x302, 0x30C,
    0x30A, 0x342, 0x308, 0x344, 0x30B, 0x303, 0x307, 0x338, 0x327, 0x328, 0x304,
)
_WHITESPACE = "\t\n\x0b\x0c\r"  # before space; other control characters are ignored

# Ranks are code points of the key strings: whitespace, then punctuation and
# symbols (listed ones in ICU order, the rest by code point), digits, Latin
# letters, then other scripts by code point.
_OTHER_SYMBOL_BASE = 0x200
_DIGIT_BASE = 0x10200
_LETTER_BASE = 0x10210
_OTHER_LETTER_BASE = 0x10300
_MAX = 0x10FFFF

_SYMBOLS: dict[str, tuple[int, int]] = {}  # char -> (primary rank, case-level rank)
for _i, _group in enumerate(_PUNCTUATION):
    for _j, _ch in enumerate(_group):
        _SYMBOLS[_ch] = (0x10 + _i, _j)
_ACCENT_RANK = {code: i + 1 for i, code in enumerate(_ACCENTS)}


def _rank(ch: str) -> tuple[int, int] | None:
    """(primary, case level) of one character after decomposition; None if ignorable."""
    if ch in _SYMBOLS:
        return _SYMBOLS[ch]
    code = ord(ch)
    if code < 128:
        if ch in _WHITESPACE:
            return 1 + _WHITESPACE.index(ch), 0
        if "0" <= ch <= "9":
            return _DIGIT_BASE + code - 48, 0
        if ch.isalpha():
            return _LETTER_BASE + ord(ch.lower()) - 97, int(ch.isupper())
        return None  # control characters
    category = unicodedata.category(ch)
    if category == "Nd":
        return _DIGIT_BASE + unicodedata.digit(ch, 0), 0
    if category[0] == "Z":
        return _SYMBOLS[" "]
    if category[0] in "PS":
        return _OTHER_SYMBOL_BASE + min(code, 0xFFFF), 0
    if category[0] == "C":
        return None  # controls and format characters
    lower = ch.lower()
    base = ord(lower) if len(lower) == 1 else code
    return min(_OTHER_LETTER_BASE + base, _MAX), int(ch != lower)


_PRIMARY: dict[int, str | None] = {}
_TERTIARY: dict[int, str | None] = {}
for _code in range(128):
    _r = _rank(chr(_code))
    _PRIMARY[_code] = None if _r is None else chr(_r[0])
    _TERTIARY[_code] = None if _r is None else chr(_r[1])

# Latin letters without a canonical decomposition that ICU sorts as base letters.
_EXPANSIONS = {
    "ß": "ss", "ẞ": "SS", "æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE", "ø": "o", "Ø": "O",
    "đ": "d", "Đ": "D", "ł": "l", "Ł": "L", "ħ": "h", "Ħ": "H", "ı": "i", "ŧ": "t", "Ŧ": "T",
}

Key = Tuple[str, str, str]


def sort_key(name: str) -> Key:
    """A key whose order is ICU root collation: (primary, accents, case)."""
    if name.isascii():
        return name.translate(_PRIMARY), "", name.translate(_TERTIARY)
    primary: list[str] = []
    secondary: list[int] = []
    tertiary: list[str] = []
    for ch in unicodedata.normalize("NFD", name):
        if unicodedata.combining(ch):
            if secondary:  # an accent weighs on the letter before it
                weight = _ACCENT_RANK.get(ord(ch), len(_ACCENTS) + ord(ch) - 0x2FF)
                secondary[-1] = min(secondary[-1] * 256 + weight, _MAX)
            continue
        expansion = _EXPANSIONS.get(ch)
        if expansion is not None:
            # ICU weighs these letters after any accented form of their base letters.
            weight = len(_ACCENTS) + (0x100 if len(expansion) == 1 else 0x200)
            for part in expansion:
                primary.append(chr(_LETTER_BASE + ord(part.lower()) - 97))
                secondary.append(weight)
                tertiary.append("\x03" if part.isupper() else "\x02")
            continue
        if ch not in _SYMBOLS and unicodedata.decomposition(ch).startswith("<"):
            # Compatibility forms (`…` is `...`, `ﬁ` is `fi`) sort as what they stand
            # for, after it at the case level.
            for part in unicodedata.normalize("NFKD", ch):
                rank = _rank(part)
                if rank is not None and not unicodedata.combining(part):
                    primary.append(chr(rank[0]))
                    secondary.append(0)
                    tertiary.append(chr(rank[1] + 4))
            continue
        rank = _rank(ch)
        if rank is None:
            continue
        primary.append(chr(rank[0]))
        secondary.append(0)
        tertiary.append(chr(rank[1]))
    accents = "".join(chr(w) for w in secondary).rstrip("\x00")
    return "".join(primary), accents, "".join(tertiary)
