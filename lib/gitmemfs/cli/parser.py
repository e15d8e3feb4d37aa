"""The argparse side of the console scripts: the parser class that raises UsageError
(with "did you mean"), the shared global options, the help width."""
from __future__ import annotations

import argparse
import os
import re
import sys

from gitmemfs.core.errors import UsageError

TYPE_CHECKING = False  # `typing` costs ~7 ms of every command's start-up
if TYPE_CHECKING:
    from typing import Any, NoReturn

# Names people try for a command we have under another name: ours answers, through the
# write path where it writes (plain `git revert` commits with no memory rule applied).
OURS = {
    "revert": "git memory undo COMMIT   (read_only and the memory rules hold)",
    "grep": "git memory search 'text'   (--regex for a pattern)",
    "find": "git memory search 'text'",
}
# Git commands people try on a memory repository before (or instead of) ours: the
# repository is plain git, so the plain command answers (shown only while we have none).
PLAIN_GIT = {
    "log": "git log --format='%h %s' -- system/   (the reasons are the subjects)",
    "search": "git grep -n 'text' -- '*.md'",
    "diff": "git diff HEAD~1 -- system/",
    "show": "git show COMMIT",
    "undo": "git revert HEAD",
    "history": "git log --format='%h %ad %s' --date=short -- PATH",
}


class Parser(argparse.ArgumentParser):
    """argparse that raises UsageError instead of printing and exiting."""

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse builds a formatter for every add_argument; its default width comes
        # from shutil (which imports bz2, lzma, ...: ~3 ms of every command). Same value.
        factory = self.formatter_class
        if isinstance(factory, type) and issubclass(factory, argparse.HelpFormatter):
            return factory(prog=self.prog, width=terminal_width() - 2)
        return factory(prog=self.prog)  # a formatter that takes no width: argparse's own call

    def error(self, message: str) -> NoReturn:
        m = re.match(r"argument COMMAND: invalid choice: '([^']*)'", message)
        details: dict[str, Any] = {"usage": self.format_usage().strip()}
        if m:
            message = f"unknown command '{m.group(1)}'" + self._did_you_mean(m.group(1), details)
        raise UsageError(f"{message} (see {self.prog} -h)", details=details)

    def _did_you_mean(self, word: str, details: dict[str, Any]) -> str:
        """The closest commands, and for a git command we do not have, plain git's way."""
        import difflib

        names, seen = [], set()
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    if id(sub) not in seen:  # an alias (str-replace) counts as its command
                        seen.add(id(sub))
                        names.append(name)
        close = difflib.get_close_matches(word.replace("-", "_"), names, n=3, cutoff=0.6)
        close += [n for n in names if n.startswith(word) and word and n not in close]
        if close:
            details["did_you_mean"] = close
        ours = OURS.get(word) if self.prog == "git memory" else None
        if ours:
            details["use"] = ours
            return f"; {self.prog} has no {word}: use {ours}"
        plain = PLAIN_GIT.get(word)
        if plain:
            details["plain_git"] = plain
            return f"; {self.prog} has no {word}: plain git does it here: {plain}"
        if close:
            return "; did you mean " + " or ".join(f"'{c}'" for c in close[:3]) + "?"
        return ""


def terminal_width() -> int:
    """shutil.get_terminal_size().columns without importing shutil."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns if sys.__stdout__ else 0
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def add_global_options(parser: argparse.ArgumentParser, *, suppress: bool, quiet: bool = True) -> None:
    """--memory-dir, --json and (unless quiet=False) -q. With `suppress`, for the copy
    after a subcommand: unset values stay unset and do not clobber the main parser's."""
    default = argparse.SUPPRESS if suppress else None
    flag = argparse.SUPPRESS if suppress else False
    parser.add_argument("--memory-dir", metavar="DIR", default=default,
                        help="memory repository to use (default: $MEMORY_DIR, $AGENT_ID's "
                             "~/.letta/agents/<id>/memory, else the current work tree)")
    parser.add_argument("--json", action="store_true", default=flag,
                        help="print one JSON object on stdout, errors included")
    if quiet:
        parser.add_argument("-q", "--quiet", action="store_true", default=flag, help="print nothing on success")
