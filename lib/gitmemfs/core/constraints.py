"""`.memfs.config.json`: size limits tracked in the memory repo, as current Letta keeps them.

    {"version": 1, "maxDepth": 2, "maxFileCharacters": 20000,
     "maxCoreMemoryCharacters": 65536,
     "fileCharacterLimits": [{"pattern": "notes/**", "maxCharacters": 50000},
                             {"pattern": "archive/**", "maxCharacters": null}],
     "protectedPaths": ["persona.md"]}

Unknown keys are errors. `fileCharacterLimits` is ordered, first match wins, and
`maxCharacters: null` lifts the limit for its pattern; in a pattern `*` and `?`
stay inside one path segment and `**` (only as a whole segment) spans any number.
`protectedPaths` is ours (`git memory protect`): paths no agent commit may change.

When the limits apply: always in the letta-root layout (defaults when the file is
absent, as Letta does); in the letta and plain layouts only once the file exists,
so a memory made before this feature is not suddenly over a limit it never chose.

The file itself is protected: a commit that changes it needs a person's approval
of `constraints` (core/approval.py: a person's `git commit` with
`GIT_MEMORY_APPROVE=constraints`, or Letta's `LETTA_MEMORY_CONSTRAINTS_UPDATE=1`, in
their shell); one that only changes `protectedPaths` may instead carry `protect`
(`git memory protect`).
Everything here is pure: bytes in, problems (strings) out.
"""
from __future__ import annotations

from gitmemfs.core import layout as layouts

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from typing import Any, Callable, Collection, Iterable

FILE = layouts.CONSTRAINTS_FILE
DEFAULTS: dict[str, Any] = {"version": 1, "maxDepth": 2, "maxFileCharacters": 20_000,
                            "maxCoreMemoryCharacters": 65_536, "fileCharacterLimits": []}
PROTECTED_KEY = "protectedPaths"
KEYS = (*DEFAULTS, PROTECTED_KEY)
CORE = "(core memory)"  # the path a core-budget problem is reported under

PROTECTED_MESSAGE = ("the size limits in .memfs.config.json are protected: do not raise or remove them "
                     "without the user's explicit approval; a person approves this commit by running it "
                     "with GIT_MEMORY_APPROVE=constraints (or LETTA_MEMORY_CONSTRAINTS_UPDATE=1)")


class ConstraintsError(ValueError):
    """`.memfs.config.json` is not a valid constraints file (the message says why)."""


class Constraints:
    __slots__ = ("version", "max_depth", "max_file", "max_core", "limits", "protected", "present")

    def __init__(self, raw: dict[str, Any], present: bool = True):
        merged = {**DEFAULTS, **raw}
        self.version = merged["version"]
        self.max_depth: int = merged["maxDepth"]
        self.max_file: int = merged["maxFileCharacters"]
        self.max_core: int = merged["maxCoreMemoryCharacters"]
        self.limits = [(item["pattern"], glob(item["pattern"]), item["maxCharacters"])
                       for item in merged["fileCharacterLimits"]]
        self.protected: list[str] = list(raw.get(PROTECTED_KEY) or [])
        self.present = present

    def limit_for(self, path: str) -> tuple[int | None, str]:
        """(the character limit of `path`, the rule that set it); None = no limit."""
        for pattern, rx, limit in self.limits:
            if rx.match(path):
                return limit, f"the fileCharacterLimits pattern {pattern!r}"
        return self.max_file, "maxFileCharacters"


def glob(pattern: str) -> re.Pattern[str]:
    """A path glob: `*`/`?` within a segment, `**` (a whole segment) across any number."""
    import re  # only when a config file has patterns: the hook path imports no regex engine

    if not isinstance(pattern, str) or not pattern or pattern.startswith("/"):
        raise ConstraintsError(f"pattern {pattern!r} must be a relative path glob")
    out = []
    parts = pattern.split("/")
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if part == "**":
            out.append(".*" if last else "(?:[^/]+/)*")
            continue
        if "**" in part:
            raise ConstraintsError(f"pattern {pattern!r}: '**' is allowed only as a whole path segment")
        seg = "".join("[^/]*" if ch == "*" else "[^/]" if ch == "?" else re.escape(ch) for ch in part)
        out.append(seg if last else seg + "/")
    return re.compile("".join(out) + r"\Z")


