"""The memory rules: one pure validator over file bytes.

The pre-commit hook, `git memory check` (staged, whole tree, or every commit of
a range), the server hooks, the edit commands and the dream merge all call
`check_change` / `check_state`, so a rule can only be slipped past by not
running git-memfs at all. Nothing here runs git or touches the disk.

Messages keep upstream's hook wording where it exists, so agents trained on it
recognise them; the rules upstream lacks (deletes and renames of read_only
files, real YAML, encodings, symlinks) add their own.
"""
from __future__ import annotations

from gitmemfs.core import entries, memfile
from gitmemfs.core import layout as layouts
from gitmemfs.core.memfile import Entry, FrontmatterError

SCOPES = ("letta", "all")
DEFAULT_SCOPE = "letta"
ALLOWED = " ".join(memfile.ALLOWED_KEYS)
SYMLINK_MODE = "120000"

# Setting read_only is refused like any change to it; sync forgives it (see remote.py).
READ_ONLY_SET = "'read_only' is a protected field and cannot be set by the agent"



def _flat_skill(path: str) -> bool:
    """`skills/NAME.md` (optionally under `memory/`), any case: a skill that is not a folder.
    ASCII paths without `re` (it costs ~8 ms on the hook path); others through the
    case-insensitive pattern, which also folds letters such as U+017F to ASCII."""
    if not path.isascii():
        import re
        return re.match(r"^(?:memory/)?skills/[^/]+\.md$", path, re.IGNORECASE) is not None
    rel = path.lower()
    rel = rel[len("memory/"):] if rel.startswith("memory/") else rel
    name = rel[len("skills/"):]
    return rel.startswith("skills/") and len(name) > 3 and name.endswith(".md") and "/" not in name


ROOT_KEYS = ("name", "description")  # exactly these in the letta-root layout
APPROVE_PROTECT = "protect"

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, Collection, Iterable, Mapping


class Problem:
    """One broken rule: `path`, `message`, and the commit it was found in (ranges).
    (A plain class: NamedTuple and namedtuple cost 1-2 ms of imports in every commit.)"""

    __slots__ = ("path", "message", "commit")

    def __init__(self, path: str, message: str, commit: str | None = None):
        self.path = path
        self.message = message
        self.commit = commit

    def _key(self) -> tuple[str, str, str | None]:
        return self.path, self.message, self.commit

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Problem) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Problem({self.path!r}, {self.message!r}, {self.commit!r})"

    def __str__(self) -> str:
        prefix = f"{self.commit[:7]} " if self.commit else ""
        return f"{prefix}{self.path}: {self.message}"

    def as_dict(self) -> dict[str, str]:
        out = {"path": self.path, "message": self.message}
        if self.commit:
            out["commit"] = self.commit
        return out


def valid_scope(value: str | None) -> str:
    """The check scope from `memory.checkScope`; unknown values raise ValueError."""
    scope = (value or DEFAULT_SCOPE).strip().lower()
    if scope not in SCOPES:
        raise ValueError(f"memory.checkScope must be one of {', '.join(SCOPES)} (got {value!r})")
    return scope


def _strip_prefix(path: str) -> str:
    return path[len("memory/"):] if path.startswith("memory/") else path


def is_markdown(path: str) -> bool:
    return path.lower().endswith(".md")


def in_scope(path: str, scope: str, layout: str = layouts.DEFAULT,
             indexed: Callable[[str], bool] | None = None) -> bool:
    """Whether frontmatter rules apply. In the letta layout: letta scope = system/
    and reference/; all = every .md outside skills/; an optional leading `memory/`
    is tolerated. In letta-root: every file that counts as memory (the scope does not
    apply). In plain: every file (its rules only look at read_only)."""
    if layout != layouts.LETTA:
        return layouts.is_memory(path, layout, indexed)
    if not is_markdown(path):
        return False
    rel = _strip_prefix(path)
    if scope == "all":
        return not rel.startswith("skills/")
    return rel.startswith(("system/", "reference/"))


