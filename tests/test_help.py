"""`git memory help`: the parser text, for systems without man pages."""
from __future__ import annotations

import argparse
import re
from pathlib import Path

from conftest import ROOT, memory


def test_help_prints_command_help_without_a_repo(tmp_path: Path) -> None:
    proc = memory("help", "str-replace", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith("usage: git memory str_replace")
    assert "--all" in proc.stdout
    proc = memory("help", cwd=tmp_path)
    assert proc.returncode == 0 and "commands:" in proc.stdout and "update_description" in proc.stdout


def test_help_for_unknown_command(tmp_path: Path) -> None:
    proc = memory("help", "nope", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr.startswith("error: no such command 'nope'")


def _command_paths(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every subcommand of the parser, nested ones too, each under its own name once."""
    paths = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            seen: set[int] = set()
            for name, sub in action.choices.items():
                if id(sub) not in seen:  # an alias (str-replace) of a command already listed
                    seen.add(id(sub))
                    paths.append((*prefix, name))
                    paths.extend(_command_paths(sub, (*prefix, name)))
    return paths


def test_help_knows_every_command_of_the_parser(tmp_path: Path) -> None:
    """`git memory help` lists every command, and `git memory help CMD [SUB]` prints
    the help of each one the parser has (search, log, mcp install ... included)."""
    from gitmemfs.cli.memory import build_parser

    paths = _command_paths(build_parser())
    top = sorted(path[0] for path in paths if len(path) == 1)
    assert {"search", "log", "show", "diff", "undo", "restore", "mcp", "help"} <= set(top)
    assert any(len(path) == 2 for path in paths), "nested subcommands (hooks install, mcp install)"
    listing = memory("help", cwd=tmp_path)
    assert listing.returncode == 0, listing.stderr
    listed = re.findall(r"^    (\w+)", listing.stdout.split("commands:", 1)[1], re.MULTILINE)
    assert sorted(listed) == top
    for path in paths:
        proc = memory("help", *path, cwd=tmp_path)
        assert proc.returncode == 0, (path, proc.stderr)
        assert proc.stdout.startswith(f"usage: git memory {' '.join(path)}"), (path, proc.stdout[:200])


def test_help_names_what_a_command_has_when_a_subcommand_is_unknown(tmp_path: Path) -> None:
    proc = memory("help", "hooks", "nope", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: no such command 'hooks nope'; hooks has: install, status")
    proc = memory("help", "view", "x", cwd=tmp_path)
    assert proc.returncode == 2 and "view has no subcommands" in proc.stderr


def test_help_names_the_example_files_that_ship_with_the_package(tmp_path: Path) -> None:
    """The docs' dream tour and the agent recipes use files inside the package, so they
    are there after a pip install too (tests/test_install.py checks an installed copy)."""
    listing = memory("help", "--example", cwd=tmp_path)
    assert listing.returncode == 0, listing.stderr
    names = listing.stdout.split("\n", 1)[1].split()
    assert {"session.jsonl", "agents/README.md", "agents/claude-code.sh", "agents/codex.sh", "agents/letta.sh",
            "agents/llm.sh"} <= set(names)
    proc = memory("help", "--example", "session.jsonl", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    path = Path(proc.stdout.strip())
    assert path.is_absolute() and path.parts[-3:] == ("gitmemfs", "examples", "session.jsonl")
    assert path.read_bytes() == (ROOT / "examples" / "session.jsonl").read_bytes()
    proc = memory("help", "--example", "nope.jsonl", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr.startswith("error: no example named 'nope.jsonl'; examples: ")
