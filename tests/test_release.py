"""What a release ships beside the code: the licence the metadata declares, a changelog
entry for the version the package reports, and a pre-commit configuration that the
framework accepts."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import gitmemfs
from conftest import ROOT


def test_the_licence_is_the_apache_licence_the_metadata_declares() -> None:
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert re.search(r"^license = Apache-2\.0$", (ROOT / "setup.cfg").read_text(), re.M)


def test_the_changelog_has_an_entry_for_the_reported_version() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text()
    headings = re.findall(r"^## (\S+)", changelog, re.M)
    assert gitmemfs.__version__ in headings, headings
    assert headings[0] in ("Unreleased", gitmemfs.__version__), "the newest entry comes first"


def test_the_package_requires_a_supported_python() -> None:
    setup = (ROOT / "setup.cfg").read_text()
    assert re.search(r"^python_requires = >=3\.10$", setup, re.M)
    for minor in (10, 11, 12, 13):
        assert f"Programming Language :: Python :: 3.{minor}" in setup


def test_the_pre_commit_configuration_is_valid() -> None:
    pre_commit = Path(sys.executable).with_name("pre-commit")
    done = subprocess.run([str(pre_commit), "validate-config", str(ROOT / ".pre-commit-config.yaml")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
