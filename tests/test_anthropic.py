"""GitMemoryTool against the Anthropic SDK's own BetaLocalFilesystemMemoryTool.

Differential tests: the same calls go to both classes, and the return strings,
the error strings and the files on disk (names, bytes, modes) must be the same;
ours must also leave one commit per change and a clean repository.
"""
from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from conftest import git, memfile, memory

anthropic_tools = pytest.importorskip("anthropic.lib.tools")
from anthropic.lib.tools import ToolError  # noqa: E402
from anthropic.tools import BetaAsyncLocalFilesystemMemoryTool, BetaLocalFilesystemMemoryTool  # noqa: E402

from gitmemfs.integrations.anthropic import AsyncGitMemoryTool, GitMemoryTool  # noqa: E402

M = "/memories"


def answer(tool: Any, call: dict[str, Any]) -> str:
    try:
        return "ok: " + tool.call(call)
    except ToolError as exc:
        return "error: " + str(exc.content)


def tree(root: Path) -> dict[str, tuple[str, bytes | None]]:
    """Every entry under a memory root but .git: mode and bytes (None for folders)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not (Path(dirpath) == root and d == ".git")]
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                out[rel] = ("link", os.readlink(path).replace(str(root), "{root}").encode())
            elif path.is_dir():
                out[rel] = (oct(path.stat().st_mode), None)
            else:
                out[rel] = (oct(path.stat().st_mode), path.read_bytes())
    return out


class Pair:
    """The reference and ours, side by side in one tmp dir."""

    def __init__(self, tmp: Path, **ours: Any):
        self.ref = BetaLocalFilesystemMemoryTool(str(tmp / "ref"))
        self.ours = GitMemoryTool(str(tmp / "git"), **ours)
        self.ref_root = tmp / "ref" / "memories"
        self.root = tmp / "git" / "memories"

    def same(self, *calls: dict[str, Any]) -> list[str]:
        answers = []
        for call in calls:
            expected, got = answer(self.ref, call), answer(self.ours, call)
            assert got == expected, call
            answers.append(got)
        assert tree(self.root) == tree(self.ref_root)
        return answers

    def plant(self, rel: str, *, text: str | None = None, link: str | None = None) -> None:
        for root in (self.ref_root, self.root):
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if link is not None:
                path.symlink_to(link.replace("{root}", str(root)))
            else:
                path.write_text(text or "")

    def log(self) -> list[str]:
        return git("log", "--format=%s", cwd=self.root).stdout.splitlines()

    def clean(self) -> bool:
        return git("status", "--porcelain", "--untracked-files=all", cwd=self.root).stdout == ""


@pytest.fixture
def pair(tmp_path: Path) -> Pair:
    return Pair(tmp_path)


def test_every_command_and_error_as_the_reference(pair: Pair) -> None:
    answers = pair.same(
        {"command": "view", "path": M},
        {"command": "create", "path": f"{M}/notes.txt", "file_text": "one\ntwo\nthree\nfour\nfive\nsix\nseven\n"},
        {"command": "create", "path": f"{M}/notes.txt", "file_text": "again"},
        {"command": "create", "path": f"{M}/empty.md", "file_text": ""},
        {"command": "create", "path": f"{M}/crlf.txt", "file_text": "a\r\nb\r\n"},
        {"command": "create", "path": f"{M}/projects/web/todo.md", "file_text": "- ship"},
        {"command": "create", "path": f"{M}/projects/web/deep/er/x.md", "file_text": "deep"},
        {"command": "view", "path": M},
        {"command": "view", "path": f"{M}/"},
        {"command": "view", "path": f"{M}/projects"},
        {"command": "view", "path": f"{M}/notes.txt"},
        {"command": "view", "path": f"{M}/empty.md"},
        {"command": "view", "path": f"{M}/crlf.txt"},
        {"command": "view", "path": f"{M}/notes.txt", "view_range": [2, 4]},
        {"command": "view", "path": f"{M}/notes.txt", "view_range": [5, -1]},
        {"command": "view", "path": f"{M}/notes.txt", "view_range": [0, 100]},
        {"command": "view", "path": f"{M}/nope.txt"},
        {"command": "view", "path": f"{M}/notes.txt/x"},
        {"command": "str_replace", "path": f"{M}/notes.txt", "old_str": "five", "new_str": "5\n5b"},
        {"command": "str_replace", "path": f"{M}/notes.txt", "old_str": "one", "new_str": "1"},
        {"command": "str_replace", "path": f"{M}/notes.txt", "old_str": "e", "new_str": "E"},
        {"command": "str_replace", "path": f"{M}/notes.txt", "old_str": "zzz", "new_str": "E"},
        {"command": "str_replace", "path": f"{M}/notes.txt", "old_str": "two", "new_str": "two"},
        {"command": "str_replace", "path": f"{M}/projects", "old_str": "a", "new_str": "b"},
        {"command": "str_replace", "path": f"{M}/gone.txt", "old_str": "a", "new_str": "b"},
        {"command": "str_replace", "path": f"{M}/crlf.txt", "old_str": "b\r\n", "new_str": ""},
        {"command": "insert", "path": f"{M}/notes.txt", "insert_line": 0, "insert_text": "zero"},
        {"command": "insert", "path": f"{M}/projects/web/todo.md", "insert_line": 1, "insert_text": "- test\n\n"},
        {"command": "insert", "path": f"{M}/empty.md", "insert_line": 0, "insert_text": "first"},
        {"command": "insert", "path": f"{M}/notes.txt", "insert_line": 99, "insert_text": "x"},
        {"command": "insert", "path": f"{M}/notes.txt", "insert_line": -1, "insert_text": "x"},
        {"command": "insert", "path": f"{M}/gone.txt", "insert_line": 0, "insert_text": "x"},
        {"command": "insert", "path": f"{M}/projects", "insert_line": 0, "insert_text": "x"},
        {"command": "rename", "old_path": f"{M}/notes.txt", "new_path": f"{M}/archive/2026/notes.txt"},
        {"command": "rename", "old_path": f"{M}/empty.md", "new_path": f"{M}/crlf.txt"},
        {"command": "rename", "old_path": f"{M}/gone.txt", "new_path": f"{M}/other.txt"},
        {"command": "rename", "old_path": M, "new_path": f"{M}/x"},
        {"command": "rename", "old_path": f"{M}/projects", "new_path": f"{M}/old/projects"},
        {"command": "view", "path": M},
        {"command": "delete", "path": f"{M}/archive/2026/notes.txt"},
        {"command": "delete", "path": f"{M}/old"},
        {"command": "delete", "path": f"{M}/gone.txt"},
        {"command": "delete", "path": M},
        {"command": "delete", "path": f"{M}/"},
        {"command": "view", "path": "/etc/passwd"},
        {"command": "view", "path": "memories/notes.txt"},
        {"command": "view", "path": f"{M}/../etc/passwd"},
        {"command": "create", "path": f"{M}/a/../../x.txt", "file_text": "x"},
        {"command": "rename", "old_path": f"{M}/crlf.txt", "new_path": f"{M}/../out.txt"},
        {"command": "view", "path": M},
    )
    assert "Here is the snippet showing the change (with line numbers):\n" in answers[18]
    assert answers[-1].count("\n") == 5, answers[-1]  # root, archive/, archive/2026/, crlf.txt, empty.md
    assert pair.clean()
    log = pair.log()
    assert log[0] == "delete /memories/old" and "create /memories/notes.txt" in log
    assert "str_replace /memories/notes.txt" in log and "rename /memories/projects to /memories/old/projects" in log
    # A replacement that changes nothing, and refused calls, commit nothing.
    assert log.count("str_replace /memories/notes.txt") == 2


def test_folders_0o700_files_0o600_whatever_the_umask(pair: Pair) -> None:
    old = os.umask(0)
    try:
        pair.same({"command": "create", "path": f"{M}/a/b/c.txt", "file_text": "x"},
                  {"command": "rename", "old_path": f"{M}/a/b/c.txt", "new_path": f"{M}/d/e/c.txt"})
    finally:
        os.umask(old)
    assert oct((pair.root / "a" / "b").stat().st_mode & 0o777) == "0o700"
    assert oct((pair.root / "d" / "e" / "c.txt").stat().st_mode & 0o777) == "0o600"


def test_the_line_limit_on_a_million_line_file(pair: Pair) -> None:
    pair.plant("big.txt", text="x\n" * 999_999)   # 999,999 lines + the empty tail: over the limit
    pair.plant("fits.txt", text="\n".join(["y"] * 999_999))
    answers = pair.same({"command": "view", "path": f"{M}/big.txt"},
                        {"command": "view", "path": f"{M}/fits.txt", "view_range": [999_998, -1]})
    assert answers[0] == "error: File /memories/big.txt exceeds maximum line limit of 999,999 lines."
    assert answers[1].endswith("999998\ty\n999999\ty")
    # Writing a million lines is one commit like any other.
    pair.same({"command": "create", "path": f"{M}/million.txt", "file_text": "z\n" * 1_000_000},
              {"command": "view", "path": f"{M}/million.txt"},
              {"command": "insert", "path": f"{M}/million.txt", "insert_line": 1_000_000, "insert_text": "end"},
              {"command": "str_replace", "path": f"{M}/million.txt", "old_str": "z\nend", "new_str": "last"})


def test_symlinks_planted_before_the_first_call(pair: Pair, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("outside\n")
    pair.plant("notes.txt", text="inside\n")
    pair.plant("out", link=str(secret))
    pair.plant("outdir", link=str(tmp_path))
    pair.plant("in", link="{root}/notes.txt")
    pair.plant("dangling", link="{root}/not-yet.txt")
    pair.plant("sub/up", link="../notes.txt")
    answers = pair.same(
        {"command": "view", "path": M},
        {"command": "view", "path": f"{M}/out"},
        {"command": "view", "path": f"{M}/outdir/secret.txt"},
        {"command": "create", "path": f"{M}/outdir/new.txt", "file_text": "x"},
        {"command": "str_replace", "path": f"{M}/out", "old_str": "outside", "new_str": "owned"},
        {"command": "delete", "path": f"{M}/out"},
        {"command": "rename", "old_path": f"{M}/out", "new_path": f"{M}/mine.txt"},
        {"command": "view", "path": f"{M}/dangling"},
        {"command": "create", "path": f"{M}/fresh.txt", "file_text": "a planted link elsewhere blocks nothing"},
        {"command": "view", "path": M},
    )
    assert answers[1] == "error: Path /memories/out would escape /memories directory"
    assert "\t/memories/out" not in answers[0] and "\t/memories/in" in answers[0]
    assert secret.read_text() == "outside\n" and not (tmp_path / "new.txt").exists()
    assert pair.log()[0] == "create /memories/fresh.txt"
    assert git("show", "--name-only", "--format=", "HEAD", cwd=pair.root).stdout.split() == ["fresh.txt"]


def test_links_into_git_are_never_read_or_written(tmp_path: Path) -> None:
    tool = GitMemoryTool(str(tmp_path / "m"))
    tool.call({"command": "view", "path": M})
    root = tool.memory_root
    (root / "g").symlink_to(root / ".git")
    (root / "cfg").symlink_to(root / ".git" / "config")
    for call in ({"command": "view", "path": f"{M}/cfg"}, {"command": "view", "path": f"{M}/.git/config"},
                 {"command": "create", "path": f"{M}/g/hooks/pre-commit", "file_text": "x"},
                 {"command": "create", "path": f"{M}/.gitattributes", "file_text": "* filter=x"}):
        out = answer(tool, call)
        assert out.startswith("error: Path /memories/") and "names git's own data" in out, out
    assert "/memories/g" not in answer(tool, {"command": "view", "path": M})
    assert not (root / ".git" / "hooks" / "pre-commit").read_text().startswith("x")


def test_scoped_cleanliness(tmp_path: Path) -> None:
    tool = GitMemoryTool(str(tmp_path / "m"))
    tool.call({"command": "create", "path": f"{M}/a.txt", "file_text": "a\n"})
    tool.call({"command": "create", "path": f"{M}/b.txt", "file_text": "b\n"})
    root = tool.memory_root
    (root / "dropped.txt").write_text("a person put this here\n")
    (root / "b.txt").write_text("edited by hand\n")
    assert tool.call({"command": "str_replace", "path": f"{M}/a.txt", "old_str": "a", "new_str": "A"}).startswith(
        "The memory file has been edited.")
    assert git("show", "--name-only", "--format=", "HEAD", cwd=root).stdout.split() == ["a.txt"]
    head = git("rev-parse", "HEAD", cwd=root).stdout
    out = answer(tool, {"command": "insert", "path": f"{M}/b.txt", "insert_line": 0, "insert_text": "x"})
    assert out.startswith("error: Memory repo has uncommitted changes.") and "Dirty: b.txt" in out, out
    assert (root / "b.txt").read_text() == "edited by hand\n" and git("rev-parse", "HEAD", cwd=root).stdout == head
    assert "dropped.txt" in tool.call({"command": "view", "path": M})


def test_commit_reasons(tmp_path: Path) -> None:
    tool = GitMemoryTool(str(tmp_path / "m"), reason=lambda args: f"agent asked to {args['command']}")
    tool.call({"command": "create", "path": f"{M}/a.txt", "file_text": "a"})
    with tool.reasoned("User said their name is Ann"):
        tool.call({"command": "str_replace", "path": f"{M}/a.txt", "old_str": "a", "new_str": "Ann"})
    tool.call({"command": "delete", "path": f"{M}/a.txt", "reason": "given in the call"})
    again = GitMemoryTool(memory_dir=str(tool.memory_root))
    assert again.call({"command": "create", "path": f"{M}/b.txt", "file_text": "b"}) == (
        "File created successfully at: /memories/b.txt")
    log = git("log", "--format=%s%n%b--", cwd=tool.memory_root).stdout
    assert log.split("--\n")[0].startswith("create /memories/b.txt\nMemory-Op: create\nMemory-Path: b.txt")
    assert git("log", "--format=%s", cwd=tool.memory_root).stdout.splitlines()[1:] == [
        "given in the call", "User said their name is Ann", "agent asked to create"]


def test_read_only_frontmatter_is_kept(tmp_path: Path) -> None:
    tool = GitMemoryTool(str(tmp_path / "m"))
    tool.call({"command": "view", "path": M})
    (tool.memory_root / "rules.md").write_text(memfile("Ground rules", "Never share secrets.\n", "read_only: true"))
    git("add", "rules.md", cwd=tool.memory_root)
    git("commit", "-qm", "protect", "--no-verify", cwd=tool.memory_root)  # a person protects it
    for call in ({"command": "str_replace", "path": f"{M}/rules.md", "old_str": "Never", "new_str": "Always"},
                 {"command": "insert", "path": f"{M}/rules.md", "insert_line": 0, "insert_text": "x"},
                 {"command": "delete", "path": f"{M}/rules.md"},
                 {"command": "rename", "old_path": f"{M}/rules.md", "new_path": f"{M}/r.md"}):
        assert "is read_only and cannot be" in answer(tool, call)
    assert git("log", "--format=%s", cwd=tool.memory_root).stdout.splitlines() == ["protect"]
    assert (tool.memory_root / "rules.md").read_text().endswith("Never share secrets.\n")


def test_concurrent_calls_from_threads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_MEMORY_LOCK_TIMEOUT", "300")  # a loaded machine is slow, never wrong
    tool = GitMemoryTool(str(tmp_path / "m"))
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(3):
                path = f"{M}/t{n}/f{i}.txt"
                assert tool.call({"command": "create", "path": path, "file_text": f"{n}-{i}\n"}).startswith("File")
                tool.call({"command": "str_replace", "path": path, "old_str": f"{n}-{i}", "new_str": f"done {n}"})
                tool.call({"command": "view", "path": M})
        except BaseException as exc:  # noqa: BLE001 - reported below, with the thread's own error
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    root = tool.memory_root
    assert len(git("log", "--format=%s", cwd=root).stdout.splitlines()) == 24
    assert git("status", "--porcelain", "--untracked-files=all", cwd=root).stdout == ""
    assert sorted(git("ls-files", cwd=root).stdout.split()) == sorted(
        f"t{n}/f{i}.txt" for n in range(4) for i in range(3))
    assert all((root / f"t{n}/f{i}.txt").read_text() == f"done {n}\n" for n in range(4) for i in range(3))


def test_async_twin_matches_the_async_reference(tmp_path: Path) -> None:
    async def go() -> list[tuple[str, str]]:
        ref = BetaAsyncLocalFilesystemMemoryTool(str(tmp_path / "ref"))
        ours = AsyncGitMemoryTool(str(tmp_path / "git"))
        out = []
        for call in ({"command": "create", "path": f"{M}/a.txt", "file_text": "1\n2\n3\n"},
                     {"command": "str_replace", "path": f"{M}/a.txt", "old_str": "2", "new_str": "two"},
                     {"command": "insert", "path": f"{M}/a.txt", "insert_line": 3, "insert_text": "4"},
                     {"command": "view", "path": f"{M}/a.txt"}, {"command": "view", "path": f"{M}/b.txt"},
                     {"command": "view", "path": M}):
            results = []
            for tool in (ref, ours):
                try:
                    results.append(await tool.call(call))
                except ToolError as exc:
                    results.append("error: " + str(exc.content))
            out.append((results[0], results[1]))
        return out

    for expected, got in asyncio.run(go()):
        assert got == expected
    assert tree(tmp_path / "git" / "memories") == tree(tmp_path / "ref" / "memories")


def test_clear_all_memory(pair: Pair) -> None:
    pair.same({"command": "create", "path": f"{M}/a/b.txt", "file_text": "b"})
    assert pair.ours.clear_all_memory() == pair.ref.clear_all_memory() == "All memory cleared"
    assert tree(pair.root) == tree(pair.ref_root) == {} and pair.clean()
    assert pair.log()[0] == "clear all memory"


def test_without_the_sdk_the_error_names_the_extra() -> None:
    code = ("import sys; sys.modules['anthropic'] = None\n"
            "try:\n    import gitmemfs.integrations.anthropic\n"
            "except ImportError as exc:\n    print(exc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "pip install 'git-memfs[anthropic]'" in out


def test_cli_call_in_a_letta_repo_keeps_frontmatter(repo: Path) -> None:
    def call(obj: dict[str, Any]) -> dict[str, Any]:
        import json

        return json.loads(memory("call", json.dumps(obj), "--schema", "anthropic", cwd=repo).stdout)

    assert call({"command": "create", "path": f"{M}/notes.txt", "file_text": "a\nb\n"})["ok"]
    assert (repo / "notes.txt.md").read_text() == "---\ndescription: Memory block notes.txt\n---\na\nb\n"
    out = call({"command": "str_replace", "path": f"{M}/notes.txt", "old_str": "b", "new_str": "B"})
    assert out["message"].endswith("     1\ta\n     2\tB\n     3\t")
    out = call({"command": "insert", "path": f"{M}/notes.txt", "insert_line": 5, "insert_text": "x"})
    assert out["error"] == "Invalid `insert_line` parameter: 5. It should be within the range [0, 2]."
    assert call({"command": "rename", "old_path": f"{M}/notes.txt", "new_path": f"{M}/todo.txt"})["ok"]
    assert (repo / "todo.txt.md").read_text().startswith("---\ndescription: Memory block todo.txt\n---\n")
    (repo / "stray.txt").write_text("untracked elsewhere does not block the Anthropic schema")
    assert call({"command": "delete", "path": f"{M}/todo.txt"})["ok"] and not (repo / "todo.txt.md").exists()


def test_the_sdks_tool_runner_drives_our_tool_offline(tmp_path: Path) -> None:
    """examples/anthropic_tool_runner.py: the SDK's own loop, a scripted model over a mock
    transport, our class as the memory tool: the file lands, the view answers, one commit."""
    example = Path(__file__).resolve().parent.parent / "examples" / "anthropic_tool_runner.py"
    proc = subprocess.run([sys.executable, str(example), str(tmp_path / "m")], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "model: Noted: short answers, UTC." in proc.stdout
    assert "     1\\tPrefers short answers." in proc.stdout  # the view result the model was sent
    assert (tmp_path / "m" / "memories" / "preferences.txt").read_text() == "Prefers short answers.\nWorks in UTC.\n"
    subjects = git("log", "--format=%s", cwd=tmp_path / "m" / "memories").stdout.splitlines()
    assert subjects == ["remember the user's preferences"]  # one commit for the one change
