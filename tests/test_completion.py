"""Shell completion: generated from the parsers at build time, committed, never stale,
working in bash for `git-memory …` and `git memory …`, and never imported at run time."""
from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import make_completion


def test_committed_scripts_match_the_parsers() -> None:
    scripts = make_completion.scripts()
    assert len(scripts) == 9
    for rel, text in scripts.items():
        assert (ROOT / rel).read_text(encoding="utf-8") == text, f"{rel} is stale: run make completion"


def test_setup_installs_every_script() -> None:
    cfg = (ROOT / "setup.cfg").read_text()
    for rel in make_completion.scripts():
        assert rel in cfg, f"{rel} is not in setup.cfg's data_files"


def test_nothing_imports_shtab_at_run_time() -> None:
    for path in (ROOT / "lib").rglob("*.py"):
        assert "shtab" not in path.read_text(encoding="utf-8"), path


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
@pytest.mark.parametrize("words,cword,expect", [
    ("git-memory cr", 1, "create"),
    ("git-memory str_replace --a", 2, "--all"),
    ("git memory upd", 2, "update_description"),
    ("git memory config --j", 3, "--json"),
    ("git dream sh", 2, "show"),
])
def test_bash_completes_commands_and_options(words: str, cword: int, expect: str) -> None:
    parts = words.split()
    command = parts[0] if parts[0] != "git" else f"git-{parts[1]}"
    func = "_git_" + parts[1].replace("-", "_") if parts[0] == "git" else "_shtab_" + command.replace("-", "_")
    script = ROOT / "completion" / "bash" / command
    code = (f"source '{script}'; COMP_WORDS=({words}); COMP_CWORD={cword}; COMP_LINE='{words}'; "
            f"COMP_POINT={len(words)}; {func}; printf '%s\\n' \"${{COMPREPLY[@]}}\"")
    out = subprocess.run(["bash", "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert expect in out, out
