"""Man pages: generated from the real parsers, never stale, found by `git <cmd> --help`."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import make_man


def test_committed_pages_match_the_parsers() -> None:
    pages = make_man.pages()
    assert sorted(pages) == ["man/git-dream.1", "man/git-memory-patch.1", "man/git-memory.1"]
    for rel, text in pages.items():
        committed = (ROOT / rel).read_text(encoding="utf-8")
        assert committed == text, f"{rel} is stale: run make man"


@pytest.mark.parametrize("page", ["git-memory.1", "git-memory-patch.1", "git-dream.1"])
def test_each_page_has_the_sections_a_man_page_needs(page: str) -> None:
    """The parsers give NAME, SYNOPSIS, DESCRIPTION and OPTIONS; man/<page>.include adds
    the rest. A page points only at what an install has: not the checkout's examples/
    or README (pip installs neither), but `git memory help --example` and share/doc."""
    text = (ROOT / "man" / page).read_text(encoding="utf-8")
    headings = [line[4:] for line in text.split("\n") if line.startswith(".SH ")]
    for section in ("NAME", "SYNOPSIS", "EXAMPLES", "ENVIRONMENT", "FILES", "EXIT STATUS", "SEE ALSO"):
        assert section in headings, f"{page}: no {section} section"
    assert headings.index("EXAMPLES") < headings.index("SEE ALSO") == len(headings) - 1
    plain = text.replace("\\-", "-")
    assert "examples/" not in plain and "README" not in plain, f"{page} points into the checkout"
    assert "share/doc/git-memfs" in plain


def test_every_subcommand_and_option_is_documented() -> None:
    """A cheap guard on top of the staleness check: the page names every subcommand
    and every option of every subcommand."""
    import argparse

    from gitmemfs.cli.memory import build_parser

    page = (ROOT / "man/git-memory.1").read_text(encoding="utf-8").replace("\\-", "-")
    subparsers = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    seen: set[int] = set()
    for name, sub in subparsers.choices.items():
        if id(sub) in seen:  # an alias (str-replace) of a command already checked
            continue
        seen.add(id(sub))
        assert f"'git memory {name}'" in page, name
        for action in sub._actions:
            for option in action.option_strings:
                assert option in page or option in ("-h", "--help"), f"{name} {option}"


@pytest.mark.skipif(shutil.which("man") is None, reason="man is not installed")
@pytest.mark.parametrize("cmd,title", [("memory", "GIT-MEMORY(1)"), ("memory-patch", "GIT-MEMORY-PATCH(1)"),
                                       ("dream", "GIT-DREAM(1)")])
def test_git_help_opens_the_installed_page(tmp_path: Path, cmd: str, title: str) -> None:
    venv_bin = Path(sys.prefix) / "bin"
    if not (Path(sys.prefix) / "share/man/man1" / f"git-{cmd}.1").exists():
        pytest.skip("the man pages are not installed in this environment (make venv installs them)")
    env = {**os.environ, "PATH": f"{venv_bin}{os.pathsep}{os.environ['PATH']}", "MANPAGER": "cat",
           "PAGER": "cat", "MANWIDTH": "80"}
    env.pop("MANPATH", None)
    proc = subprocess.run(["git", cmd, "--help"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.lstrip().startswith(title)


@pytest.mark.skipif(shutil.which("man") is None, reason="man is not installed")
def test_git_help_from_a_checkout_finds_man_through_the_man1_link(tmp_path: Path) -> None:
    """With the checkout's bin/ on PATH, man looks in ../man/man1: a link to man/ itself."""
    env = {**os.environ, "PATH": f"{ROOT / 'bin'}{os.pathsep}/usr/bin{os.pathsep}/bin", "MANPAGER": "cat",
           "PAGER": "cat", "MANWIDTH": "80"}
    env.pop("MANPATH", None)
    proc = subprocess.run(["git", "memory", "--help"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.lstrip().startswith("GIT-MEMORY(1)")
