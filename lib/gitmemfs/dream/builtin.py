"""The offline dream agents: `builtin:tidy`, `builtin:notes` and `builtin:noop`.

They run like any agent (`python -m gitmemfs.dream.builtin NAME` in the dream
worktree, sandboxed, `$MEMORY_DIR` pointing at the worktree) and change memory
only through the write path every `git memory` command uses: one validated commit
per file, each with a reason.

- tidy: CRLF line endings to LF, trailing whitespace (a Markdown hard break keeps
  its two spaces), exact duplicate items of the same bullet list, exactly one final
  newline. Read-only files are left alone.
- notes: the user's explicit "remember …" and "I prefer …" statements in the
  transcript slice (`$DREAM_TRANSCRIPT`) are added to `system/human.md`, each with
  the absolute date it was said, skipping what is already written there.
"""
from __future__ import annotations

import json
import os
import re
import sys
from datetime import datetime, timedelta, timezone
from typing import Any, Sequence

from gitmemfs.core import memfile
from gitmemfs.core.errors import MemfsError
from gitmemfs.core.repo import open_repo
from gitmemfs.core.writer import Change, WriteSession

_BULLET = re.compile(r"^(\s*)([-*+])\s+(\S.*)$")
_FENCE = re.compile(r"^\s*(```|~~~)")
HUMAN = "system/human.md"
HUMAN_DESCRIPTION = "What I know about the person I work with, what they prefer and what they are working on."
NOTES_HEADING = "## Noted from conversations"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


# -- tidy -------------------------------------------------------------------------------

def tidy_text(text: str) -> tuple[str, list[str]]:
    """The tidied text and the fixes made, in words."""
    fixes = []
    if "\r\n" in text:
        fixes.append(f"convert {_plural(text.count(chr(13) + chr(10)), 'CRLF line ending')} to LF")
        text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    stripped = 0
    for i, line in enumerate(lines):
        clean = line.rstrip(" \t")
        if clean == line:
            continue
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        # Two or more spaces before a line that continues the paragraph are a Markdown
        # hard line break: keep exactly two.
        hard = (line[len(clean):].endswith("  ") and "\t" not in line[len(clean):] and bool(clean.strip())
                and bool(nxt.strip()) and not _BULLET.match(nxt) and not nxt.lstrip().startswith(("#", ">"))
                and not _FENCE.match(nxt))
        if hard:
            clean += "  "
            if clean == line:
                continue
        lines[i] = clean
        stripped += 1
    if stripped:
        fixes.append(f"strip trailing whitespace on {_plural(stripped, 'line')}")
    lines, dropped = _drop_duplicate_items(lines)
    if dropped:
        fixes.append(f"drop {_plural(dropped, 'duplicate list item')}")
    text = "\n".join(lines)
    if text.strip():
        ended = text.rstrip("\n") + "\n"
        if ended != text:
            fixes.append("end with a single newline" if text.endswith("\n") else "add the final newline")
            text = ended
    return text, fixes


def _drop_duplicate_items(lines: list[str]) -> tuple[list[str], int]:
    """Remove a bullet line identical to an earlier item of the same list under the same
    parent items, when neither has nested lines. Code fences and frontmatter are skipped."""
    start = 0
    if lines and lines[0] == "---":
        end = next((i for i in range(1, len(lines)) if lines[i] in ("---", "...")), None)
        start = end + 1 if end is not None else len(lines)
    out = lines[:start]
    dropped = 0
    fence = None
    seen: set[tuple[Any, ...]] = set()
    stack: list[tuple[int, str]] = []
    for i in range(start, len(lines)):
        line = lines[i]
        m_fence = _FENCE.match(line)
        if fence is not None:
            if m_fence and m_fence.group(1) == fence:
                fence = None
            out.append(line)
            continue
        if m_fence:
            fence = m_fence.group(1)
            seen, stack = set(), []
            out.append(line)
            continue
        m = _BULLET.match(line)
        if not m:
            if line.strip() and not line.startswith((" ", "\t")):
                seen, stack = set(), []  # a paragraph or heading ends the list
            out.append(line)
            continue
        indent = len(m.group(1).expandtabs(4))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        key = (tuple(t for _, t in stack), indent, m.group(2), m.group(3).rstrip())
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        nested = _continues(indent, nxt)
        stack.append((indent, m.group(3).rstrip()))
        if key in seen and not nested:
            dropped += 1
            continue
        if not nested:
            seen.add(key)
        out.append(line)
    return out, dropped


