"""The package as a user gets it: an sdist and a wheel built from the checkout the way a
release builds them (`python -m build`: the wheel is built from the sdist, so a file the
sdist forgets is missing here too), the wheel installed with its extras into a fresh venv,
and that venv's own console scripts used for one edit, one MCP round, the review page and the
Anthropic class.
Nothing of the checkout (bin/, lib/, .venv) is on PATH or sys.path while it runs."""
from __future__ import annotations

import http.cookiejar
import json
import os
import shutil
import subprocess
import sys
import textwrap
import urllib.request
from pathlib import Path

import pytest

import gitmemfs
from conftest import ROOT

pytest.importorskip("build", reason="the dev extra (build) is not installed")

# Words in pip's output that mean the registry could not be reached: only then is this skipped.
OFFLINE = ("Failed to establish a new connection", "Temporary failure in name resolution",
           "Network is unreachable", "Could not find a version that satisfies")
SKIP_DIRS = {".git", "build", "dist", "__pycache__"}


def _copy_source(dest: Path) -> None:
    """The checkout's files as they are now (uncommitted edits included), without venvs or
    build output, so the build never writes into the checkout others are testing from."""
    def ignore(folder: str, names: list[str]) -> set[str]:
        return {n for n in names if n in SKIP_DIRS or n.startswith(".venv") or n.endswith(".egg-info")}
    shutil.copytree(ROOT, dest, ignore=ignore, symlinks=True)


def _run(argv: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=240, **kw)  # type: ignore[call-overload]


