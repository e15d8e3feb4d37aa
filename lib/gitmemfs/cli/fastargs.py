"""The one reader of `git memory`'s argv before argparse: an edit's usual line, and
the command word of any other.

argparse and what it imports (re, gettext, enum, ...) cost ~15 ms of every edit,
more than the git commit the edit makes. An agent's edit is nearly always the
same shape: the command, its positional arguments, then `-m REASON` (and `-d` for
create, `--all` for str_replace) and the global options. `parse` reads exactly
that shape and answers what argparse would; for anything else (help, an
abbreviation, `--`, `=`, a value or argument starting with '-', a repeated option,
arguments between options) it returns None and argparse reads the line as ever,
errors included. `command_word` finds the subcommand past the global options, so
cli/memory.py builds only the part of the parser that command needs; `wants_json`
tells the error boundary to answer in JSON even when argparse refuses the line.
tests/test_fastargs.py and tests/test_hotpath.py hold both to argparse's answers.
"""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Sequence

REASON = {"-m": "reason", "--reason": "reason"}
GLOBAL_VALUES = {"--memory-dir": "memory_dir"}
PROPOSE = {"--propose": "propose"}  # every edit takes it
GLOBAL_FLAGS = {"--json": "json", "-q": "quiet", "--quiet": "quiet"}


class Shape:
    """One command's line: positional names (a trailing '?' marks an optional one,
    ':int' an integer), its options with a value, its flags, its handler's name."""

    def __init__(self, positionals: tuple[str, ...], values: dict[str, str], flags: dict[str, str],
                 handler: str, required: tuple[str, ...] = ("reason",)):
        self.positionals = positionals
        self.values = {**values, **REASON, **GLOBAL_VALUES}
        self.flags = {**flags, **PROPOSE, **GLOBAL_FLAGS}
        self.handler = handler
        self.required = required


_STR_REPLACE = Shape(("path", "old", "new"), {}, {"--all": "all"}, "do_str_replace")
_UPDATE_DESCRIPTION = Shape(("path", "description"), {}, {}, "do_update_description")
SHAPES = {
    "create": Shape(("path", "file_text?"), {"-d": "description", "--description": "description"}, {},
                    "do_create", ("description", "reason")),
    "str_replace": _STR_REPLACE,
    "str-replace": _STR_REPLACE,
    "insert": Shape(("path", "line:int", "text"), {}, {}, "do_insert"),
    "delete": Shape(("path",), {}, {}, "do_delete"),
    "rename": Shape(("old_path", "new_path"), {}, {}, "do_rename"),
    "update_description": _UPDATE_DESCRIPTION,
    "update-description": _UPDATE_DESCRIPTION,
}


class Args:
    """What argparse.Namespace would hold."""

    def __init__(self, **values: Any):
        self.__dict__.update(values)

    def __repr__(self) -> str:
        return f"Args({self.__dict__!r})"

    if TYPE_CHECKING:  # any attribute, as argparse.Namespace (not defined at run time)
        def __getattr__(self, name: str) -> Any: ...


def _global_options(argv: Sequence[str]) -> tuple[dict[str, Any], int] | None:
    """The global options before the command, as argparse sets them, and where the
    command is; None for anything but the plain forms."""
    found: dict[str, Any] = {"memory_dir": None, "json": False, "quiet": False}
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        arg = argv[i]
        if arg in GLOBAL_FLAGS:
            found[GLOBAL_FLAGS[arg]] = True
            i += 1
        elif arg in GLOBAL_VALUES and i + 1 < len(argv) and _plain(argv[i + 1]):
            found[GLOBAL_VALUES[arg]] = argv[i + 1]
            i += 2
        else:
            return None
    return found, i


