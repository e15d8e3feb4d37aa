"""core/nofollow.rmtree removes a folder without following a link in it, on every
Python we support: 3.11+ through shutil.rmtree(dir_fd=...), 3.10 (whose rmtree has no
dir_fd) through its own walk. The Anthropic tool's folder rename ends with it."""
from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gitmemfs.core import nofollow

LIB = Path(__file__).resolve().parent.parent / "lib"


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    """root/gone/{file, sub/deep, link-to-outside-folder, link-to-outside-file}, and
    the outside folder the links point at."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "gone" / "sub").mkdir(parents=True)
    outside.mkdir()
    (outside / "keep.md").write_text("keep\n")
    (root / "gone" / "file.md").write_text("a\n")
    (root / "gone" / "sub" / "deep.md").write_text("b\n")
    os.symlink(outside, root / "gone" / "folder-link")
    os.symlink(outside / "keep.md", root / "gone" / "file-link")
    (root / "stays.md").write_text("c\n")
    return root, outside


def _removed_only_the_folder(root: Path, outside: Path) -> None:
    assert not os.path.lexists(root / "gone")
    assert (root / "stays.md").read_text() == "c\n"
    assert sorted(os.listdir(outside)) == ["keep.md"]
    assert (outside / "keep.md").read_text() == "keep\n"


def test_rmtree_removes_the_folder_and_never_what_a_link_points_at(tmp_path: Path) -> None:
    root, outside = _tree(tmp_path)
    nofollow.rmtree(str(root), str(root / "gone"))
    _removed_only_the_folder(root, outside)


def test_the_python_3_10_walk_does_the_same(tmp_path: Path) -> None:
    root, outside = _tree(tmp_path)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        nofollow._rmtree_below(fd, "gone")
    finally:
        os.close(fd)
    _removed_only_the_folder(root, outside)


def test_a_link_in_the_folders_place_is_left_and_not_followed(tmp_path: Path) -> None:
    root, outside = _tree(tmp_path)
    shutil.rmtree(root / "gone")
    os.symlink(outside, root / "gone")
    nofollow.rmtree(str(root), str(root / "gone"))
    assert os.path.islink(root / "gone")
    assert sorted(os.listdir(outside)) == ["keep.md"]
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        nofollow._rmtree_below(fd, "gone")
    finally:
        os.close(fd)
    assert os.path.islink(root / "gone")
    assert sorted(os.listdir(outside)) == ["keep.md"]


def _pythons() -> list[str]:
    """This interpreter and any other CPython >= 3.10 on the machine (pyenv's); found
    at collection, before the tests' private HOME."""
    found = {sys.executable}
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    for minor in (10, 11, 12, 13):
        found.update(glob.glob(os.path.join(root, "versions", f"3.{minor}.*", "bin", f"python3.{minor}")))
    return sorted(found)


@pytest.mark.parametrize("python", _pythons())
def test_rmtree_on_every_python(tmp_path: Path, python: str) -> None:
    """On 3.10, shutil.rmtree(dir_fd=...) raised TypeError (mypy at python_version 3.10
    said so): the Anthropic tool's folder rename failed after its commit."""
    root, outside = _tree(tmp_path)
    proc = subprocess.run([python, "-I", "-S", "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                           "from gitmemfs.core import nofollow; nofollow.rmtree(sys.argv[2], sys.argv[3])",
                           str(LIB), str(root), str(root / "gone")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    _removed_only_the_folder(root, outside)
