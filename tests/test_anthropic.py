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


def test_scoped_cleanliness_without_adopting(tmp_path: Path) -> None:
    tool = GitMemoryTool(str(tmp_path / "m"), adopt=False)
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


def test_outside_changes_are_adopted_as_their_own_commit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_ID", "agent-7")  # the tool's commits are the agent's, the outside one the person's
    tool = GitMemoryTool(str(tmp_path / "m"))
    for name in ("a.txt", "b.txt", "c.txt"):
        tool.call({"command": "create", "path": f"{M}/{name}", "file_text": f"{name}\n"})
    root = tool.memory_root
    (root / "b.txt").write_bytes(b"line1\r\nline2\r\n")  # changed, created and removed beside the tool
    (root / "notes").mkdir()
    (root / "notes" / "new.txt").write_text("a person wrote this\n")
    (root / "c.txt").unlink()
    git("mv", "a.txt", "moved.txt", cwd=root)  # a rename a person staged: both paths
    assert tool.call({"command": "view", "path": f"{M}/b.txt"}).endswith("     2\tline2\r\n     3\t")
    assert git("status", "--porcelain", cwd=root).stdout != ""  # a view records nothing
    tool.call({"command": "str_replace", "path": f"{M}/b.txt", "old_str": "line2", "new_str": "LINE2"})
    assert (root / "b.txt").read_bytes() == b"line1\r\nLINE2\r\n"
    log = git("log", "-2", "--format=%an <%ae>|%s|%(trailers:only,unfold,separator=%x2C)", cwd=root).stdout
    assert log.splitlines() == [
        "agent-7 <agent-7@agents.invalid>|str_replace /memories/b.txt|Memory-Op: str_replace,Memory-Path: b.txt",
        "Test User <test@example.com>|outside change|Memory-Op: adopt,Memory-Path: a.txt,Memory-Path: b.txt,"
        "Memory-Path: c.txt,Memory-Path: moved.txt,Memory-Path: notes/new.txt"]
    kept = subprocess.run(["git", "show", "HEAD~1:b.txt"], cwd=root, capture_output=True, check=True).stdout
    assert kept == b"line1\r\nline2\r\n"  # the person's bytes, as they were
    assert git("status", "--porcelain", "--untracked-files=all", cwd=root).stdout == ""
    checked = memory("check", "HEAD~4..HEAD", cwd=root)  # every commit passes the gate, the adopted one too
    assert checked.returncode == 0, checked.stderr


def test_a_refused_outside_change_refuses_only_the_writes_it_touches(tmp_path: Path) -> None:
    tool = GitMemoryTool(str(tmp_path / "m"))
    tool.call({"command": "view", "path": M})
    root = tool.memory_root
    (root / "rules.md").write_text(memfile("Ground rules", "Never share secrets.\n", "read_only: true"))
    git("add", "rules.md", cwd=root)
    git("commit", "-qm", "protect", "--no-verify", cwd=root)  # a person protects it
    (root / "rules.md").write_text(memfile("Ground rules", "Share everything.\n"))  # unprotected by hand
    (root / "link.txt").symlink_to(root / "rules.md")
    (root / "fine.txt").write_text("adoptable\n")
    head = git("rev-parse", "HEAD", cwd=root).stdout
    out = answer(tool, {"command": "insert", "path": f"{M}/rules.md", "insert_line": 0, "insert_text": "x"})
    assert out.startswith("error: memory: an outside change was not adopted: ") and "rules.md" in out, out
    assert "rules.md: file is read_only and cannot be modified" in out and "link.txt" not in out, out
    assert git("rev-parse", "HEAD", cwd=root).stdout == head  # nothing committed, nothing changed
    assert "Share everything." in (root / "rules.md").read_text()
    out = answer(tool, {"command": "create", "path": f"{M}/other.txt", "file_text": "o\n"})
    assert out == "ok: File created successfully at: /memories/other.txt"
    assert git("log", "-2", "--format=%s", cwd=root).stdout.split("\n")[:2] == ["create /memories/other.txt",
                                                                               "outside change"]
    assert git("show", "--name-only", "--format=", "HEAD~1", cwd=root).stdout.split() == ["fine.txt"]
    dirty = git("status", "--porcelain", "--untracked-files=all", cwd=root).stdout.splitlines()
    assert sorted(dirty) == [" M rules.md", "?? link.txt"]  # left as they were, uncommitted
    with pytest.raises(ToolError, match="link.txt is a symbolic link"):  # the whole tree: both refuse it
        tool.clear_all_memory()
    assert (root / "other.txt").exists()


