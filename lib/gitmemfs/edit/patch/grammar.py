"""The apply_patch grammar: patch text -> a list of file operations.

    *** Begin Patch
    *** Add File: <path>          followed by '+' lines (the new file)
    *** Delete File: <path>
    *** Update File: <path>
    *** Move to: <path>           optional, right after its Update File line
    @@ [anchor line]              a hunk; more '@@ line' headers narrow the place
     context / -removed / +added  the hunk's lines
    *** End of File               optional: the hunk ends at the end of the file
    *** End Patch

Parsing is pure: nothing is read but the text (and, through path
normalisation, whether the repo has a real `memory/` folder). Every syntax
and path error surfaces here, with upstream's wording and the patch line
number, before the repository is locked or read (reference §2.2, §5 #37).

Differences from upstream, each a fix of reference §5: `*** End of File`
works (#24); `@@ text` is an anchor (#25); the End marker is only the last
non-blank line, unindented (#31); blank lines between operations, before a
hunk and at the end of a hunk are ignored (#30); an Update with a Move and
no hunks is a plain rename.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Union

from gitmemfs.core import paths
from gitmemfs.core.errors import MemfsError
from gitmemfs.core.paths import PathError

TOOL = "memory_apply_patch"
BEGIN = "*** Begin Patch"
END = "*** End Patch"
ADD = "*** Add File:"
DELETE = "*** Delete File:"
UPDATE = "*** Update File:"
MOVE = "*** Move to:"
EOF_MARK = "*** End of File"

# A unified-diff range header (`@@ -3,4 +3,5 @@ …`): its numbers are not trusted
# and it is read as a plain `@@`.
_UNIFIED = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@")


class PatchError(MemfsError):
    """A patch that cannot be parsed or applied; the message is for the agent."""


@dataclass
class Hunk:
    line: int                                   # patch line of the (first) @@ header
    anchors: list[str] = field(default_factory=list)
    body: list[tuple[str, str]] = field(default_factory=list)  # (' ' | '-' | '+', text)
    eof: bool = False

    @property
    def old(self) -> list[str]:
        return [text for kind, text in self.body if kind != "+"]

    @property
    def new(self) -> list[str]:
        return [text for kind, text in self.body if kind != "-"]


@dataclass
class FileOp:
    line: int       # patch line of the directive
    raw: str        # the path as written
    label: str      # the normalised memory label

    @property
    def rel(self) -> str:
        return paths.file_of(self.label)


@dataclass
class AddOp(FileOp):
    lines: list[str] = field(default_factory=list)


@dataclass
class DeleteOp(FileOp):
    pass


@dataclass
class UpdateOp(FileOp):
    move_label: str | None = None
    hunks: list[Hunk] = field(default_factory=list)

    @property
    def dest(self) -> str:
        return paths.file_of(self.move_label or self.label)


Op = Union[AddOp, DeleteOp, UpdateOp]


def fail(message: str) -> PatchError:
    return PatchError(f"{TOOL}: {message}")


def split_lines(text: str) -> list[str]:
    """Lines split on LF or CRLF (a lone CR is content), without the final empty piece."""
    lines = re.split(r"\r?\n", text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _is_directive(line: str) -> bool:
    """A line that ends an Add block or a hunk: an unindented `*** ` line."""
    return line.startswith("*** ")


class Parser:
    def __init__(self, text: str, root: str):
        self.lines = split_lines(text)
        self.root = root
        self.i = 0
        self.end = 0

    def no(self, index: int) -> int:
        return index + 1

    def label(self, raw: str, field_name: str) -> str:
        try:
            return paths.normalize_label(raw, field_name, self.root, tool=TOOL)
        except PathError as exc:
            raise PatchError(str(exc)) from None

    # -- envelope ------------------------------------------------------------------------

    def envelope(self) -> None:
        lines = self.lines
        first = next((i for i, ln in enumerate(lines) if ln.strip()), None)
        if first is None or lines[first].strip() != BEGIN:
            raise fail(f'patch must start with "{BEGIN}"')
        end = next((i for i in range(first + 1, len(lines)) if lines[i].rstrip() == END), None)
        if end is None:
            raise fail(f'patch must end with "{END}"')
        if any(ln.strip() for ln in lines[end + 1:]):
            raise fail(f"unexpected content after {END}")
        self.i, self.end = first + 1, end

    # -- operations ----------------------------------------------------------------------

    def parse(self) -> list[Op]:
        self.envelope()
        ops: list[Op] = []
        while self.i < self.end:
            raw_line = self.lines[self.i]
            line = raw_line.strip()
            if not line:
                self.i += 1
            elif line.startswith(ADD):
                ops.append(self.add(line[len(ADD):].strip()))
            elif line.startswith(DELETE):
                raw = line[len(DELETE):].strip()
                ops.append(DeleteOp(self.no(self.i), raw, self.label(raw, "Delete File path")))
                self.i += 1
            elif line.startswith(UPDATE):
                ops.append(self.update(line[len(UPDATE):].strip()))
            else:
                raise fail(f"unknown patch directive at line {self.no(self.i)}: {line}"
                           + _directive_hint(line))
        if not ops:
            raise fail("no file operations found in patch")
        return ops

    def add(self, raw: str) -> AddOp:
        start = self.i
        label = self.label(raw, "Add File path")
        self.i += 1
        content: list[str] = []
        while self.i < self.end and not _is_directive(self.lines[self.i]):
            line = self.lines[self.i]
            if line.startswith("+"):
                content.append(line[1:])
            elif line.strip():
                raise fail(f"invalid Add File line at {self.no(self.i)}: expected '+' prefix")
            elif not _only_blank_until_directive(self.lines, self.i, self.end):
                raise fail(f"invalid Add File line at {self.no(self.i)}: expected '+' prefix "
                           "(write an empty line of the new file as a lone '+')")
            self.i += 1  # (blank lines after the last '+' line are the patch's own spacing)
        if not content:
            raise fail(f"Add File for {raw} must include at least one + line")
        return AddOp(self.no(start), raw, label, content)

    def update(self, raw: str) -> UpdateOp:
        op = UpdateOp(self.no(self.i), raw, self.label(raw, "Update File path"))
        self.i += 1
        self.skip_blank()
        if self.i < self.end and self.lines[self.i].startswith(MOVE):
            op.move_label = self.label(self.lines[self.i][len(MOVE):].strip(), "Move to path")
            self.i += 1
            self.skip_blank()
        while self.i < self.end and not _is_directive(self.lines[self.i]):
            line = self.lines[self.i]
            if not line.startswith("@@"):
                raise fail(f"invalid Update File body at {self.no(self.i)}: expected '@@' hunk header")
            if op.hunks and op.hunks[-1].eof:
                raise fail(f"invalid Update File body at {self.no(self.i)}: a hunk follows the one "
                           f"that ends with {EOF_MARK}; {EOF_MARK} may only end the last hunk")
            op.hunks.append(self.hunk())
        if self.i < self.end and self.lines[self.i].rstrip() == EOF_MARK:
            raise fail(f"invalid Update File body at {self.no(self.i)}: {EOF_MARK} must follow a "
                       "hunk's lines")
        if not op.hunks and op.move_label is None:
            raise fail(f"Update File for {raw} has no hunks")
        return op

    def hunk(self) -> Hunk:
        hunk = Hunk(self.no(self.i))
        # One or more headers: `@@`, `@@ anchor`, or a unified range header.
        while self.i < self.end and self.lines[self.i].startswith("@@"):
            anchor = _anchor(self.lines[self.i])
            if anchor is not None:
                hunk.anchors.append(anchor)
            self.i += 1
        trailing_empty = 0  # completely empty lines at the end so far
        while self.i < self.end:
            line = self.lines[self.i]
            if line.startswith("@@"):
                break
            if _is_directive(line):
                if line.rstrip() == EOF_MARK:
                    hunk.eof = True
                    self.i += 1
                    self.skip_blank()
                break
            if line == "":
                hunk.body.append((" ", ""))  # an editor stripped the context line's space
                trailing_empty += 1
            elif line[0] in " -+":
                hunk.body.append((line[0], line[1:]))
                trailing_empty = 0
            else:
                raise fail(f"invalid hunk line at {self.no(self.i)}: expected one of ' ', '+', '-'")
            self.i += 1
        # Empty lines at the end of a hunk are the patch's own spacing, not context.
        if trailing_empty:
            del hunk.body[-trailing_empty:]
        if not hunk.body:
            raise fail(f"invalid hunk at line {hunk.line}: the @@ header has no ' ', '-' or '+' "
                       "lines after it")
        return hunk

    def skip_blank(self) -> None:
        while self.i < self.end and not self.lines[self.i].strip():
            self.i += 1


def _only_blank_until_directive(lines: list[str], i: int, end: int) -> bool:
    """Whether lines[i:] up to the next directive (or the End marker) are all blank."""
    while i < end and not _is_directive(lines[i]):
        if lines[i].strip():
            return False
        i += 1
    return True


def _anchor(header: str) -> str | None:
    """The anchor line named by a hunk header, or None for a bare `@@`."""
    if _UNIFIED.match(header):
        return None
    text = header[2:]
    if text.startswith(" "):
        text = text[1:]
    return text if text.strip() else None


def _directive_hint(line: str) -> str:
    if line.startswith(MOVE):
        return f" ({MOVE} must directly follow its {UPDATE} line)"
    if line.rstrip() == EOF_MARK:
        return f" ({EOF_MARK} may only end a hunk of an {UPDATE} block)"
    if line.startswith("@@"):
        return f" (a hunk needs an {UPDATE} line before it)"
    return ""


def parse(text: str, root: str) -> list[Op]:
    """Parse a whole patch. Raises PatchError with upstream's wording."""
    return Parser(text, root).parse()