def _clean_env(venv: Path, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GIT_MEMFS", "PYTHON", "MEMORY_DIR", "AGENT_", "LETTA_", "VIRTUAL_ENV"))}
    path = [p for p in env.get("PATH", "").split(os.pathsep)
            if p and not Path(p).resolve().is_relative_to(ROOT.resolve())]
    env.update(PATH=os.pathsep.join([str(venv / "bin"), *path]), HOME=str(home),
               GIT_CONFIG_GLOBAL=str(home / ".gitconfig"), GIT_CONFIG_NOSYSTEM="1")
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    tmp = tmp_path_factory.mktemp("wheel")
    _copy_source(tmp / "src")
    built = _run([sys.executable, "-m", "build", "--outdir", str(tmp / "dist"), str(tmp / "src")])
    if built.returncode and any(word in built.stdout + built.stderr for word in OFFLINE):
        pytest.skip("python -m build could not fetch setuptools from the package registry")
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    wheels = list((tmp / "dist").glob("git_memfs-*.whl"))
    assert len(wheels) == 1 and list((tmp / "dist").glob("git_memfs-*.tar.gz")), os.listdir(tmp / "dist")
    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", str(venv)]).check_returncode()
    pip = _run([str(venv / "bin/python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                f"{wheels[0]}[mcp,anthropic,review]"])
    if pip.returncode and any(word in pip.stdout + pip.stderr for word in OFFLINE):
        pytest.skip("pip could not reach the package registry for the extras: " + pip.stderr.strip()[-300:])
    assert pip.returncode == 0, pip.stderr[-3000:]
    home = tmp / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = Wheel Tester\n\temail = wheel@example.invalid\n"
                                     "[init]\n\tdefaultBranch = main\n")
    return venv, _clean_env(venv, home)


def test_the_installed_commands_report_the_version_and_make_an_edit(installed, tmp_path: Path) -> None:
    venv, env = installed
    assert _run(["git", "memory", "--version"], env=env).stdout.strip() == f"git-memfs {gitmemfs.__version__}"
    assert _run(["git", "memory", "init", "-q", str(tmp_path / "mem")], env=env).returncode == 0
    made = _run(["git", "memory", "create", "reference/pets.md", "Rex is a dog.\n", "-d", "pets",
                 "-m", "the user has a dog"], cwd=tmp_path / "mem", env=env)
    assert made.returncode == 0, made.stderr
    log = _run(["git", "log", "-1", "--format=%s%n%b"], cwd=tmp_path / "mem", env=env).stdout
    assert log.startswith("the user has a dog\n") and "Memory-Op: create" in log
    # the hooks the installed package wrote run the venv's Python, and they judge
    hook = (tmp_path / "mem/.git/hooks/pre-commit").read_text()
    assert str(venv) in hook
    (tmp_path / "mem/reference/bad.md").write_text("no frontmatter\n")
    _run(["git", "add", "-A"], cwd=tmp_path / "mem", env=env)
    refused = _run(["git", "commit", "-qm", "bad"], cwd=tmp_path / "mem", env=env)
    assert refused.returncode != 0 and "reference/bad.md" in refused.stderr + refused.stdout


def test_one_mcp_round_through_the_installed_server(installed, tmp_path: Path) -> None:
    venv, env = installed
    _run(["git", "memory", "init", "-q", str(tmp_path / "mem")], env=env).check_returncode()
    script = textwrap.dedent("""
        import json, sys, anyio
        from mcp import Client, StdioServerParameters
        async def main():
            params = StdioServerParameters(command="git", args=["memory", "mcp"], cwd=sys.argv[1])
            async with Client(params) as c:
                names = sorted(t.name for t in (await c.list_tools()).tools)
                made = await c.call_tool("create", {"path": "reference/a.md", "description": "a",
                                                    "file_text": "alpha\\n", "reason": "wheel test"})
                seen = await c.call_tool("view", {"path": "reference/a.md"})
                text = lambda r: "".join(getattr(b, "text", "") for b in r.content)
                print(json.dumps({"tools": names, "made": text(made), "made_error": made.is_error,
                                  "seen": text(seen)}))
        anyio.run(main)
    """)
    done = _run([str(venv / "bin/python"), "-c", script, str(tmp_path / "mem")], env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert {"create", "view", "search"} <= set(answer["tools"])
    assert not answer["made_error"], answer
    assert "alpha" in answer["seen"]
    log = _run(["git", "log", "-1", "--format=%s"], cwd=tmp_path / "mem", env=env).stdout
    assert log.strip() == "wheel test"


def test_the_installed_review_page_serves_its_templates_and_assets(installed, tmp_path: Path) -> None:
    venv, env = installed
    _run(["git", "memory", "init", "-q", str(tmp_path / "mem")], env=env).check_returncode()
    proc = subprocess.Popen(["git-memory", "review", "--no-browser", "--json"], cwd=tmp_path / "mem", env=env,
                            text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert line, proc.stderr.read() if proc.stderr else ""
        url = json.loads(line)["url"]
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        with opener.open(url, timeout=60) as page:  # the token, then the cookie
            html = page.read().decode()
        with opener.open(url.split("/?")[0] + "/static/review.css", timeout=60) as css:
            style = css.read().decode()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert "At a glance" in html and "system/persona.md" in html
    assert "font" in style


def test_the_installed_anthropic_class_commits(installed, tmp_path: Path) -> None:
    venv, env = installed
    script = textwrap.dedent("""
        import sys
        from gitmemfs.integrations.anthropic import GitMemoryTool
        tool = GitMemoryTool(sys.argv[1])
        print(tool.call({"command": "create", "path": "/memories/notes.txt", "file_text": "hello\\n"}))
        print(tool.call({"command": "view", "path": "/memories/notes.txt"}))
    """)
    done = _run([str(venv / "bin/python"), "-c", script, str(tmp_path / "anth")], env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "hello" in done.stdout
    assert (tmp_path / "anth/memories/notes.txt").read_text() == "hello\n"
    # the write is a commit in the memory's repository, wherever the class keeps it
    log = _run(["git", "-C", str(tmp_path / "anth/memories"), "log", "--format=%s", "--", "."],
               env=env)
    assert log.returncode == 0 and log.stdout.strip(), log.stderr