_SAFE = 2**53 - 1  # JavaScript's Number.isSafeInteger, as Letta's validator tests it


def _whole(value: object) -> int | None:
    """`value` as a whole number the way Letta reads JSON (20000 and 20000.0 alike), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return value if isinstance(value, int) and abs(value) <= _SAFE else None


def parse(data: bytes | None, layout: str | None = None) -> dict[str, Any]:
    """The raw settings of a constraints file; ConstraintsError says everything that is
    wrong, as strictly as Letta's validator (0.32): `version` must be 1, the limits are
    positive whole numbers (maxDepth may be 0), a pattern is a relative glob with `/`
    and `**` only as a whole segment, `maxCharacters` a positive whole number or null.
    `protectedPaths` (ours) is not accepted in the letta-root layout: Letta refuses
    every key it does not know, so the file would block every Letta commit."""
    from gitmemfs.core import jsoninput  # only when a repo has the file: json is off the hook's usual path

    try:
        raw = jsoninput.loads((data or b"").decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ConstraintsError(f"is not valid JSON ({exc})") from None
    if not isinstance(raw, dict):
        raise ConstraintsError("must hold a JSON object")
    keys = KEYS if layout != layouts.ROOT else tuple(k for k in KEYS if k != PROTECTED_KEY)
    errors = [f"unknown key {k!r} (allowed: {', '.join(keys)})" for k in raw if k not in keys]
    if _whole(raw.get("version")) != 1:
        errors.append(f"version must be 1 (got {raw.get('version')!r})")
    if "maxDepth" in raw and ((_whole(raw["maxDepth"]) or 0) < 0 or _whole(raw["maxDepth"]) is None):
        errors.append(f"'maxDepth' must be a non-negative whole number (got {raw['maxDepth']!r})")
    for key in ("maxFileCharacters", "maxCoreMemoryCharacters"):
        if key in raw and (_whole(raw[key]) or 0) <= 0:
            errors.append(f"{key!r} must be a positive whole number (got {raw[key]!r})")
    items = raw.get("fileCharacterLimits", [])
    if not isinstance(items, list):
        errors.append("'fileCharacterLimits' must be a list of {pattern, maxCharacters}")
        items = []
    for i, item in enumerate(items):
        label = f"fileCharacterLimits[{i}]"
        if not isinstance(item, dict):
            errors.append(f"{label} must be an object {{\"pattern\": …, \"maxCharacters\": number or null}}")
            continue
        errors += [f"{label}: unknown key {k!r} (allowed: pattern, maxCharacters)"
                   for k in item if k not in ("pattern", "maxCharacters")]
        pattern = item.get("pattern")
        if (not isinstance(pattern, str) or not pattern or pattern.startswith("/") or "\\" in pattern
                or ".." in pattern.split("/")):
            errors.append(f"{label}: pattern must be a non-empty relative glob using '/' (got {pattern!r})")
        else:
            try:
                glob(pattern)
            except ConstraintsError as exc:
                errors.append(str(exc))
        if "maxCharacters" not in item or (item["maxCharacters"] is not None
                                           and (_whole(item["maxCharacters"]) or 0) <= 0):
            errors.append(f"maxCharacters for {pattern!r} must be a positive whole number or null "
                          f"(got {item.get('maxCharacters', 'nothing')!r})")
    protected = raw.get(PROTECTED_KEY, [])
    if not isinstance(protected, list) or not all(isinstance(p, str) and p for p in protected):
        errors.append(f"'{PROTECTED_KEY}' must be a list of paths")
    if errors:
        raise ConstraintsError("; ".join(errors))
    out = {k: (_whole(v) if k in ("version", "maxDepth", "maxFileCharacters", "maxCoreMemoryCharacters")
               else v) for k, v in raw.items()}
    if items:
        out["fileCharacterLimits"] = [{**item, "maxCharacters": None if item["maxCharacters"] is None
                                       else _whole(item["maxCharacters"])} for item in items]
    return out


def load(data: bytes | None, layout: str) -> Constraints | None:
    """The limits in force for a tree whose config file holds `data` (None = absent):
    None when none apply (letta/plain without the file). Raises ConstraintsError."""
    if data is None:
        return Constraints({}, present=False) if layout == layouts.ROOT else None
    return Constraints(parse(data, layout))


def file_problems(path: str, data: bytes, layout: str, limits: Constraints) -> list[str]:
    """A memory file against the limits: its depth and its size in characters."""
    out = []
    depth = layouts.depth(path, layout)
    if depth > limits.max_depth:
        out.append(f"is {depth} folders deep, over maxDepth ({limits.max_depth}) in .memfs.config.json; "
                   "move it closer to the root")
    limit, rule = limits.limit_for(path)
    if limit is not None:
        size = len(data.decode("utf-8", "replace"))
        if size > limit:
            out.append(f"is {size:,} characters, over {rule} ({limit:,}) in .memfs.config.json; "
                       "shorten it or split it into smaller files")
    return out


def core_problem(sizes: Iterable[int], limits: Constraints) -> str | None:
    total = sum(sizes)
    if total > limits.max_core:
        return (f"core memory is {total:,} characters, over maxCoreMemoryCharacters ({limits.max_core:,}) in "
                ".memfs.config.json; move detail out of the core files")
    return None


def config_problems(old: bytes | None, new: bytes | None, approvals: Collection[str],
                    layout: str | None = None) -> list[str]:
    """A change to `.memfs.config.json` itself: valid, and approved by a person."""
    out = []
    if new is not None:
        try:
            parse(new, layout)
        except ConstraintsError as exc:
            out.append(str(exc))
    if old == new or "constraints" in approvals:
        return out
    if "protect" in approvals and _only_protection_changed(old, new):
        return out
    return out + [PROTECTED_MESSAGE]


def _only_protection_changed(old: bytes | None, new: bytes | None) -> bool:
    try:
        before = parse(old) if old is not None else {}
        after = parse(new) if new is not None else {}
    except ConstraintsError:
        return False
    def limits(raw: dict[str, Any]) -> dict[str, Any]:  # a key at its default is the same as none
        return {k: v for k, v in raw.items() if k != PROTECTED_KEY and DEFAULTS.get(k, object()) != v}

    return limits(before) == limits(after)


def protected_problem(path: str, old: bytes | str | None, new: bytes | str | None, limits: Constraints | None,
                      approvals: Collection[str]) -> str | None:
    """A path listed in `protectedPaths` (of the tree before the change) cannot change
    without a person's approval of `protect` (`git memory unprotect`). `old` and `new`
    are contents or object ids (only compared; None: absent)."""
    if limits is None or path not in limits.protected or old == new or "protect" in approvals:
        return None
    what = "deleted" if new is None else "modified"
    return (f"is protected in .memfs.config.json (protectedPaths) and cannot be {what}; a person "
            "removes the protection with git memory unprotect")


def is_limited(path: str, layout: str, indexed: Callable[[str], bool] | None) -> bool:
    """Whether the limits look at a file (memory files of the layout)."""
    return layouts.is_memory(path, layout, indexed)


def write_problems(changes: dict[str, bytes | None], olds: dict[str, bytes | None],
                   read: Callable[[str], bytes | None], core_paths: Iterable[str], layout: str,
                   indexed: Callable[[str], bool], approvals: Collection[str]) -> list[tuple[str, str]]:
    """The write path's view of the limits: `changes` (path -> new bytes) on top of the
    current tree, which `read` returns. (path, message) pairs."""
    def after(rel: str) -> bytes | None:
        return changes[rel] if rel in changes else read(rel)

    out: list[tuple[str, str]] = []
    if FILE in changes:
        out += [(FILE, m) for m in config_problems(olds.get(FILE), changes[FILE], approvals, layout)]
    try:
        before = load(read(FILE), layout)
        limits = load(after(FILE), layout)
    except ConstraintsError:
        return out
    for rel, new in changes.items():
        hit = protected_problem(rel, olds.get(rel), new, before, approvals)
        if hit:
            out.append((rel, hit))
        if limits is not None and new is not None and is_limited(rel, layout, indexed):
            out += [(rel, m) for m in file_problems(rel, new, layout, limits)]
    if limits is not None and any(r == FILE or layouts.is_core(r, layout) for r in changes):
        paths = set(core_paths) | {r for r in changes if layouts.is_core(r, layout)}
        sizes = [len(data.decode("utf-8", "replace")) for r in paths if (data := after(r)) is not None]
        message = core_problem(sizes, limits)
        if message:
            out.append((CORE, message))
    return out
