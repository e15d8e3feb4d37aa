"""gitmemfs/core/preload.py: an edit's modules run from image files, only while they
are current, and the result is the same as importing them one by one."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import LIB, ROOT, git, memory
from gitmemfs.cli import fastargs
from gitmemfs.cli import memory as memory_cli
from gitmemfs.core import preload


def python(code: str, *args: str, lib: Path = LIB) -> subprocess.CompletedProcess[str]:
    """A fresh `python -S` with only `lib` on the path, as the launchers run it."""
    env = {**os.environ, "PYTHONPATH": str(lib)}
    return subprocess.run([sys.executable, "-S", "-c", code, *args], env=env, capture_output=True, text=True)


@pytest.fixture
def lib(tmp_path: Path) -> Path:
    """A copy of lib/, so a test can age its files without touching the checkout's."""
    copy = tmp_path / "lib"
    shutil.copytree(LIB, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


@pytest.fixture
def images(lib: Path, tmp_path: Path) -> Path:
    """The folder holding both stages' images, built from the copy of lib/."""
    folder = tmp_path / "images"
    proc = subprocess.run([sys.executable, "-S", "-m", "gitmemfs.core.preload", "build", str(folder)],
                          env={**os.environ, "PYTHONPATH": str(lib)}, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name.split(".")[0] for p in folder.iterdir()) == ["early", "edit", "editor"]
    return folder


# Loads the three stages, then imports the edit path as an edit does, noting any of our
# modules the import system still had to find on disk.
PROBE = """
import sys
found = []
class Watch:
    def find_spec(self, name, path=None, target=None):
        if name.startswith("gitmemfs."):
            found.append(name)
        return None
sys.meta_path.insert(0, Watch())
from gitmemfs.core import preload
used = [preload.load(stage, sys.argv[1]) for stage in ("early", "edit", "editor")]
import gitmemfs.cli.memory, gitmemfs.cli.fastargs, gitmemfs.cli.cmd_edit, gitmemfs.edit.editor
from gitmemfs.core import writer
print(all(used), sorted(set(found) - {"gitmemfs.core", "gitmemfs.core.preload"}),
      writer.__spec__.origin == writer.__file__, sys.modules["gitmemfs.core"].writer is writer,
      writer.WriteSession.__module__)
"""


def test_the_images_hold_the_whole_edit_path_and_the_modules_are_as_imported(images: Path, lib: Path) -> None:
    proc = python(PROBE, str(images), lib=lib)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "[]", "True", "True", "gitmemfs.core.writer"]


def test_a_changed_source_file_makes_the_image_stale(images: Path, lib: Path) -> None:
    source = lib / "gitmemfs" / "core" / "outcome.py"
    info = source.stat()
    os.utime(source, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000_000))
    proc = python(PROBE, str(images), lib=lib)
    assert proc.returncode == 0, proc.stderr
    used, rest = proc.stdout.split(" ", 1)
    assert used == "False" and "gitmemfs.core.writer" in rest, "imported one by one instead"


def test_an_image_of_another_python_or_a_damaged_one_is_ignored(images: Path, lib: Path) -> None:
    image = images / preload.image_path("edit", str(images)).rsplit("/", 1)[1]
    data = image.read_bytes()
    code = "import sys\nfrom gitmemfs.core import preload\nprint(preload.load('edit', sys.argv[1]))"
    image.write_bytes(b"\x00\x00\r\n" + data[4:])
    assert python(code, str(images), lib=lib).stdout == "False\n"
    image.write_bytes(data[:4] + b"\x01garbage")
    assert python(code, str(images), lib=lib).stdout == "False\n"
    image.write_bytes(data)
    assert python(code, str(images), lib=lib).stdout == "True\n"


def test_a_module_that_fails_in_the_image_leaves_nothing_half_loaded(images: Path, lib: Path) -> None:
    """An image whose fifth module raises loads nothing: the usual imports then run."""
    import marshal

    image = Path(preload.image_path("early", str(images)))
    data = image.read_bytes()
    entries = marshal.loads(data[4:])
    name, package, source, mtime, size, _code = entries[4]
    boom = compile("raise ValueError('boom')", source, "exec")
    entries[4] = (name, package, source, mtime, size, marshal.dumps(boom))
    image.write_bytes(data[:4] + marshal.dumps(entries))
    code = ("import sys\nfrom gitmemfs.core import preload\n"
            "print(preload.load('early', sys.argv[1]), sorted(m for m in sys.modules if m.startswith('gitmemfs.')))")
    proc = python(code, str(images), lib=lib)
    assert proc.stdout == "False ['gitmemfs.core', 'gitmemfs.core.preload']\n", proc.stdout + proc.stderr


def test_building_refuses_an_interpreter_that_has_imported_our_modules_already() -> None:
    proc = python("import gitmemfs.core.errors\nfrom gitmemfs.core import preload\npreload.build('/dev/null')")
    assert proc.returncode != 0 and "fresh interpreter" in proc.stderr


def test_the_edit_commands_are_the_ones_cli_fastargs_reads() -> None:
    assert preload.EDIT_COMMANDS == set(fastargs.SHAPES)


WORDS = st.sampled_from(["--json", "-q", "--quiet", "--memory-dir", "--memory-dir=/x", "/x", "-h", "str_replace",
                         "view", "create", "--version", "insert", "x"])


@given(st.lists(WORDS, max_size=6))
def test_the_command_word_is_read_as_cli_memory_reads_it(argv: list[str]) -> None:
    assert preload.command_word(argv) == memory_cli.command_word(argv)


def test_edits_through_both_launchers_use_the_image_and_work(mem: Path, monkeypatch: pytest.MonkeyPatch,
                                                              tmp_path: Path) -> None:
    """bin/git-memory and the venv's lean launcher (tools/make_launchers.py) both run
    an edit's modules from the image (`make venv` builds it; so does this test):
    Python's import profile then lists none of them."""
    subprocess.run([sys.executable, "-S", "-m", "gitmemfs.core.preload", "build"], check=True,
                   env={**os.environ, "PYTHONPATH": str(LIB)}, capture_output=True)
    monkeypatch.delenv("GIT_MEMFS_PYTHON")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    launcher = venv / "bin" / "git-memory"
    from importlib import util

    spec = util.spec_from_file_location("make_launchers", ROOT / "tools" / "make_launchers.py")
    assert spec and spec.loader
    tool = util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    launcher.write_text(tool.launcher(str(venv / "bin" / "python"), str(LIB), str(LIB), "gitmemfs.cli.memory",
                                      "run"))
    launcher.chmod(0o755)
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    for n, command in enumerate([[str(ROOT / "bin" / "git-memory")], [str(launcher)]]):
        proc = subprocess.run([*command, "str_replace", "system/contacts.md", "Sarah" if n == 0 else "Sara",
                               "Sara" if n == 0 else "Sal", "-m", f"edit {n}"], cwd=mem, capture_output=True,
                              text=True, env=env)
        assert proc.returncode == 0, proc.stderr
        assert "| gitmemfs.core.preload" in proc.stderr, "the import profile is on"
        assert "gitmemfs.core.writer" not in proc.stderr and "gitmemfs.edit.editor" not in proc.stderr
    assert git("log", "-1", "--format=%s", cwd=mem).stdout.strip() == "edit 1"
    assert memory("view", "system/contacts.md", cwd=mem).stdout.count("Sal:") == 1