def test_base_path_holds_only_the_memory_files_and_one_link(tmp_path: Path) -> None:
    tool = GitMemoryTool(str(tmp_path / "m"))
    tool.call({"command": "create", "path": f"{M}/a/b.txt", "file_text": "b"})
    found = []
    for dirpath, _, filenames in os.walk(tmp_path / "m"):  # as a backup or the SDK's tests walk it
        found += [os.path.relpath(os.path.join(dirpath, f), tmp_path / "m") for f in filenames]
    assert found == ["memories/a/b.txt"]
    link = tool.memory_root / ".git"
    data = Path(os.environ["HOME"]) / ".local" / "share" / "git-memfs" / "anthropic"
    assert link.is_symlink() and Path(os.readlink(link)).parent == data
    assert Path(os.readlink(link)).name.startswith("m-") and (Path(os.readlink(link)) / "HEAD").is_file()
    assert oct(data.stat().st_mode & 0o777) == "0o700"
    assert git("log", "--format=%s", cwd=tool.memory_root).stdout == "create /memories/a/b.txt\n"
    checked = memory("check", cwd=tool.memory_root)  # plain git and git memory work in the folder as ever
    assert checked.returncode == 0, checked.stderr


def test_a_relative_base_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    tool = GitMemoryTool("memory")
    assert tool.call({"command": "create", "path": f"{M}/a.txt", "file_text": "a"}).startswith("File created")
    assert (tmp_path / "memory" / "memories" / "a.txt").read_text() == "a"
    assert git("log", "--format=%s", cwd=tmp_path / "memory" / "memories").stdout == "create /memories/a.txt\n"


def test_the_git_dir_is_chosen_once_and_found_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    GitMemoryTool(str(tmp_path / "m")).call({"command": "create", "path": f"{M}/a.txt", "file_text": "a"})
    link = tmp_path / "m" / "memories" / ".git"
    kept = os.readlink(link)
    assert kept.startswith(str(tmp_path / "data" / "git-memfs" / "anthropic" / "m-"))
    link.unlink()  # the link lost (a copy that skipped it): the same folder finds the same history
    again = GitMemoryTool(str(tmp_path / "m"))
    again.call({"command": "create", "path": f"{M}/b.txt", "file_text": "b"})
    assert os.readlink(link) == kept
    assert git("log", "--format=%s", cwd=link.parent).stdout.splitlines() == ["create /memories/b.txt",
                                                                             "create /memories/a.txt"]
    chosen = tmp_path / "elsewhere" / "history.git"
    other = GitMemoryTool(str(tmp_path / "n"), git_dir=chosen)
    other.call({"command": "create", "path": f"{M}/c.txt", "file_text": "c"})
    assert os.readlink(tmp_path / "n" / "memories" / ".git") == str(chosen)
    assert git("--git-dir", str(chosen), "log", "--format=%s", cwd=tmp_path).stdout == "create /memories/c.txt\n"
    with pytest.raises(ValueError, match="keeps its history in"):  # another git_dir for the same memory
        GitMemoryTool(str(tmp_path / "n"), git_dir=tmp_path / "third.git").call({"command": "view", "path": M})


def test_a_moved_memory_keeps_its_history_to_itself(tmp_path: Path) -> None:
    GitMemoryTool(str(tmp_path / "a")).call({"command": "create", "path": f"{M}/x.txt", "file_text": "x"})
    (tmp_path / "a").rename(tmp_path / "b")  # the link moves along: the history follows the folder
    with pytest.raises(ValueError, match="is the history of another folder that was at .*/a/memories"):
        GitMemoryTool(str(tmp_path / "a")).call({"command": "view", "path": M})  # a new folder at the old place
    assert not (tmp_path / "a" / "memories" / ".git").exists()
    moved = GitMemoryTool(str(tmp_path / "b"))
    assert moved.call({"command": "view", "path": f"{M}/x.txt"}).endswith("1\tx")
    assert git("log", "--format=%s", cwd=tmp_path / "b" / "memories").stdout == "create /memories/x.txt\n"
    fresh = GitMemoryTool(str(tmp_path / "a"), git_dir=tmp_path / "a.git")
    fresh.call({"command": "create", "path": f"{M}/y.txt", "file_text": "y"})
    assert git("log", "--format=%s", cwd=tmp_path / "a" / "memories").stdout == "create /memories/y.txt\n"
    assert git("status", "--porcelain", cwd=tmp_path / "b" / "memories").stdout == ""


