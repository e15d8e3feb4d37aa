"""The package layout is a contract: import-linter (configured in setup.cfg) keeps
the layers one-way and the modules of every package free of cycles. These tests run
the real `lint-imports` on the tree, then on copies of it that break the contract,
so a contract that stopped catching anything would fail here."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import LIB, ROOT

LINT = Path(sys.executable).with_name("lint-imports")
pytestmark = pytest.mark.skipif(not LINT.exists(), reason="import-linter is not installed (make venv installs it)")


def lint(lib: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(lib)}
    return subprocess.run([str(LINT), "--no-cache", "--no-logo", "--config", str(ROOT / "setup.cfg")], cwd=lib,
                          capture_output=True, text=True, env=env)


def broken_copy(tmp_path: Path, module: str, line: str) -> Path:
    """A copy of the package with `line` appended to `module` (a path under gitmemfs/)."""
    lib = tmp_path / "lib"
    shutil.copytree(LIB / "gitmemfs", lib / "gitmemfs", ignore=shutil.ignore_patterns("__pycache__"))
    with open(lib / "gitmemfs" / module, "a") as handle:
        handle.write(f"\n{line}\n")
    return lib


def test_the_tree_keeps_the_contract() -> None:
    proc = lint(LIB)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 broken" in proc.stdout


LAYERS, CYCLES, GITFILES = "One-way layers", "No import cycles", "Core's edit path"
NETWORK = "Only network operations run git through sh"


@pytest.mark.parametrize("module, line, contract, report", [
    # core reaching up to a front end
    ("core/git.py", "from gitmemfs.cli import common  # noqa", LAYERS,
     "gitmemfs.core is not allowed to import gitmemfs.cli"),
    # one operation package reaching into a sibling
    ("edit/editor.py", "from gitmemfs.view import compile  # noqa", LAYERS,
     "gitmemfs.edit is not allowed to import gitmemfs.view"),
    # the hook entry point imported by what it runs
    ("gate/check.py", "import gitmemfs.hookmain  # noqa", LAYERS,
     "gitmemfs.gate is not allowed to import gitmemfs.hookmain"),
    # a reader of git's own files reaching up to the repository it helps open
    ("core/gitfiles/index.py", "from gitmemfs.core import repo  # noqa", GITFILES,
     "gitmemfs.core.gitfiles is not allowed to import gitmemfs.core.repo"),
    # the commit gate paying for sh
    ("gate/check.py", "from gitmemfs.core import gitnet  # noqa", NETWORK,
     "gitmemfs.gate is not allowed to import gitmemfs.core.gitnet"),
    # two modules of one package importing each other (the old cli/memory <-> cli/cmd_help)
    ("cli/cmd_help.py", "from gitmemfs.cli import memory  # noqa", CYCLES, "No cycles are allowed in gitmemfs.cli"),
])
def test_a_forbidden_import_breaks_the_build(tmp_path: Path, module: str, line: str, contract: str,
                                            report: str) -> None:
    proc = lint(broken_copy(tmp_path, module, line))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    broken = [row for row in proc.stdout.splitlines() if row.endswith(" BROKEN")]
    assert any(row.startswith(contract) for row in broken), proc.stdout
    assert report in proc.stdout, proc.stdout
