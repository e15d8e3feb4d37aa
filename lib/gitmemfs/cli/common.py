"""What the three console scripts share: output and the error boundary (the parser
is in cli/parser.py: an edit's usual command line never needs argparse).

Every command's handler returns an object with `.message` (human text) and
`.as_dict()` (the --json object); `code` on it (default 0) is the exit status.
Errors become one `error: …` line on stderr (followed by a diagnostic block for the
few errors that carry one), or one JSON object on stdout.

Redaction: errors are always redacted (registered secrets and secret-looking
patterns). So are results, except those of PAYLOAD_COMMANDS, whose answer is memory
content: they get only the registered secrets masked, so that what the agent reads
is byte for byte what is stored (a masked URL copied back would break the edit, or
be saved as `<redacted>`). Operations redact the git-derived text they put in any
result at the source (GitError, network messages, logs).

Terminals: text an agent wrote never reaches one raw (core/visible.py). Error lines
and the human text of every other command always show control characters as
escapes; a PAYLOAD_COMMANDS answer does when stdout is a terminal, and is exact
bytes to a pipe or a file (a model, a harness or `show > file` reads it as stored).
JSON carries DEL and C1 as \\u escapes (json itself escapes C0).
"""
from __future__ import annotations

import sys

from gitmemfs.core.errors import EXIT_FAILED, MemfsError, UsageError
from gitmemfs.core.redact import mask_secrets, redact, redact_obj
from gitmemfs.core.visible import json_safe, visible

TYPE_CHECKING = False  # `typing` costs ~7 ms of every command's start-up
if TYPE_CHECKING:
    from typing import Any, Callable, Sequence


class Report:
    """A plain command result: text for people, a dict for --json."""

    def __init__(self, message: str, data: dict[str, Any] | None = None, code: int = 0):
        self.message = message
        self.data = data or {}
        self.code = code

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.code == 0, "message": self.message, **self.data}


# Commands whose result is memory content (file text, the prompt, the tree).
PAYLOAD_COMMANDS: tuple[str, ...] = ("view", "compile", "tree", "call")
PAYLOAD_COMMANDS += ("search", "show", "diff")  # matched lines, a past file, its changes


def print_json(obj: dict[str, Any], *, payload: bool = False) -> None:
    import json  # only a --json answer pays for it

    sys.stdout.write(json_safe(json.dumps(redact_obj(obj, patterns=not payload), ensure_ascii=False)) + "\n")


def print_text(text: str, stream: Any = None, *, payload: bool = False) -> None:
    if text:
        out = stream or sys.stdout
        shown = mask_secrets(text) if payload else redact(text)
        if not payload or _terminal(out):
            shown = visible(shown)
        out.write(shown + ("" if text.endswith("\n") else "\n"))


def _terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def fail(exc: MemfsError, as_json: bool) -> int:
    """Report an error: one `error:` line, then its diagnostic block if it has one
    (`details["diagnostic"]`, multi-line, e.g. a failed patch hunk with previews).
    In JSON, `error` carries the whole text, so a harness relaying it loses nothing."""
    message = visible(_bytes_shown(redact(exc.message)))
    details = dict(exc.details)
    block = details.pop("diagnostic", None)
    block = visible(redact(block)) if isinstance(block, str) and block.strip() else None
    if as_json:
        full = message + "\n" + block if block else message
        print_json({"ok": False, "error": full, "code": exc.code, **details})
    else:
        sys.stderr.write(f"error: {' '.join(message.split(chr(10))) if message else 'failed'}\n")
        if block:
            sys.stderr.write(block if block.endswith("\n") else block + "\n")
    return exc.code


def _bytes_shown(text: str) -> str:
    """A byte that is not UTF-8 (a path from the system carries it as a lone surrogate)
    shown as \\xff, not as a leaked \\udcff."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def boundary(argv: Sequence[str], body: Callable[[Sequence[str]], int], *,
             json_commands: Sequence[str] = ("call",)) -> int:
    """Run a console script body, mapping every failure to our exit codes.
    `json_commands` are subcommands that always answer in JSON."""
    from gitmemfs.cli.fastargs import wants_json

    as_json = wants_json(argv, json_commands)
    try:
        return body(argv)
    except MemfsError as exc:
        return fail(exc, as_json)
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted\n")
        return 130
    except BrokenPipeError:
        return EXIT_FAILED
    except Exception as exc:  # noqa: BLE001 - the one place that catches everything
        err = clean_os_error(exc) or MemfsError(
            f"internal error: {type(exc).__name__}: {exc} (please report this bug)")
        return fail(err, as_json)


def check_utf8_argv(argv: Sequence[str], places: Sequence[str] = ("--memory-dir",)) -> None:
    """Refuse an argument that is not UTF-8 (Python hands such bytes over as lone
    surrogates, which leaked later as `\\udcff` or as git's words), naming the byte.
    The value of an option in `places` names a folder, and may be any bytes."""
    skip = False
    for arg in argv:
        if skip or arg.startswith(tuple(p + "=" for p in places)):
            skip = False
            continue
        skip = arg in places
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError as exc:
            shown = arg.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            code = ord(arg[exc.start])
            what = f"byte 0x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"lone surrogate U+{code:04X}"
            raise UsageError(f"the argument '{shown}' is not UTF-8 text ({what} at character {exc.start + 1}); "
                             "memory paths and text are UTF-8: retype it, or convert it with iconv -t UTF-8") \
                from None


def clean_os_error(exc: Exception) -> MemfsError | None:
    """The system's refusals that reach the boundary (a name too long to open, a file
    size limit, text that cannot be UTF-8) as one line with the next step."""
    if isinstance(exc, UnicodeError) and "surrogates not allowed" in str(exc):
        return MemfsError("input is not valid UTF-8 text (it holds a byte or a lone surrogate such "
                          "as \\ud800 that UTF-8 cannot store); send UTF-8 text; nothing was changed")
    from gitmemfs.core import oserrors

    text = oserrors.describe(exc)
    return MemfsError(f"{text}; {oserrors.next_step(exc)}") if text else None


def emit(result: Any, *, as_json: bool, quiet: bool = False, payload: bool = False) -> int:
    """Print a command's result; `payload`: it is memory content (see the module doc)."""
    code = getattr(result, "code", 0) or 0
    if as_json:
        print_json(result.as_dict(), payload=payload)
    elif not quiet or code:
        print_text(result.message, payload=payload)
    return code
