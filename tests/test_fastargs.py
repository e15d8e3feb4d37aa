"""cli/fastargs.py reads an edit's usual command line as argparse does, and leaves
every other line to argparse: generated command lines, both parsers, one answer."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from conftest import ROOT, memory
from gitmemfs.cli import cmd_edit, fastargs
from gitmemfs.cli import memory as cli
from gitmemfs.core.errors import UsageError

COMMANDS = sorted(fastargs.SHAPES)
OPTIONS = ["-m", "--reason", "-d", "--description", "--all", "--json", "-q", "--quiet", "--memory-dir",
           "--reas", "-h", "--", "-mx", "--reason=r", "-x"]
WORDS = ["a.md", "system/x.md", "", "3", "0", "-3", "-", "text with spaces", "-not an option", "é", "3.5",
         " 7", "reason", "notes/"]
TOKEN = st.one_of(st.sampled_from(OPTIONS), st.sampled_from(WORDS), st.sampled_from(COMMANDS))


def argparse_answer(argv: list[str]) -> dict | None:
    try:
        args, _parser = cli._parse(argv)
    except UsageError:
        return None
    except SystemExit:  # -h prints and exits: not a line the fast path may read
        return None
    return _plain(vars(args))


def _plain(values: dict) -> dict:
    return {k: (v.__name__ if callable(v) else v) for k, v in values.items()}


def fast_answer(argv: list[str]) -> dict | None:
    args = fastargs.parse(argv, lambda name: getattr(cmd_edit, name))
    return None if args is None else _plain(vars(args))


@st.composite
def command_lines(draw: st.DrawFn) -> list[str]:
    before = draw(st.lists(st.sampled_from(["--json", "-q", "--quiet", "--memory-dir", "/m"]), max_size=2))
    command = draw(st.sampled_from(COMMANDS))
    positionals = draw(st.lists(st.sampled_from(WORDS), max_size=4))
    after = draw(st.lists(TOKEN, max_size=7))
    return [*before, command, *positionals, *after]


@settings(max_examples=1500, deadline=None)
@given(argv=command_lines())
@example(argv=["str_replace", "a.md", "old", "new", "-m", "why"])
@example(argv=["--json", "create", "a.md", "-d", "D", "-m", "r", "-q"])
@example(argv=["create", "a.md", "body", "-d", "D", "-m", "r"])
@example(argv=["insert", "a.md", " 7", "t", "-m", "r", "--memory-dir", "/x"])
@example(argv=["str-replace", "a", "b", "c", "--all", "-m", "r", "--json"])
@example(argv=["--memory-dir", "/a", "delete", "x/", "--memory-dir", "/b", "-m", "r"])
def test_the_fast_path_answers_as_argparse_does(argv: list[str]) -> None:
    fast = fast_answer(argv)
    if fast is not None:
        assert fast == argparse_answer(argv), argv


@st.composite
def any_lines(draw: st.DrawFn) -> list[str]:
    """Lines of any command, options anywhere (the parser built for command_word's
    answer must read them as the whole parser does)."""
    words = ["view", "check", "config", "log", "init", "help", "search", "call", *COMMANDS]
    before = draw(st.lists(st.sampled_from(["--json", "-q", "--quiet", "--memory-dir", "/m",
                                            "--memory-dir=/m", "-h", "--version", "-x"]), max_size=3))
    rest = draw(st.lists(st.one_of(st.sampled_from(words), TOKEN), max_size=5))
    return [*before, *rest]


def _whole(argv: list[str]) -> dict | None:
    try:
        return _plain(vars(cli.build_parser().parse_args(argv)))
    except (SystemExit, UsageError):  # -h, --version, a refused line
        return None


@settings(max_examples=500, deadline=None)
@given(argv=any_lines())
@example(argv=["--memory-dir", "view", "check"])
@example(argv=["-q", "--memory-dir=/m", "config", "--json"])
def test_the_command_word_is_the_command_argparse_picks(argv: list[str]) -> None:
    """Where command_word names a command, the partial parser it leads to reads the
    line exactly as the whole one does (same namespace, or both refuse it)."""
    import contextlib
    import io

    word = fastargs.command_word(argv)
    if word is None:
        return
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        whole = _whole(argv)
        try:
            partial = _plain(vars(cli.build_parser(word).parse_args(argv)))
        except (SystemExit, UsageError):
            partial = None
    if whole is not None:
        assert whole["command"] == word and partial == whole, argv


def test_the_usual_lines_take_the_fast_path() -> None:
    """The point: the lines agents send are read without argparse."""
    for argv in (["str_replace", "a.md", "old", "new", "-m", "why"],
                 ["create", "notes/a.md", "body", "-d", "About a", "-m", "why", "--json"],
                 ["insert", "a.md", "2", "line", "-m", "why"], ["delete", "a/", "-m", "why"],
                 ["rename", "a.md", "b.md", "-m", "why"], ["update_description", "a.md", "d", "-m", "why"]):
        assert fast_answer(argv) is not None, argv


def test_an_edit_imports_no_argparse(mem: Path) -> None:
    """End to end through bin/git-memory: the edit lands, and argparse (with re, enum,
    gettext behind it) was never imported."""
    probe = ("import sys; sys.argv = ['git-memory', *sys.argv[1:]]; "
             "from gitmemfs.cli.memory import main; code = main(); "
             "print(sorted(m for m in ('argparse', 're', 'json', 'base64') if m in sys.modules)); sys.exit(code)")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "lib")}
    proc = subprocess.run([sys.executable, "-S", "-c", probe, "str_replace", "system/persona.md", "I am", "I'm",
                           "-m", "shorter"], cwd=mem, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stdout
    assert memory("view", "system/persona.md", cwd=mem).stdout.count("I'm") >= 1
