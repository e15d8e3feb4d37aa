"""Which tree entries a memory repository may hold: modes, names, symlink targets.

Pure functions over a path, a mode and (for a symlink) its target, called by
`rules` (the one validator), so every gate judges entries the same way:

- a memory path is a regular file (mode 100644 or 100755); a gitlink (160000) is
  never memory, and a symbolic link may not point into `.git` or out of the
  repository (`rules` also refuses symlinked Markdown in checked scope);
- a name git's fsck flags (`.git` in its HFS and NTFS spellings, `git~1`, `.`,
  `..`, trailing dots or spaces) is refused: one such tree makes every later push
  to a server with `receive.fsckObjects` fail;
- git control files (`.gitattributes`, `.gitmodules`, `.mailmap`, any `.git*`
  below the top folder) are not memory: adding or changing one is refused;
- a path is bounded (`MAX_DEPTH` components, `MAX_NAME_BYTES` per component,
  `MAX_PATH_BYTES` in all) and holds no control character (C0, DEL, C1): a path
  1,100 folders deep broke every reader, and ESC or BEL in a name reached terminals.

This module is on the pre-commit hook's path: no `re`, sets and str methods only.
"""
from __future__ import annotations

REGULAR = ("100644", "100755")
SYMLINK = "120000"
GITLINK = "160000"

# Code points HFS+ ignores when it compares names (git's utf8.c, next_hfs_char).
_HFS_IGNORED = dict.fromkeys([0x200c, 0x200d, 0x200e, 0x200f, *range(0x202a, 0x202f),
                              *range(0x206a, 0x2070), 0xfeff])
_DIGITS = "0123456789"
# The control files and their hashed 8.3 fallbacks (git's is_ntfs_dot_generic).
_SHORT_STEMS = (("gitmodules", "gi7eba"), ("gitattributes", "gi7d29"), ("gitignore", "gi250a"),
                ("mailmap", "maba30"))


def _is_short_name(name: str) -> bool:
    """8.3 short names git's fsck knows (is_ntfs_dotgit, is_ntfs_dot_generic): `git~1`;
    a control file's first six letters and ~1..~4; or its hashed fallback, whose eight
    characters are a prefix of the hash, `~`, a digit 1-9 and more digits. Written
    without `re`, which the hook path never imports."""
    name = name.rstrip(". ")
    if name == "git~1":
        return True
    if len(name) != 8 or "~" not in name:
        return False
    cut = name.index("~")
    tail = name[cut + 1:]
    if not tail or tail[0] not in "123456789" or any(c not in _DIGITS for c in tail):
        return False
    for needle, fallback in _SHORT_STEMS:
        if cut == 6 and name[:6] == needle[:6] and tail in "1234" and len(tail) == 1:
            return True
        if cut <= 6 and fallback.startswith(name[:cut]):
            return True
    return False
_CONTROL = (".gitattributes", ".gitmodules", ".mailmap")

# Bounds on a memory path (docs/memory-format.md, "Paths"). Generous for memory (a
# real one nests a few folders), safe for every reader and file system: 255 bytes is
# a name's limit on ext4, APFS and NTFS; 512 bytes leaves room under macOS's
# 1,024-byte PATH_MAX for where a memory (and a dream's worktree) lives.
MAX_DEPTH = 32
MAX_NAME_BYTES = 255
MAX_PATH_BYTES = 512
_C1 = "".join(map(chr, range(0x80, 0xa0)))


def control_char(text: str) -> str | None:
    """The first control character in `text` (C0, DEL or C1), or None."""
    if text.isascii() and min(text, default=" ") >= " " and "\x7f" not in text:
        return None  # the usual case, at C speed
    for c in text:
        if c < " " or c == "\x7f" or c in _C1:
            return c
    return None


def _size(text: str) -> int:
    """Bytes in UTF-8 (a name read from git as surrogate escapes counts its bytes)."""
    if text.isascii():
        return len(text)
    try:
        return len(text.encode("utf-8", "surrogateescape"))
    except UnicodeEncodeError:
        return len(text.encode("utf-8", "surrogatepass"))