def _read_only_state(data: bytes | None) -> tuple[bool, bool]:
    """(has a read_only key, is protected) for a previous version of a file.

    Falls back to a line scan when the old version does not parse, so a broken
    file cannot launder its own protection away.
    """
    if data is None:
        return False, False
    text = data.decode("utf-8", "replace").lstrip("\ufeff")
    try:
        fm, _, _ = memfile.split(text)
    except FrontmatterError:
        return False, False
    try:
        found = [e for e in memfile.parse_entries(fm) if e.key == "read_only"]
    except FrontmatterError as exc:
        if exc.entries is not None:  # duplicate keys: protected if any value protects
            found = [e for e in exc.entries if e.key == "read_only"]
        else:
            line = read_only_line(fm)
            found = [] if line is None else [line]
    if not found:
        return False, False
    return True, memfile.protects(found)


def read_only_line(fm: str) -> Entry | None:
    """The read_only entry of frontmatter that does not parse, found line by line:
    a broken file still counts as protected (and cannot launder its protection).
    With several such lines, a truthy one wins (fail closed)."""
    import re  # only for broken frontmatter, never on a clean commit's path

    lines = [Entry("read_only", m.group(1).strip().strip("'\""), m.group(0))
             for m in re.finditer(r"(?m)^[ \t]*[\"']?read_only[\"']?[ \t]*:(.*)$", fm)]
    return next((e for e in lines if memfile.is_truthy(e)), lines[0] if lines else None)


def is_protected(data: bytes | None) -> bool:
    """Whether a file's current bytes make it read_only, judged as `check_change` does."""
    return _read_only_state(data)[1]


def content_checked(path: str, layout: str = layouts.DEFAULT) -> bool:
    """Whether the rules read this file's bytes: Markdown in the Letta layouts, every
    file in plain (any name is a memory file there)."""
    return layout == layouts.PLAIN or is_markdown(path)


def _encoding(data: bytes, layout: str = layouts.DEFAULT) -> str | None:
    enc = memfile.encoding_problem(data)
    if enc is None or (enc.kind == "bom" and layout == layouts.PLAIN):
        return None
    hint = "; save it as UTF-8 without BOM" if enc.kind == "bom" else "; convert the file to UTF-8"
    return str(enc.args[0]) + hint


def _entries(fm: str) -> tuple[list[Entry] | None, list[str]]:
    """The frontmatter's entries and the problem that stopped parsing them; a duplicate
    key still yields every entry (the entries' own problems are reported too)."""
    try:
        return memfile.parse_entries(fm), []
    except FrontmatterError as exc:
        return exc.entries if exc.reason == "duplicate" else None, [exc.detail or "invalid frontmatter"]


def _text(data: bytes) -> str:
    """Clean UTF-8 text, without a byte order mark (reported on its own)."""
    text = data.decode("utf-8")
    return text[1:] if text.startswith("\ufeff") else text


def _frontmatter(data: bytes) -> list[str]:
    """Frontmatter problems of one in-scope file (already known to be clean UTF-8)."""
    try:
        fm, _, _ = memfile.split(_text(data))
    except FrontmatterError as exc:
        if exc.reason == "unclosed":
            return ["frontmatter opened but never closed (missing closing ---)"]
        return ["missing frontmatter (must start with ---)"]
    entries, problems = _entries(fm)
    if entries is None:
        return problems
    problems += [f"unknown frontmatter key '{e.key}' (allowed: {ALLOWED})"
                 for e in entries if e.key not in memfile.ALLOWED_KEYS]
    desc = next((e for e in entries if e.key == "description"), None)
    text = (desc.value or "").strip() if desc is not None and desc.scalar else ""
    if desc is None:
        problems.append("missing required field 'description'")
    elif not desc.scalar:
        problems.append("'description' must be a single line of text")
    elif not text:
        problems.append("'description' must not be empty")
    elif "\n" in text or "\r" in text:
        problems.append("'description' must be a single line")
    return problems


