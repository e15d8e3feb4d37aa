"""The console scripts' shared behaviour: lean imports per command, JSON, versions."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import LIB, memory


def test_edit_commands_import_only_what_they_run(mem: Path) -> None:
    """An edit pays for the edit path only: not yaml, the compiler, remotes or dream."""
    code = ("import sys, runpy; sys.argv = ['git-memory'] + sys.argv[1:]\n"
            "try:\n    runpy.run_module('gitmemfs.cli.memory', run_name='__main__')\n"
            "except SystemExit:\n    pass\n"
            "heavy = ['sh', 'gitmemfs.core.gitnet', 'yaml', 'gitmemfs.view', 'gitmemfs.remote', 'gitmemfs.dream', "
            "'gitmemfs.edit.patch', 'subprocess', 'dataclasses']\n"
            "print(' '.join(m for m in heavy if m in sys.modules), file=sys.stderr)\n")
    proc = subprocess.run([sys.executable, "-c", code, "str_replace", "system/contacts.md", "Tom", "Thomas",
                           "-m", "lean"], cwd=mem, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(LIB)})
    assert "Memory str_replace committed" in proc.stdout, proc.stderr
    assert proc.stderr.strip().splitlines()[-1:] in ([], [""]), f"imported: {proc.stderr}"


def test_check_and_sync_import_sh_only_where_they_talk_to_a_remote(mem: Path, tmp_path: Path) -> None:
    """`check` is local (the lean runner); a network command pays for sh."""
    bare = tmp_path / "origin.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(mem), str(bare)], check=True)
    subprocess.run(["git", "remote", "add", "origin", str(bare)], cwd=mem, check=True)
    subprocess.run(["git", "fetch", "-q", "origin"], cwd=mem, check=True)
    subprocess.run(["git", "branch", "-q", "-u", "origin/main"], cwd=mem, check=True)
    code = ("import sys, runpy; sys.argv = ['git-memory'] + sys.argv[1:]\n"
            "try:\n    runpy.run_module('gitmemfs.cli.memory', run_name='__main__')\n"
            "except SystemExit:\n    pass\n"
            "print('sh' in sys.modules, file=sys.stderr)\n")
    for args, imported in ((["check", "--tree"], "False"), (["check", "--all"], "False"), (["sync"], "True")):
        proc = subprocess.run([sys.executable, "-c", code, *args], cwd=mem, capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": str(LIB)})
        assert proc.stderr.strip().splitlines()[-1] == imported, (args, proc.stdout, proc.stderr)


def test_parser_constants_match_the_operations() -> None:
    from gitmemfs.cli import cmd_compile, cmd_edit
    from gitmemfs.tools import toolcall
    from gitmemfs.view import compile as compiler

    assert cmd_compile.COMPAT_MODES == tuple(compiler.COMPAT_MODES)
    assert cmd_edit.SCHEMAS == tuple(toolcall.SCHEMAS)


def test_versions_and_json_after_the_subcommand(mem: Path) -> None:
    for tool in ("memory", "memory-patch", "dream"):
        proc = subprocess.run(["git", tool, "--version"], cwd=mem, capture_output=True, text=True)
        assert proc.returncode == 0 and proc.stdout.startswith("git-memfs "), proc.stderr
    data = json.loads(memory("view", "system/contacts.md", "--json", cwd=mem).stdout)
    assert data["ok"] and data["kind"] == "file"