def bound_problem(path: str) -> str | None:
    """Why `path` is too deep, too long or holds a control character, if it is."""
    bad = control_char(path)
    if bad is not None:
        return (f"holds the control character U+{ord(bad):04X}; memory paths are printable "
                "text (rename it)")
    depth = path.count("/") + 1
    if depth > MAX_DEPTH:
        return f"is {depth:,} components deep; memory paths have at most {MAX_DEPTH}"
    size = _size(path)
    if size > MAX_PATH_BYTES:
        return f"is {size:,} bytes long; memory paths have at most {MAX_PATH_BYTES} (UTF-8)"
    for component in path.split("/"):
        size = _size(component)
        if size > MAX_NAME_BYTES:
            return (f"has a {size:,}-byte component; a file or folder name has at most "
                    f"{MAX_NAME_BYTES} bytes (UTF-8)")
    return None

GITLINK_PROBLEM = "is a gitlink (a submodule entry); memory paths must be regular files"
CONTROL_PROBLEM = ("is a git control file, not memory; agents and dreams cannot add or change it "
                   "(a person may commit it with the hooks off)")


def fold(component: str) -> str:
    """A name as HFS+ or NTFS would compare it: ignorable code points dropped,
    ASCII case folded, an NTFS stream suffix and trailing dots and spaces dropped."""
    name = component.translate(_HFS_IGNORED)
    name = "".join(c.lower() if c < "\x80" else c for c in name)
    name = name.split(":", 1)[0]
    stripped = name.rstrip(". ")
    return stripped if stripped or not name else name  # `.`, `..` stay themselves


def is_dotgit(component: str) -> bool:
    """Whether a filesystem on some platform would take this name for `.git`."""
    name = fold(component)
    return name == ".git" or name == "git~1"


def name_problem(path: str) -> str | None:
    """Why git's fsck (or a checkout on macOS or Windows) would flag `path`, or a
    reader could not show it, if either would."""
    bound = bound_problem(path)
    if bound is not None:
        return bound
    for component in path.split("/"):
        if component in ("", ".", ".."):
            return "has an empty, '.' or '..' path component; git's fsck refuses such trees"
        if is_dotgit(component):
            return (f"has a path component {component!r} that git reads as .git on some systems; "
                    "git's fsck refuses such trees")
        if _is_short_name(fold(component)):
            return (f"has a path component {component!r} that is a Windows short name of a git "
                    "control file; git's fsck refuses such trees")
        if component[-1] in ". ":
            return (f"has a path component {component!r} ending in a dot or a space, which Windows "
                    "drops; rename it")
        if "\\" in component:
            return f"has a backslash in the path component {component!r}; use / between folders"
    return None


def is_control(path: str) -> bool:
    """A git control file: `.gitattributes`, `.gitmodules` or `.mailmap` anywhere (in
    any spelling a filesystem folds to them), or any `.git*` name below the top
    folder (a nested `.gitignore`, `.gitattributes`, …)."""
    parts = path.split("/")
    for depth, component in enumerate(parts):
        name = fold(component)
        if name in _CONTROL:
            return True
        if depth > 0 and name.startswith(".git"):
            return True
    return False


def symlink_problem(path: str, target: bytes) -> str | None:
    """A symlink may only point at another path inside the repository, never into `.git`."""
    text = target.decode("utf-8", "replace")
    shown = text if len(text) <= 80 else text[:77] + "..."
    if not text or text.startswith("/") or "\0" in text:
        return f"is a symbolic link to {shown!r}, outside the memory; memory paths must stay in the repository"
    parts = path.split("/")[:-1]
    for component in text.split("/"):
        if component in ("", "."):
            continue
        if component == "..":
            if not parts:
                return (f"is a symbolic link to {shown!r}, outside the memory; "
                        "memory paths must stay in the repository")
            parts.pop()
            continue
        if is_dotgit(component):
            return f"is a symbolic link to {shown!r}, into .git; memory paths must stay out of .git"
        parts.append(component)
    return None


def entry_problems(path: str, mode: str | None, target: bytes | None = None) -> list[str]:
    """Problems of one entry as it stands: its name, its mode, a symlink's target."""
    out = []
    name = name_problem(path)
    if name is not None:
        out.append(name)
    if mode == GITLINK:
        out.append(GITLINK_PROBLEM)
    elif mode == SYMLINK and target is not None:
        link = symlink_problem(path, target)
        if link is not None:
            out.append(link)
    elif mode is not None and mode not in REGULAR and mode != SYMLINK:
        out.append(f"has mode {mode}; memory paths must be regular files")
    return out