def _continues(indent: int, nxt: str) -> bool:
    """Whether the line after an item belongs to it (nested item or continuation text);
    such items are never dropped."""
    if not nxt.strip():
        return False
    m = _BULLET.match(nxt)
    return m is None or len(m.group(1).expandtabs(4)) > indent


def tidy(repo: Any) -> int:
    files = repo.git("ls-files", "-z", "--", "*.md").zsplit()
    commits = 0
    with WriteSession(repo, tool="builtin:tidy") as session:
        for rel in files:
            data = session.read(rel)
            if data is None or memfile.encoding_problem(data) is not None:
                continue
            text = data.decode("utf-8")
            try:
                if memfile.parse(text).read_only:
                    continue
            except memfile.FrontmatterError:
                pass
            new, fixes = tidy_text(text)
            if not fixes:
                continue
            try:
                sha = session.commit([Change(rel, new.encode())], op="tidy",
                                     reason=f"Tidy {rel}: " + ", ".join(fixes))
            except MemfsError as exc:
                print(f"skipped {rel}: {exc}")
                continue
            commits += 1
            print(f"{sha[:7]} tidied {rel}: {', '.join(fixes)}")
    print(f"builtin:tidy: {_plural(commits, 'commit')}" + ("" if commits else "; the memory was already tidy"))
    return 0


# -- notes ------------------------------------------------------------------------------

_LEAD = r"(?:(?:please|also|and|oh|btw|ok|okay|so|one more thing)[,:!\s]+)*"
_REMEMBER = re.compile(_LEAD + r"(?:please\s+)?(?:do\s+)?remember\b[\s,:-]*(?:that\s+)?(?P<fact>\S.*)$",
                       re.IGNORECASE)
_PREFER = re.compile(r"(?:^|\b(?:and|but|also|so|because)\s+|[,;:]\s*)I\s+(?:(?:really|strongly|generally|"
                     r"usually|much|always|still|do)\s+)?prefer\b\s*(?P<what>\S.*)$", re.IGNORECASE)
_RELATIVE = re.compile(r"\b(today|tonight|tomorrow|yesterday)\b", re.IGNORECASE)
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'll|I'd|(?i:me|my|mine|myself))\b")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def _day(stamp: Any) -> datetime:
    try:
        return datetime.strptime(str(stamp)[:10], "%Y-%m-%d").replace(tzinfo=timezone.utc)
    except ValueError:
        return datetime.now(timezone.utc)


def _absolute(text: str, day: datetime) -> str:
    shift = {"today": 0, "tonight": 0, "tomorrow": 1, "yesterday": -1}

    def swap(m: re.Match[str]) -> str:
        when = (day + timedelta(days=shift[m.group(1).lower()])).strftime("%Y-%m-%d")
        return f"on {when}" if m.group(1).lower() != "tonight" else f"on the evening of {when}"
    return _RELATIVE.sub(swap, text)


def _clause(text: str, day: datetime) -> str:
    """A statement's clause with absolute dates and exactly one closing full stop."""
    text = _absolute(text, day).strip().rstrip(".!;,: ")
    return text + "." if text else ""


_QUOTES = {'"': '"', "'": "'", "\u201c": "\u201d", "\u2018": "\u2019"}


def _unquote(text: str) -> str:
    """`text` without the quotes around it, or a quote left open or closed alone at its
    ends (`remember: "I'm on call."` splits as `"I'm on call.`); quotes inside stay."""
    core = text.strip()
    tail = core[len(core.rstrip(".!;,: ")):]
    core = core[:len(core) - len(tail)]
    if len(core) >= 2 and _QUOTES.get(core[0]) == core[-1] and core[-1] not in core[1:-1]:
        return core[1:-1].strip() + tail
    for opener, closer in _QUOTES.items():
        if core.startswith(opener) and closer not in core[1:]:
            core = core[1:]
        elif core.endswith(closer) and opener not in core[:-1]:
            core = core[:-1]
    return core.strip() + tail