def test_a_memory_with_its_git_folder_inside_keeps_working(tmp_path: Path) -> None:
    root = tmp_path / "m" / "memories"
    root.mkdir(parents=True)
    git("init", "-q", "-b", "main", str(root), cwd=tmp_path)  # the layout of earlier versions
    (root / "old.txt").write_text("kept\n")
    git("add", "old.txt", cwd=root)
    git("commit", "-qm", "before", cwd=root)
    tool = GitMemoryTool(str(tmp_path / "m"))
    tool.call({"command": "str_replace", "path": f"{M}/old.txt", "old_str": "kept", "new_str": "still kept"})
    assert (root / ".git").is_dir() and not (root / ".git").is_symlink()
    assert git("log", "--format=%s", cwd=root).stdout.splitlines() == ["str_replace /memories/old.txt", "before"]
    assert not (Path(os.environ["HOME"]) / ".local" / "share" / "git-memfs").exists()


def test_a_folder_swapped_for_a_link_while_reading_is_refused(pair: Pair, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """O_NOFOLLOW guards the last name only: a folder on the way swapped for a link just
    before the open fools the reference; our second look, folder by folder, does not."""
    pair.same({"command": "create", "path": f"{M}/sub/notes.txt", "file_text": "inside"})
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "notes.txt").write_text("outside secret")
    real_open = os.open

    def swap_then_open(path: Any, flags: int, *rest: Any, **kw: Any) -> int:
        if str(path).endswith("sub/notes.txt") and not kw:
            folder = Path(path).parent
            (folder / "notes.txt").unlink()
            folder.rmdir()
            folder.symlink_to(outside, target_is_directory=True)
        return real_open(path, flags, *rest, **kw)

    monkeypatch.setattr(os, "open", swap_then_open)
    call = {"command": "view", "path": f"{M}/sub/notes.txt"}
    assert answer(pair.ref, call).endswith("1\toutside secret")  # the reference reads outside
    out = answer(pair.ours, call)
    assert out.startswith("error: The path /memories/sub/notes.txt is a symlink or "), out
    assert "outside secret" not in out


def test_the_sdks_private_surface(tmp_path: Path) -> None:
    tool = GitMemoryTool(str(tmp_path / "m"))
    (tool.memory_root / "real").mkdir()
    (tool.memory_root / "link").symlink_to(tool.memory_root / "real")
    assert tool._validate_path("/memories/link/x.txt") == (tool.memory_root / "real" / "x.txt").resolve()
    with pytest.raises(ToolError, match="would escape"):
        tool._validate_path("/memories/../x")

    class Audited(GitMemoryTool):  # a subclass that checks paths further, as the SDK invites
        def _validate_path(self, path: str) -> Path:
            if "secret" in path:
                raise ToolError(f"{path} is off limits")
            return super()._validate_path(path)

    assert "off limits" in answer(Audited(str(tmp_path / "a")), {"command": "create", "path": f"{M}/secret.txt",
                                                                "file_text": "x"})

    async def go() -> tuple[Any, Any]:
        atool = AsyncGitMemoryTool(str(tmp_path / "n" / "deep"))
        await atool._ensure_memory_root()
        return await atool._validate_path("/memories/a.txt"), await atool.memory_root.is_dir()

    validated, made = asyncio.run(go())
    assert type(validated).__module__.startswith("anyio") and made
    assert str(validated) == str((tmp_path / "n" / "deep" / "memories" / "a.txt").resolve())


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
    assert "pip install '.[anthropic]' in your git-memfs checkout" in out