def _frontmatter_root(data: bytes, path: str) -> list[str]:
    """letta-root: a MEMORY.md index carries no frontmatter; every other memory file
    carries exactly `name` and `description`, each one non-empty line."""
    text = _text(data)
    try:
        fm, _, _ = memfile.split(text)
    except FrontmatterError as exc:
        if layouts.is_index(path):
            return []
        if exc.reason == "unclosed":
            return ["frontmatter opened but never closed (missing closing ---)"]
        return ["missing frontmatter (must start with --- and hold name and description)"]
    if layouts.is_index(path):
        return ["MEMORY.md is a folder index and carries no frontmatter; remove the --- block"]
    entries, problems = _entries(fm)
    if entries is None:
        return problems
    for e in entries:
        if e.key == "read_only":
            problems.append("'read_only' is not part of the letta-root layout; a person protects "
                            "files with git memory protect")
        elif e.key not in ROOT_KEYS:
            problems.append(f"unknown frontmatter key '{e.key}' (allowed: name description)")
    for key in ROOT_KEYS:
        entry = next((e for e in entries if e.key == key), None)
        value = (entry.value or "").strip() if entry is not None and entry.scalar else ""
        if entry is None:
            problems.append(f"missing required field '{key}'")
        elif not entry.scalar or "\n" in value or "\r" in value:
            problems.append(f"'{key}' must be a single line of text")
        elif not value:
            problems.append(f"'{key}' must not be empty")
    return problems


def _layout_frontmatter(data: bytes, path: str, layout: str) -> list[str]:
    """The frontmatter rules of one layout (plain has none beyond read_only)."""
    if layout == layouts.ROOT:
        return _frontmatter_root(data, path)
    if layout == layouts.PLAIN:
        return []
    return _frontmatter(data)


def check_state(path: str, data: bytes, *, scope: str, mode: str | None = None,
                layout: str = layouts.DEFAULT, indexed: Callable[[str], bool] | None = None) -> list[Problem]:
    """Rules for a file as it stands (no history): entry, layout, encoding, frontmatter.
    `indexed(folder)` says whether `folder/MEMORY.md` exists (letta-root only)."""
    out = entries.entry_problems(path, mode, data if mode == SYMLINK_MODE else None)
    if mode == entries.GITLINK:  # `data` is no file's content
        return [Problem(path, m) for m in out]
    if layout != layouts.PLAIN and _flat_skill(path):
        out.append("invalid skill path (skills must be folders). Use skills/<name>/SKILL.md")
    if layout == layouts.ROOT and indexed is not None:
        index = layouts.missing_index(path, indexed)
        if index is not None:  # Letta 0.32 refuses it too, on every later commit
            out.append(f"missing required index {index}; a folder holds memory only with its own "
                       f"index: create {index} or move the file")
    if content_checked(path, layout):
        if mode == SYMLINK_MODE:
            if in_scope(path, scope, layout, indexed):
                out.append("is a symbolic link; memory files must be regular files")
        else:
            enc = _encoding(data, layout)
            if enc is not None:
                out.append(enc)
            # Every problem of the file: a UTF-8 BOM still leaves its frontmatter readable.
            readable = enc is None or enc.startswith(memfile.BOM_PROBLEM)
            if readable and in_scope(path, scope, layout, indexed):
                out.extend(_layout_frontmatter(data, path, layout))
    return [Problem(path, m) for m in out]


def check_kept(path: str, old: bytes | None, *, deleted: bool, changed: bool,
               commit: str | None = None, layout: str = layouts.DEFAULT) -> list[Problem]:
    """A merge against one of its other parents (`old` is the file there): a file
    protected in that parent must come through exactly as it was. read_only files
    cannot change on any side, so a legitimate merge always keeps them; a merge
    whose first parent is an old commit could otherwise drop one unseen."""
    if not changed or not content_checked(path, layout) or not _read_only_state(old)[1]:
        return []
    return [Problem(path, f"file is read_only and cannot be {'deleted' if deleted else 'modified'}", commit)]


