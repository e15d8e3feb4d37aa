"""Agent-written text made safe to show, and the page's pictures.

Markdown goes through markdown-it-py's CommonMark preset with `html` off: raw HTML is
shown as text, never parsed, and links or images whose target is not http(s), mailto
or a relative path (javascript:, data:, vbscript:, file:) are left as plain text.
Everything else on the page is Jinja2 with autoescaping; the CSP is the second wall.
Every value a template prints, HTML made here included, passes `shown` first: control
characters, bidirectional controls and invisible characters out of their company are
escapes there as on a terminal (core/visible.py), so two descriptions that differ look
different. (The escapes are plain text, `\\u200b`: safe inside an attribute too.)
Charts are SVG built here from numbers, with every label escaped.
"""
from __future__ import annotations

import difflib
import re
from html import escape
from typing import Sequence

from markdown_it import MarkdownIt
from markupsafe import Markup

from gitmemfs.core.visible import visible

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
SAFE_SCHEMES = ("http", "https", "mailto")


def _validate(url: str) -> bool:
    """A link or image target: relative, or of a scheme that runs nothing."""
    scheme = _SCHEME.match(re.sub(r"[\x00-\x20\x7f]", "", url))
    return scheme is None or scheme.group(1).lower() in SAFE_SCHEMES


_md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
_md.validateLink = _validate  # type: ignore[method-assign]


def shown(value: object) -> object:
    """The templates' finalize: text (and Markup, kept Markup) through `visible`."""
    if isinstance(value, Markup):
        return Markup(visible(str(value)))
    return visible(value) if isinstance(value, str) else value


def markdown(text: str) -> Markup:
    """Markdown as HTML that holds no markup the text brought (see the module's doc)."""
    return Markup(_md.render(text))


# -- diffs, word by word ---------------------------------------------------------------------

_WORDS = re.compile(r"\s+|\w+|[^\w\s]")


def _words(old: str, new: str) -> tuple[str, str]:
    a, b = _WORDS.findall(old), _WORDS.findall(new)
    left, right = [], []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        x, y = escape("".join(a[i1:i2])), escape("".join(b[j1:j2]))
        if op == "equal":
            left.append(x)
            right.append(y)
        else:
            if x:
                left.append(f"<del>{x}</del>")
            if y:
                right.append(f"<ins>{y}</ins>")
    return "".join(left), "".join(right)


def unified(body: str) -> list[tuple[str, Markup]]:
    """A unified diff as (kind, html) rows: kind is hunk, ctx, del or add; a run of
    removed lines followed by added ones is paired line by line, words marked."""
    rows: list[tuple[str, Markup]] = []
    lines = [ln for ln in body.splitlines() if not ln.startswith(("--- ", "+++ "))]
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("-"):
            dels = []
            while i < len(lines) and lines[i].startswith("-"):
                dels.append(lines[i][1:])
                i += 1
            adds = []
            while i < len(lines) and lines[i].startswith("+"):
                adds.append(lines[i][1:])
                i += 1
            pairs = min(len(dels), len(adds))
            marked = [_words(dels[k], adds[k]) for k in range(pairs)]
            rows += [("del", Markup(m[0])) for m in marked] + [("del", Markup(escape(d))) for d in dels[pairs:]]
            rows += [("add", Markup(m[1])) for m in marked] + [("add", Markup(escape(a))) for a in adds[pairs:]]
            continue
        kind = "hunk" if line.startswith("@@") else "add" if line.startswith("+") else "ctx"
        rows.append((kind, Markup(escape(line if kind == "hunk" else line[1:]))))
        i += 1
    return rows


# -- charts ----------------------------------------------------------------------------------

COLOURS = {"pinned": "#3b6ea8", "external": "#9bb7d4", "agent": "#3b6ea8", "dream": "#8a5fb0",
           "human": "#4a9a5b", "over": "#c0392b"}


def bars(rows: Sequence[tuple[str, int, int | None]], unit: str = "tokens") -> Markup:
    """A horizontal bar per (label, value, limit): the bar is the value, a mark the limit."""
    top = max([v for _, v, _ in rows] + [lim or 0 for _, _, lim in rows] + [1])
    width, row = 420, 18
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{width + 330}" '
             f'height="{row * len(rows) + 4}" role="img" aria-label="size per file">']
    for n, (label, value, limit) in enumerate(rows):
        y = n * row + 2
        w = max(1, round(value / top * width))
        over = limit is not None and value > limit
        parts.append(f'<text x="0" y="{y + 12}" font-size="11">{escape(label[-48:])}</text>')
        parts.append(f'<rect x="300" y="{y}" width="{w}" height="{row - 5}" '
                     f'fill="{COLOURS["over"] if over else COLOURS["pinned"]}"/>')
        if limit:
            x = 300 + round(limit / top * width)
            parts.append(f'<line x1="{x}" x2="{x}" y1="{y - 1}" y2="{y + row - 3}" stroke="#222" stroke-width="2"/>')
        shown = f"{value:,}" + (f" / {limit:,}" if limit else "") + f" {unit}"
        parts.append(f'<text x="{min(300 + w + 4, 300 + width + 4)}" y="{y + 12}" font-size="11">{shown}</text>')
    parts.append("</svg>")
    return Markup("".join(parts))


def stacked(columns: Sequence[tuple[str, dict[str, int]]], keys: Sequence[str], title: str,
            lines: bool = False) -> Markup:
    """Columns of stacked values (one colour per key), or with `lines`, one line per key."""
    width, height, pad = 720, 220, 40
    top = max([sum(v.values()) if not lines else max(v.values() or [0]) for _, v in columns] + [1])
    n = max(1, len(columns))
    step = (width - pad) / n
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{width}" height="{height + 40}" '
           f'role="img" aria-label="{escape(title)}">',
           f'<text x="{pad}" y="12" font-size="12">{escape(title)} (max {top:,})</text>',
           f'<line x1="{pad}" x2="{width}" y1="{height}" y2="{height}" stroke="#888"/>']
    if lines:
        for key in keys:
            points = " ".join(f"{pad + step * (i + 0.5):.1f},{height - (v.get(key, 0) / top) * (height - 20):.1f}"
                              for i, (_, v) in enumerate(columns))
            out.append(f'<polyline fill="none" stroke="{COLOURS.get(key, "#555")}" stroke-width="2" '
                       f'points="{points}"/>')
    else:
        for i, (_, values) in enumerate(columns):
            y = float(height)
            for key in keys:
                h = values.get(key, 0) / top * (height - 20)
                if h:
                    y -= h
                    out.append(f'<rect x="{pad + step * i + 1:.1f}" y="{y:.1f}" width="{max(1.0, step - 2):.1f}" '
                               f'height="{h:.1f}" fill="{COLOURS.get(key, "#555")}"/>')
    for i, (label, _) in enumerate(columns):
        if n <= 12 or i % max(1, n // 8) == 0:
            out.append(f'<text x="{pad + step * i:.1f}" y="{height + 14}" font-size="10">{escape(label)}</text>')
    for k, key in enumerate(keys):
        out.append(f'<rect x="{pad + k * 110}" y="{height + 24}" width="10" height="10" '
                   f'fill="{COLOURS.get(key, "#555")}"/><text x="{pad + k * 110 + 14}" y="{height + 33}" '
                   f'font-size="11">{escape(key)}</text>')
    out.append("</svg>")
    return Markup("".join(out))