def statements(records: Sequence[dict[str, Any]]) -> list[tuple[str, str]]:
    """(date, note) for each explicit statement in the user's messages, in order."""
    found = []
    for record in records:
        if record.get("role") != "user" or not isinstance(record.get("content"), str):
            continue
        day = _day(record.get("timestamp"))
        date = day.strftime("%Y-%m-%d")
        for sentence in _SENTENCE.split(record["content"]):
            sentence = _unquote(sentence)
            if not sentence or sentence.endswith("?"):
                continue
            m = _REMEMBER.match(sentence)
            if m and not re.match(r"(?i)(?:i|you|we|they)\s", sentence):
                fact = _clause(_unquote(m.group("fact")), day)
                if fact:
                    fact = fact[:1].upper() + fact[1:]
                    # In the user's own voice ("my", "I'm"): quote it, so it is not read as mine.
                    if _FIRST_PERSON.search(fact):
                        fact = f'"{fact}"'
                    found.append((date, "Asked me to remember: " + fact))
                continue
            m = _PREFER.search(sentence)
            if m:
                what = _clause(_unquote(m.group("what")), day)
                if what:
                    found.append((date, "Prefers " + what))
    return found


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def add_notes(body: str, notes: Sequence[tuple[str, str]]) -> tuple[str, list[str]]:
    """The body with new notes appended under NOTES_HEADING, and the lines added."""
    known = _norm(body)
    added: list[str] = []
    for day, note in notes:
        if _norm(note) in known:
            continue
        line = f"- {day}: {note}"
        added.append(line)
        known += " " + _norm(note)
    if not added:
        return body, []
    text = body.rstrip("\n")
    if NOTES_HEADING not in body:
        text += ("\n\n" if text else "") + NOTES_HEADING + "\n"
    return text + "\n" + "\n".join(added) + "\n", added


def notes(repo: Any) -> int:
    path = os.environ.get("DREAM_TRANSCRIPT")
    if not path:
        print("builtin:notes: no transcript in this pass (run git dream --from SOURCE); nothing to do")
        return 0
    with open(path, encoding="utf-8") as fh:
        records = json.load(fh)
    found = statements(records)
    if not found:
        print("builtin:notes: the transcript holds no explicit 'remember' or 'I prefer' statements")
        return 0
    with WriteSession(repo, tool="builtin:notes") as session:
        data = session.read(HUMAN)
        if data is None:
            mf = memfile.MemFile(HUMAN_DESCRIPTION, "")
        else:
            mf = memfile.parse(memfile.decode_strict(data, HUMAN))
            if mf.read_only:
                print(f"builtin:notes: {HUMAN} is read_only; {_plural(len(found), 'statement')} not recorded")
                return 1
        body, added = add_notes(mf.body, found)
        if not added:
            print(f"builtin:notes: all {_plural(len(found), 'statement')} are already in {HUMAN}")
            return 0
        content = (memfile.render_file(mf, body=body) if data is not None
                   else memfile.render(HUMAN_DESCRIPTION, body)).encode()
        days = sorted({line[2:12] for line in added})
        sha = session.commit([Change(HUMAN, content)], op="notes",
                             reason=f"Record {_plural(len(added), 'statement')} the user made explicitly "
                                    f"({', '.join(days)})")
    print(f"{sha[:7]} added to {HUMAN}:")
    print("\n".join(added))
    return 0


def main(argv: Sequence[str]) -> int:
    name = argv[0] if argv else ""
    if name == "noop":
        return 0
    if name not in ("tidy", "notes"):
        print(f"usage: python -m gitmemfs.dream.builtin tidy|notes|noop (got {name!r})", file=sys.stderr)
        return 2
    try:
        repo = open_repo()
        return tidy(repo) if name == "tidy" else notes(repo)
    except MemfsError as exc:
        print(f"builtin:{name}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
