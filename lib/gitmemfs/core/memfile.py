"""Memory file format: YAML frontmatter + Markdown body.

    ---
    description: One line saying what this file holds
    read_only: true          (optional, protected)
    ---
    body, preserved byte for byte

Frontmatter is real YAML. Most files hold only `key: plain value` lines, so
those are read by a small exact parser; anything else (quotes, comments, block
scalars, continuation lines) goes through PyYAML. Both paths give the same
result; the fast one keeps `yaml` off the pre-commit hook's import path.

`read_only` is judged on its scalar text, fail-closed: only an explicit false
(`false`, `no`, `off`, `0`, empty, null) makes a file writable, so `"true"`,
`True` and `yes` all protect it (upstream accepted only a bare `true`).
"""
from __future__ import annotations

ALLOWED_KEYS = ("description", "read_only", "limit")
_NULLS = {"~", "null", "Null", "NULL"}
_FALSY = {"false", "no", "off", "0", "", "null", "~"}

# No `re` here: this module is on the pre-commit hook's path, and `re` (with the
# `enum`, `functools` and `collections` it pulls in) costs ~8 ms, half a hook run.
_KEY_FIRST = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_KEY_REST = _KEY_FIRST | frozenset("0123456789-")
# A plain YAML scalar we can read without a YAML parser: no indicator first
# character, no ": " / " #" inside, no trailing ':' or space, only printable characters.
_INDICATORS = frozenset(" -?:,[]{}#&*!|>'\"%@`")
# Plain scalars that YAML would resolve to something other than a string.
_NON_STR_WORDS = frozenset(("y", "n", "yes", "no", "true", "false", "on", "off", "null", "~", "=", "<<"))


def _printable(text: str) -> bool:
    """YAML's printable characters (no tab, no C0/C1 control, no surrogate, no U+FFFE/F)."""
    if text.isascii():
        return text.isprintable()  # ASCII printable is exactly 0x20-0x7e
    for ch in text:
        c = ord(ch)
        if c < 0x20 or 0x7f <= c <= 0x9f and c != 0x85 or 0xd800 <= c <= 0xdfff or c in (0xfffe, 0xffff):
            return False
    return True


def _safe_plain(text: str) -> bool:
    return (bool(text) and text[0] not in _INDICATORS and text[-1] not in ": "
            and ": " not in text and " #" not in text and _printable(text))


def _non_str(text: str) -> bool:
    return text.lower() in _NON_STR_WORDS or text[:1] in ("-", "+", ".") or text[:1].isdigit() and text[:1].isascii()


def _key_line(line: str) -> tuple[str, str] | None:
    """`key: value` with a plain key and a non-empty value (surrounding blanks
    dropped), or None: what the fast path reads."""
    colon = line.find(":")
    if colon <= 0:
        return None
    key, rest = line[:colon], line[colon + 1:]
    if key[0] not in _KEY_FIRST or not all(ch in _KEY_REST for ch in key[1:]):
        return None
    value = rest.strip(" \t")
    if not value or rest[0] not in " \t":
        return None
    return key, value


class FrontmatterError(ValueError):
    """A problem with a file's frontmatter; `reason` is one of the kinds below."""

    def __init__(self, reason: str, detail: str = "", entries: list[Entry] | None = None):
        super().__init__(detail or reason)
        self.reason = reason  # "missing" | "unclosed" | "yaml" | "not_mapping" | "duplicate"
        self.detail = detail
        self.entries = entries  # "duplicate": every entry, so protection can still be judged


