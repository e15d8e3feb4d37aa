"""`git memory help`: the parser text, for systems without man pages."""
from __future__ import annotations

from pathlib import Path

from conftest import memory


def test_help_prints_command_help_without_a_repo(tmp_path: Path) -> None:
    proc = memory("help", "str-replace", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith("usage: git memory str_replace")
    assert "--all" in proc.stdout
    proc = memory("help", cwd=tmp_path)
    assert proc.returncode == 0 and "commands:" in proc.stdout and "update_description" in proc.stdout


def test_help_for_unknown_command(tmp_path: Path) -> None:
    proc = memory("help", "nope", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr.startswith("error: no such command 'nope'")