def check_change(path: str, old: bytes | None, new: bytes | None, *, scope: str,
                 new_mode: str | None = None, commit: str | None = None,
                 old_mode: str | None = None, layout: str = layouts.DEFAULT,
                 indexed: Callable[[str], bool] | None = None,
                 approvals: Collection[str] = ()) -> list[Problem]:
    """Rules for one path changing from `old` to `new` (None = absent).

    Renames must be given as a delete plus an add (diff with --no-renames), so a
    read_only file cannot leave by `git mv` either. Any change of a protected
    path's entry, its mode included (to a gitlink, a symlink, 100755), modifies it.
    `approvals` holds what a person approved for this commit (core/approval.py):
    with `protect`, read_only may be added, removed or changed (`git memory protect`).
    """
    def problems(messages: list[str]) -> list[Problem]:
        return [Problem(path, m, commit) for m in messages]

    mode_changed = old_mode is not None and new_mode is not None and old_mode != new_mode
    if old == new and new_mode != SYMLINK_MODE and not mode_changed:
        return []
    readable_old = old_mode not in (entries.GITLINK, SYMLINK_MODE)
    checked = content_checked(path, layout)
    had_key, was_protected = _read_only_state(old) if checked and readable_old else (False, False)
    approved = APPROVE_PROTECT in approvals
    if new is None:
        return problems(["file is read_only and cannot be deleted"] if was_protected and not approved else [])
    if was_protected and not approved:
        return problems(["file is read_only and cannot be modified"])
    found = [Problem(p.path, p.message, commit)
             for p in check_state(path, new, scope=scope, mode=new_mode, layout=layout, indexed=indexed)]
    if entries.is_control(path):
        found += problems([entries.CONTROL_PROBLEM])
    if new_mode == entries.GITLINK:
        return found
    if not checked or new_mode == SYMLINK_MODE or approved or layout == layouts.ROOT:
        return found  # letta-root refuses read_only as a key of its own (see _frontmatter_root)
    has_key, now_protected = _read_only_state(new)
    if has_key and not had_key:
        found += problems([READ_ONLY_SET])
    elif had_key and not has_key:
        found += problems(["'read_only' is a protected field and cannot be removed by the agent"])
    elif had_key and now_protected != was_protected:
        found += problems(["'read_only' is a protected field and cannot be changed by the agent"])
    return found


def layout_moves(changes: Mapping[str, bytes | None], olds: Mapping[str, bytes | None], *, scope: str,
                 configured: str | None, layout: str, indexed: Callable[[str], bool], approved: bool,
                 listed: Callable[[str], Iterable[str]], read: Callable[[str], bytes | None],
                 limits: Callable[[str, bytes], list[str]] | None = None) -> list[Problem]:
    """The write path's view of what a change does to the layout (the gate's is in
    gate/check.py): adding or removing the root `MEMORY.md` is a layout change, refused
    unless `approved`; every file under a folder whose index appears or vanishes is
    judged as it will stand (`listed(folder)` gives the tracked paths under a folder,
    "" = all; `read` their bytes; `limits(path, data)` the size problems, if any)."""
    if configured == layouts.PLAIN:
        return []
    out: list[Problem] = []
    folders = []
    for path, new in changes.items():
        folder = layouts.index_folder(path)
        old = olds.get(path)
        if folder is None or (old is None) == (new is None):
            continue
        folders.append(folder)
        if folder:
            continue
        if configured == layouts.ROOT:
            message = None if new is not None else layouts.flip_problem(True, False, approved)
        elif old is None and not any(is_markdown(p) for p in listed("")):
            message = None  # no memory yet (a new repository, a config file alone): the first files choose
        else:
            message = layouts.flip_problem(old is not None, new is not None, approved)
        if message:
            out.append(Problem(layouts.INDEX, message))
    if layout != layouts.ROOT or not folders:
        return out
    seen = {p for p, new in changes.items() if new != olds.get(p)}  # an unchanged rewrite is judged here
    for folder in sorted(set(folders)):
        for path in listed(folder):
            if path in seen or not is_markdown(path) or read(path) is None:
                continue
            seen.add(path)
            data = read(path) or b""
            messages = [p.message for p in check_state(path, data, scope=scope, layout=layout, indexed=indexed)]
            if limits is not None and layouts.is_memory(path, layout, indexed):
                messages += limits(path, data)
            out += [Problem(path, m + " (it becomes memory in this commit)") for m in messages]
    return out
