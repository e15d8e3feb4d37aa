"""The Anthropic SDK's own memory-tool tests, run against GitMemoryTool.

The SDK ships the test file of its `BetaLocalFilesystemMemoryTool` in its source
distribution. Here pip downloads that sdist (for the installed SDK's version) into a
cache, the test file is copied to a temp dir with one change, its import of the SDK's
two classes replaced by ours, and a separate pytest runs it. The file is never copied
into this project. docs/mcp-and-sdks.md cites the figure; PASS_MIN is the claim.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ET
from importlib.metadata import version
from pathlib import Path

import pytest

pytest.importorskip("anthropic")
pytest.importorskip("pytest_asyncio", reason="the SDK's tests need pytest-asyncio (pip install -e '.[dev]')")

PASS_MIN = 93  # of 99 in anthropic 2.15.0; docs/mcp-and-sdks.md names every case that does not pass
MEMBER = "tests/lib/tools/memory_tools/test_filesystem.py"
# The import the SDK's file makes of its own classes, and ours in its place (same names).
THEIRS = re.compile(r"from anthropic\.lib\.tools\._beta_builtin_memory_tool import \(\s*"
                    r"BetaLocalFilesystemMemoryTool,\s*BetaAsyncLocalFilesystemMemoryTool,?\s*\)")
OURS = ("from gitmemfs.integrations.anthropic import (\n    GitMemoryTool as BetaLocalFilesystemMemoryTool,\n"
        "    AsyncGitMemoryTool as BetaAsyncLocalFilesystemMemoryTool,\n)")
# Downloaded once per machine (the test's own HOME is private; this is read at import).
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "git-memfs-tests" / "sdist"


def sdist(release: str) -> Path:
    """The SDK's source distribution from the package registry, through pip; skips the
    test when the registry cannot be reached."""
    CACHE.mkdir(parents=True, exist_ok=True)
    found = sorted(CACHE.glob(f"anthropic-{release}.tar.gz"))
    if found:
        return found[0]
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        proc = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                               "--disable-pip-version-check", "-q", "-d", tmp, f"anthropic=={release}"],
                              capture_output=True, text=True, timeout=300)
        got = sorted(Path(tmp).glob("anthropic-*.tar.gz"))
        if proc.returncode != 0 or not got:
            last = (proc.stderr.strip().splitlines() or ["no sdist downloaded"])[-1]
            pytest.skip(f"the package registry cannot give anthropic=={release}'s source distribution "
                        f"(pip download: {last})")
        target = CACHE / got[0].name
        os.replace(got[0], target)  # atomic: a parallel run sees the whole file or none
    return target


@pytest.mark.timeout(1800)  # the first run downloads the sdist
def test_the_sdks_own_memory_tool_tests_pass_against_ours(tmp_path: Path) -> None:
    release = version("anthropic")
    with tarfile.open(sdist(release)) as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith("/" + MEMBER))
        source = tar.extractfile(member).read().decode("utf-8")  # type: ignore[union-attr]
    swapped, n = THEIRS.subn(OURS, source)
    assert n == 1, "the SDK's test file no longer imports its classes as expected; update THEIRS"
    run = tmp_path / "run"
    run.mkdir()
    (run / "test_filesystem.py").write_text(swapped)
    # The SDK's own pytest settings that this file relies on (its pyproject.toml).
    (run / "pytest.ini").write_text("[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = session\n"
                                    "timeout = 600\n")
    report = tmp_path / "report.xml"
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data")}  # the memories' repositories
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                           f"--junitxml={report}", "test_filesystem.py"],
                          cwd=run, env=env, capture_output=True, text=True, timeout=1200)
    assert report.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    suite = ET.parse(report).getroot()
    suite = suite if suite.tag == "testsuite" else suite.find("testsuite")  # type: ignore[assignment]
    total = int(suite.get("tests", 0))
    failed = [f"{case.get('name')}: {next(iter(case)).get('message', '')[:200]}"
              for case in suite.iter("testcase") if len(case)]
    passed = total - len(failed)
    print(f"anthropic {release}: the SDK's memory-tool tests against GitMemoryTool: {passed} of {total} pass")
    assert total >= 99, proc.stdout[-3000:]
    assert passed >= PASS_MIN, "\n".join(failed)


def test_an_unreachable_registry_skips_naming_pips_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.modules[__name__], "CACHE", tmp_path / "cache")
    for key, value in {"PIP_CONFIG_FILE": os.devnull, "PIP_INDEX_URL": "http://127.0.0.1:9/simple",
                       "PIP_NO_CACHE_DIR": "1", "PIP_RETRIES": "0", "PIP_TIMEOUT": "5"}.items():
        monkeypatch.setenv(key, value)  # a registry nobody answers for
    with pytest.raises(pytest.skip.Exception, match=r"registry cannot give anthropic==2\.15\.0's source .*pip "
                                                    r"download: .*"):
        sdist("2.15.0")
    assert list((tmp_path / "cache").iterdir()) == []  # nothing half-downloaded is kept