def parse_hook(argv: Sequence[str], handler: Callable[[], Any]) -> Args | None:
    """`hook claude-code EVENT` after the global options, the line Claude Code runs on
    every event (harness/claude_code.py writes it; argparse and its imports were a
    fifth of a Stop hook), and `hook codex notify [--] WORDS... JSON`, the one Codex
    runs after every turn, as argparse reads them (a leading `--` of the notify line
    dropped, as do_hook drops it whether argparse kept it or not); None for any other
    line. `handler()` gives cmd_install's do_hook."""
    head = _global_options(argv)
    if head is None:
        return None
    found, i = head
    rest = argv[i:]
    if rest[:3] == ["hook", "codex", "notify"]:
        words = list(rest[3:])
        if words[:1] == ["--"]:
            words.pop(0)
        if any(w.startswith("-") for w in words):
            return None  # argparse's own reading of dashes in a REMAINDER: let it
        return Args(**found, command="hook", harness="codex", event="notify", rest=words, func=handler())
    if len(rest) != 3 or rest[:2] != ["hook", "claude-code"] or not _plain(rest[2]):
        return None
    return Args(**found, command="hook", harness="claude-code", event=rest[2], rest=[], func=handler())


def parse(argv: Sequence[str], handlers: Callable[[str], Any]) -> Args | None:
    """The namespace argparse would build for `argv`, or None to let argparse read it.
    `handlers(name)` gives the cmd_edit function a command runs."""
    head = _global_options(argv)
    if head is None:
        return None
    found, i = head
    if i >= len(argv) or argv[i] not in SHAPES:
        return None
    command = argv[i]
    shape = SHAPES[command]
    rest = argv[i + 1:]
    found["command"] = command
    # Positional arguments first, all of them together; then only options.
    count = 0
    while count < len(rest) and _plain(rest[count]):
        count += 1
    needed = [p for p in shape.positionals if not p.endswith("?")]
    if not len(needed) <= count <= len(shape.positionals):
        return None
    for spec, value in zip(shape.positionals, rest):
        name, _, kind = spec.rstrip("?").partition(":")
        if kind == "int":
            try:
                found[name] = int(value)
            except ValueError:
                return None  # argparse words the refusal
        else:
            found[name] = value
    for spec in shape.positionals[count:]:
        found[spec.rstrip("?")] = None
    for flag in set(shape.flags.values()) - set(GLOBAL_FLAGS.values()):
        found[flag] = False
    seen: set[str] = set()
    j = count
    while j < len(rest):
        arg = rest[j]
        if arg in shape.flags:
            dest = shape.flags[arg]
            j += 1
        elif arg in shape.values and j + 1 < len(rest) and _plain(rest[j + 1]):
            dest = shape.values[arg]
            found[dest] = rest[j + 1]
            j += 2
        else:
            return None
        if dest in seen:
            return None  # a repeated option: argparse's rules decide
        seen.add(dest)
        if arg in shape.flags:
            found[dest] = True
    if any(name not in seen for name in shape.required):
        return None
    found["func"] = handlers(shape.handler)
    return Args(**found)


def _plain(arg: str) -> bool:
    """An argument argparse surely takes as a value: not option-like. (A lone '-',
    a negative number or a text with a space in it argparse may take as a value
    too, but that is its call to make.)"""
    return not arg.startswith("-")


def command_word(argv: Sequence[str]) -> str | None:
    """The subcommand named in `argv`, past the global options; None when anything
    else comes first (-h, --version, a typo'd option): then the whole parser answers."""
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in GLOBAL_VALUES:
            i += 2
        elif arg in GLOBAL_FLAGS or arg.startswith("--memory-dir="):
            i += 1
        else:
            return None if arg.startswith("-") else arg
    return None


def wants_json(argv: Sequence[str], always: Sequence[str] = ("call",)) -> bool:
    """For the error boundary (cli/common.py), before any parsing: --json anywhere
    before a bare `--` (so even usage errors answer in JSON), or a subcommand that
    always answers in JSON."""
    command = None
    skip = False
    for arg in argv:
        if arg == "--":
            break
        if arg == "--json":
            return True
        if skip:
            skip = False
        elif arg in GLOBAL_VALUES:
            skip = True
        elif command is None and not arg.startswith("-"):
            command = arg
    return command in always