class EncodingProblem(ValueError):
    """Bytes that are not clean UTF-8 text; the message names the cause."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind  # "utf16le" | "utf16be" | "utf8" | "nul" | "bom"


class Entry:
    """One top-level frontmatter entry. (Plain classes, not dataclasses: this module is
    on the pre-commit hook's import path, where `dataclasses` costs ~6 ms.)"""

    __slots__ = ("key", "value", "source", "scalar")

    def __init__(self, key: str, value: str | None, source: str, scalar: bool = True):
        self.key = key
        self.value = value      # scalar text (quotes removed); None for non-scalar values
        self.source = source    # the entry exactly as written, for faithful re-rendering
        self.scalar = scalar


class MemFile:
    """A parsed memory file. Rendering it back preserves the body byte for byte."""

    __slots__ = ("description", "body", "entries", "eol", "head")

    def __init__(self, description: str, body: str, entries: list[Entry] | None = None,
                 eol: str = "\n", head: str | None = None):
        self.description = description
        self.body = body
        self.entries = entries or []
        self.eol = eol
        self.head = head  # the frontmatter block exactly as read, for body-only edits

    def get(self, key: str) -> Entry | None:
        for entry in self.entries:
            if entry.key == key:
                return entry
        return None

    @property
    def read_only(self) -> bool:
        return protects(self.entries)


def protects(entries: list[Entry]) -> bool:
    """Whether entries make a file read_only: any truthy `read_only` does, so a
    duplicate key protects when any of its values would (one rule for the hook and
    the tools, issue 12 item 12)."""
    return any(e.key == "read_only" and is_truthy(e) for e in entries)


def is_truthy(entry: Entry) -> bool:
    """Fail-closed truth of a `read_only` entry: anything but an explicit false protects."""
    if not entry.scalar:
        return True
    return (entry.value or "").strip().lower() not in _FALSY


# --- bytes -> text ----------------------------------------------------------------

BOM_PROBLEM = "starts with a UTF-8 byte order mark"


def encoding_problem(data: bytes) -> EncodingProblem | None:
    """Why `data` is not acceptable memory text (UTF-8, no BOM, no NUL), or None."""
    if data.startswith(b"\xff\xfe"):
        return EncodingProblem("utf16le", "has UTF-16LE BOM")
    if data.startswith(b"\xfe\xff"):
        return EncodingProblem("utf16be", "has UTF-16BE BOM")
    if b"\0" in data:
        return EncodingProblem("nul", "contains NUL bytes, possibly UTF-16")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return EncodingProblem("utf8", f"is not valid UTF-8 ({bad_byte(data, exc.start)})")
    if data.startswith(b"\xef\xbb\xbf"):
        return EncodingProblem("bom", BOM_PROBLEM)
    return None


def decode_strict(data: bytes, path: str) -> str:
    """Decode memory text, upstream's strict reader wording; a UTF-8 BOM is dropped."""
    if data.startswith(b"\xff\xfe") or data.startswith(b"\xfe\xff"):
        which = "UTF-16LE" if data.startswith(b"\xff\xfe") else "UTF-16BE"
        raise EncodingProblem(which.lower().replace("-", ""),
                              f"File is not valid UTF-8 text: {path}. Detected {which} BOM; "
                              "convert the file to UTF-8 and retry.")
    if b"\0" in data:
        raise EncodingProblem("nul", f"File is not valid UTF-8 text: {path}. The file contains NUL "
                                     "bytes (possibly UTF-16); convert the file to UTF-8 and retry.")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EncodingProblem("utf8", f"File is not valid UTF-8 text: {path}. The file contains bytes "
                                      f"that cannot be decoded as UTF-8 ({bad_byte(data, exc.start)}); "
                                      "convert the file to UTF-8 (e.g. iconv -f latin1 -t utf-8) "
                                      "and retry.") from None
    return text[1:] if text.startswith("\ufeff") else text


def bad_byte(data: bytes, at: int) -> str:
    """Where the first byte UTF-8 cannot read is, as a person finds it in an editor."""
    line, start = data.count(b"\n", 0, at) + 1, data.rfind(b"\n", 0, at) + 1
    return f"byte 0x{data[at]:02x} at line {line}, column {at - start + 1}"


# --- text -> frontmatter + body -------------------------------------------------------

def split(text: str) -> tuple[str, str, str]:
    """Split into (frontmatter text, body, eol). Raises FrontmatterError."""
    first_end = text.find("\n")
    first = text if first_end < 0 else text[:first_end]
    if first.rstrip(" \t\r") != "---" or first_end < 0:
        raise FrontmatterError("missing")
    eol = "\r\n" if first.endswith("\r") else "\n"
    pos = first_end + 1
    while pos <= len(text):
        end = text.find("\n", pos)
        line = text[pos:] if end < 0 else text[pos:end]
        if line.rstrip(" \t\r") == "---":
            fm = text[first_end + 1:pos]
            body = "" if end < 0 else text[end + 1:]
            return fm, body, eol
        if end < 0:
            break
        pos = end + 1
    raise FrontmatterError("unclosed")


def parse_entries(fm: str) -> list[Entry]:
    """The frontmatter's top-level entries. Raises FrontmatterError on bad YAML."""
    entries = _fast_entries(fm)
    if entries is None:
        entries = _yaml_entries(fm)
    seen: set[str] = set()
    for entry in entries:
        if entry.key in seen:
            raise FrontmatterError("duplicate", f"duplicate frontmatter key '{entry.key}'", entries)
        seen.add(entry.key)
    return entries


def _fast_entries(fm: str) -> list[Entry] | None:
    entries = []
    for line in fm.split("\n"):
        line = line.rstrip("\r")
        if not line.strip():
            continue
        kv = _key_line(line)
        if kv is None or not _safe_plain(kv[1]):
            return None
        value = "" if kv[1] in _NULLS else kv[1]
        entries.append(Entry(kv[0], value, line.rstrip(" \t")))
    return entries


def _bad_escape(fm: str, at: int, line: int) -> str:
    """YAML's words for a bad backslash escape in a double-quoted value, made plain."""
    back = fm.rfind("\\", 0, at + 1)
    size = {"x": 4, "u": 6, "U": 10}.get(fm[back + 1:back + 2], 2) if back >= 0 else 0
    shown = fm[back:back + size] if back >= 0 else "a backslash"
    return (f"the escape {shown} on line {line} is not a character YAML can read; write the "
            "character itself, or put the value in single quotes to keep the backslash as it is")


def _yaml_entries(fm: str) -> list[Entry]:
    import yaml  # only for frontmatter the fast path cannot read

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        node = yaml.compose(fm, Loader=loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        if mark is not None and ("escape" in problem or "hexdecimal" in problem):
            problem, where = _bad_escape(fm, mark.index, mark.line + 2), ""
        raise FrontmatterError("yaml", f"invalid YAML in frontmatter: {problem}{where}") from None
    if node is None:
        return []
    if not isinstance(node, yaml.MappingNode):
        raise FrontmatterError("not_mapping", "frontmatter must be a YAML mapping of key: value lines")
    entries = []
    for key_node, value_node in node.value:
        if not isinstance(key_node, yaml.ScalarNode):
            raise FrontmatterError("yaml", "frontmatter keys must be plain names")
        source = fm[key_node.start_mark.index:value_node.end_mark.index].rstrip()
        if isinstance(value_node, yaml.ScalarNode):
            value: str | None = value_node.value
            if value_node.tag == "tag:yaml.org,2002:null":
                value = ""
            entries.append(Entry(key_node.value, value, source))
        else:
            entries.append(Entry(key_node.value, None, source, scalar=False))
    return entries


def parse(text: str) -> MemFile:
    """Parse a memory file. Raises FrontmatterError; a missing description is
    reported with reason "description" so callers can word it their way."""
    fm, body, eol = split(text)
    entries = parse_entries(fm)
    desc_entry = next((e for e in entries if e.key == "description"), None)
    description = (desc_entry.value or "").strip() if desc_entry and desc_entry.scalar else ""
    if not description:
        raise FrontmatterError("description")
    return MemFile(description=description, body=body, entries=entries, eol=eol,
                   head=text[:len(text) - len(body)])


# --- rendering ----------------------------------------------------------------------

def sanitize_description(text: str) -> str:
    """One line: every line break becomes a space, then trim."""
    return text.replace("\r\n", " ").replace("\r", " ").replace("\n", " ").strip()


def yaml_scalar(text: str) -> str:
    """`text` as a YAML scalar: plain when that reads back as the same string."""
    if _safe_plain(text) and not _non_str(text):
        return text
    import yaml

    dumped = yaml.safe_dump({"d": text}, allow_unicode=True, width=2**31 - 1,
                            default_flow_style=False, sort_keys=False)
    return dumped[len("d: "):].rstrip("\n")


def render(description: str, body: str, *, entries: list[Entry] | None = None,
           eol: str = "\n") -> str:
    """Deterministic layout: `description` first, then every other entry as written."""
    lines = ["---", "description: " + yaml_scalar(sanitize_description(description))]
    for entry in entries or []:
        if entry.key != "description":
            lines.extend(entry.source.split("\n"))
    lines.append("---")
    return eol.join(line.rstrip("\r") for line in lines) + eol + body


def render_file(mf: MemFile, *, description: str | None = None, body: str | None = None) -> str:
    if description is None and mf.head is not None:
        # A body-only edit keeps the frontmatter byte for byte (comments, spacing, quotes).
        return mf.head + (mf.body if body is None else body)
    if mf.head is not None:
        head = _with_description(mf, description)  # type: ignore[arg-type]
        if head is not None:
            return head + (mf.body if body is None else body)
    return render(mf.description if description is None else description,
                  mf.body if body is None else body, entries=mf.entries, eol=mf.eol)


def _with_description(mf: MemFile, description: str) -> str | None:
    """The frontmatter with only its description entry rewritten, every other byte
    (comments, order, quoting, spacing) kept; None when that entry cannot be found
    exactly once at the start of a line (then the frontmatter is rendered afresh)."""
    entry = mf.get("description")
    head = mf.head
    if entry is None or head is None or not entry.scalar:
        return None
    at = [i for i in _find_all(head, entry.source) if i > 0 and head[i - 1] == "\n"]
    if len(at) != 1:
        return None
    line = "description: " + yaml_scalar(sanitize_description(description))
    new = head[:at[0]] + line + head[at[0] + len(entry.source):]
    try:
        again = parse(new)
    except FrontmatterError:
        return None
    return new if again.description == sanitize_description(description) and len(again.entries) == len(
        mf.entries) else None


def _find_all(text: str, part: str) -> list[int]:
    out, start = [], text.find(part)
    while start >= 0 and part:
        out.append(start)
        start = text.find(part, start + 1)
    return out


def to_lf(body: str) -> tuple[str, bool]:
    """(body with CRLF turned into LF, whether it was consistently CRLF).

    Edits work on LF text and write back in the file's own style; a body with
    mixed endings is left exactly as it is.
    """
    if "\r\n" in body and body.count("\n") == body.count("\r\n"):
        return body.replace("\r\n", "\n"), True
    return body, False


def from_lf(body: str, crlf: bool) -> str:
    return body.replace("\n", "\r\n") if crlf else body