def test_cli_call_in_a_letta_repo_keeps_the_names(repo: Path) -> None:
    def call(obj: dict[str, Any], *flags: str) -> dict[str, Any]:
        import json

        proc = memory("call", json.dumps(obj), "--schema", "anthropic", *flags, cwd=repo)
        return json.loads(proc.stdout)

    assert call({"command": "create", "path": f"{M}/notes.txt", "file_text": "a\nb\n"})["ok"]
    assert (repo / "notes.txt").read_text() == "a\nb\n" and not (repo / "notes.txt.md").exists()
    assert "\t/memories/notes.txt\n" in call({"command": "view", "path": M})["message"] + "\n"
    out = call({"command": "str_replace", "path": f"{M}/notes.txt", "old_str": "b", "new_str": "B"})
    assert out["message"].endswith("     1\ta\n     2\tB\n     3\t")
    out = call({"command": "insert", "path": f"{M}/notes.txt", "insert_line": 5, "insert_text": "x"})
    assert out["error"] == "Invalid `insert_line` parameter: 5. It should be within the range [0, 2]."
    assert call({"command": "rename", "old_path": f"{M}/notes.txt", "new_path": f"{M}/todo.txt"})["ok"]
    assert (repo / "todo.txt").read_text() == "a\nB\n"
    # A Markdown file is a memory block there: it gets its frontmatter, the agent sees the body.
    assert call({"command": "create", "path": f"{M}/plans.md", "file_text": "ship it\n"})["ok"]
    assert (repo / "plans.md").read_text() == "---\ndescription: Memory block plans\n---\nship it\n"
    assert call({"command": "view", "path": f"{M}/plans.md"})["message"].endswith("     1\tship it\n     2\t")
    (repo / "stray.txt").write_text("untracked elsewhere does not block the Anthropic schema")
    assert call({"command": "delete", "path": f"{M}/todo.txt"})["ok"] and not (repo / "todo.txt").exists()
    # Outside changes: refused by default, adopted when asked.
    (repo / "plans.md").write_text("---\ndescription: Memory block plans\n---\nby hand\n")
    edit = {"command": "str_replace", "path": f"{M}/plans.md", "old_str": "by hand", "new_str": "agreed"}
    assert call(edit)["error"].startswith("Memory repo has uncommitted changes.")
    assert call(edit, "--adopt-outside-changes")["ok"]
    assert git("log", "-2", "--format=%s|%an", cwd=repo).stdout.splitlines() == [
        "str_replace /memories/plans.md|Test User", "outside change|Test User"]
    assert git("show", "--name-only", "--format=", "HEAD~1", cwd=repo).stdout.split() == ["plans.md", "stray.txt"]


def test_cli_letta_schema_adopts_when_asked(mem: Path) -> None:
    import json

    (mem / "system" / "contacts.md").write_text(memfile("People I know", "Sarah: +1-555-0100\nAnn: new\n"))
    (mem / "reference" / "history" / "b.md").unlink()
    edit = json.dumps({"command": "str_replace", "reason": "Tom's new number", "file_path": "reference/history/a.md",
                       "old_string": "alpha", "new_string": "ALPHA"})
    before = git("rev-parse", "HEAD", cwd=mem).stdout
    refused = json.loads(memory("call", edit, cwd=mem).stdout)
    assert refused["error"].startswith("Memory repo has uncommitted changes.")
    assert git("rev-parse", "HEAD", cwd=mem).stdout == before
    assert json.loads(memory("call", edit, "--adopt-outside-changes", cwd=mem).stdout)["ok"]
    assert git("log", "-2", "--format=%s", cwd=mem).stdout.splitlines() == ["Tom's new number", "outside change"]
    assert git("show", "--name-only", "--format=", "HEAD~1", cwd=mem).stdout.split() == [
        "reference/history/b.md", "system/contacts.md"]
    # A person's edit of a read_only file is not adopted: the write is refused, naming it.
    (mem / "system" / "rules.md").write_text(memfile("Ground rules", "Share everything.\n"))
    out = json.loads(memory("call", edit.replace("ALPHA", "x").replace("alpha", "ALPHA"), "--adopt-outside-changes",
                            cwd=mem).stdout)
    assert out["error"].startswith("memory: an outside change was not adopted: system/rules.md"), out
    assert git("log", "-1", "--format=%s", cwd=mem).stdout == "Tom's new number\n"


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
