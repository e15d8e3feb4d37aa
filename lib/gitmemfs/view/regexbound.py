"""Regular expressions with a time bound, for the matches `git grep -P` can't do for us.

At a revision, `search --regex` runs `git grep -P`, whose PCRE2 match limit stops a
pattern that backtracks without end. Past versions (`--history`) and paths are matched
here, by Python's `re`, which has no such limit and holds the GIL while it runs: one
`(a+)+$` over a line of `a`s would freeze the process, and over MCP every client with
it. So the match runs in a child Python with a deadline (`memory.regexTimeout`, default
5 s); past it the child is killed and the search is refused, naming the limit. The texts
go to the child on stdin, never in argv.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys

from gitmemfs.core.errors import MemfsError, UsageError

DEFAULT_TIMEOUT = 5.0

_WORKER = r"""
import json, re, sys
req = json.loads(sys.stdin.buffer.read().decode("utf-8", "surrogatepass"))
pattern = re.compile(req["pattern"], re.IGNORECASE if req["ignore_case"] else 0)
found = []
for i, text in enumerate(req["texts"]):
    lines = [n for n, line in enumerate(text.split("\n"), start=1) if pattern.search(line)]
    if lines:
        found.append([i, lines])
sys.stdout.write(json.dumps(found))
"""


def compile_checked(pattern: str, ignore_case: bool) -> re.Pattern[str]:
    """Compile (never match) here: a syntax error is the caller's to fix."""
    try:
        return re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except (re.error, RecursionError, OverflowError) as exc:
        raise UsageError(f"search: not a valid regular expression: {exc}; drop --regex to search for "
                         "the text literally") from None


def matching_lines(pattern: str, texts: list[str], *, ignore_case: bool,
                   timeout: float = DEFAULT_TIMEOUT) -> dict[int, list[int]]:
    """{text index: [1-based line numbers that match]}, or a refusal past `timeout`."""
    compile_checked(pattern, ignore_case)
    if not texts:
        return {}
    request = json.dumps({"pattern": pattern, "ignore_case": ignore_case, "texts": texts})
    try:
        done = subprocess.run([sys.executable, "-I", "-S", "-c", _WORKER],
                              input=request.encode("utf-8", "surrogatepass"), capture_output=True,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise MemfsError(f"search: the regular expression ran past its limit of {timeout:g} s "
                         "(memory.regexTimeout) without finishing; nested repeats such as (a+)+ can "
                         "backtrack without end: simplify the pattern") from None
    if done.returncode != 0:
        raise MemfsError("search: the regular expression could not be matched: "
                         + (done.stderr.decode("utf-8", "replace").strip().splitlines() or ["unknown error"])[-1])
    return {i: lines for i, lines in json.loads(done.stdout)}


def timeout_of(value: str | None) -> float:
    """`memory.regexTimeout` in seconds (a positive number), else the default."""
    try:
        seconds = float(value) if value else DEFAULT_TIMEOUT
    except ValueError:
        return DEFAULT_TIMEOUT
    return seconds if 0 < seconds < 3600 else DEFAULT_TIMEOUT
