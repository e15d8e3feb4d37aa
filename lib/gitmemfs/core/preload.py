"""An edit's modules from two image files instead of ~25 imports.

An edit imports ~25 of our modules, and Python's import system spends ~0.1 ms on
each beyond reading its bytecode (finders, specs, a file per module): ~2.5 ms of
an edit that should cost no more than the `git commit` it replaces. CPython
freezes its own start-up modules for the same reason. `build` imports the edit
path in a fresh interpreter and writes the modules of each stage, in the order
they finished, into one file beside the bytecode
(`gitmemfs/__pycache__/<stage>.<tag>.image`); `load` runs a stage's modules from
there, so the imports that follow find them done. The stages follow the edit:
`early` is what starts the clean check's `git status` (core/earlycheck.py), `edit`
what runs until the writer lock is taken (cli/cmd_edit.py `editor`), `editor` what
loads while git works (see Repo.start_writing).

An image is used only when it is current: the same Python bytecode format, and
every source file the same size and modification time as when it was built (what
a .pyc is checked against). Otherwise, or on any surprise, nothing is preloaded
and the usual imports run. `make venv` and `make bench` build the images; an
installed package has none and imports as usual. This module imports nothing of
ours before the first image is loaded: the launchers load it first.
"""
from __future__ import annotations

import marshal
import os
import sys

# The command words whose lines load the `edit` stage: cli/fastargs.py's SHAPES (a
# test keeps the two equal).
EDIT_COMMANDS = frozenset(("create", "str_replace", "str-replace", "insert", "delete", "rename",
                           "update_description", "update-description"))
# Each stage's first imports; a stage holds what they import that earlier ones did not.
STAGES = (("early", ("gitmemfs.core.earlycheck",)),
          ("edit", ("gitmemfs.cli.memory", "gitmemfs.cli.fastargs", "gitmemfs.cli.cmd_edit")),
          ("editor", ("gitmemfs.edit.editor",)))
_GLOBAL_FLAGS = ("--json", "-q", "--quiet")
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def image_path(stage: str, folder: str | None = None) -> str:
    return os.path.join(folder or os.path.join(_PACKAGE, "__pycache__"),
                        f"{stage}.{sys.implementation.cache_tag}.image")


_ASKED: list[bool] = []


def load_for(argv: list[str]) -> bool:
    """For an edit's line (`argv`: the arguments after `git memory`): load the `early`
    stage, start the clean check (core/earlycheck.py), then load the `edit` stage;
    True when both images were current. Once a process: the launchers ask first, and
    cli/memory.py's `run` asks again for an installed package's console script."""
    if _ASKED or command_word(argv) not in EDIT_COMMANDS:
        return False
    _ASKED.append(True)
    import gc

    # An edit lives ~30 ms and leaves by os._exit (cli/memory.py `run`): the cyclic
    # collector only costs it, ~1 ms of collections while ~25 modules are created.
    gc.disable()
    loaded = load("early")
    from gitmemfs.core import earlycheck

    may, folder = earlycheck.folder_of(argv)
    if may:
        earlycheck.start(folder)
    return load("edit") and loaded


def command_word(argv: list[str]) -> str | None:
    """The subcommand past the global options, as cli/memory.py's `command_word` reads
    it (that module is in the image: it cannot be imported to ask; a test compares)."""
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--memory-dir":
            i += 2
        elif arg in _GLOBAL_FLAGS or arg.startswith("--memory-dir="):
            i += 1
        else:
            return None if arg.startswith("-") else arg
    return None


def load(stage: str, folder: str | None = None) -> bool:
    """Run the modules of `stage`'s image (in `folder`) if it is current; True when it
    was. Modules already imported are left as they are."""
    try:
        with open(image_path(stage, folder), "rb") as fh:
            data = fh.read()
    except OSError:
        return False
    boot = sys.modules["_frozen_importlib"]
    external = sys.modules["_frozen_importlib_external"]
    if not data.startswith(external.MAGIC_NUMBER):
        return False
    try:
        entries = marshal.loads(memoryview(data)[len(external.MAGIC_NUMBER):])
        for _name, _package, source, mtime_ns, size, _code in entries:
            info = os.stat(source)
            if info.st_mtime_ns != mtime_ns or info.st_size != size:
                return False
    except (OSError, ValueError, TypeError, EOFError):
        return False
    loaded: list[str] = []
    try:
        for name, package, source, _mtime, _size, code in entries:
            if name in sys.modules:
                continue
            folder_of = [os.path.dirname(source)] if package else None
            module = boot.module_from_spec(external.spec_from_file_location(
                name, source, submodule_search_locations=folder_of))
            sys.modules[name] = module
            loaded.append(name)
            exec(marshal.loads(code), module.__dict__)
            parent, _, child = name.rpartition(".")
            if parent:
                setattr(sys.modules[parent], child, module)
    except Exception:  # noqa: BLE001 - whatever it was, the usual imports will say it again
        for name in loaded:
            sys.modules.pop(name, None)
        return False
    return True


def build(folder: str | None = None) -> list[str]:
    """Import each stage's modules here, in a fresh interpreter (`python -S -m
    gitmemfs.core.preload build [FOLDER]`), and write their images; their paths."""
    if any(m.startswith("gitmemfs.") and m not in ("gitmemfs.core", __name__) for m in sys.modules):
        # The order modules finish in is the order they can run in: only a fresh
        # interpreter shows it.
        raise RuntimeError("build the images in a fresh interpreter: python -S -m gitmemfs.core.preload build")
    external = sys.modules["_frozen_importlib_external"]
    finished: list[str] = ["gitmemfs", "gitmemfs.core"]  # imported already, to run this

    class Recorder:
        """Notes each of our modules as it finishes executing."""

        @staticmethod
        def find_spec(fullname: str, path: object = None, target: object = None) -> object:
            if not fullname.startswith("gitmemfs."):
                return None
            spec = external.PathFinder.find_spec(fullname, path)
            if spec is None or not isinstance(spec.loader, external.SourceFileLoader):
                return spec
            run = spec.loader.exec_module

            def exec_module(module: object, run=run, fullname=fullname) -> None:
                run(module)
                finished.append(fullname)

            spec.loader.exec_module = exec_module
            return spec

    written = []
    sys.meta_path.insert(0, Recorder())
    try:
        for stage, first in STAGES:
            start = len(finished)
            for name in first:
                __import__(name)
            written.append(_write(image_path(stage, folder), finished[start:] if written else finished))
    finally:
        sys.meta_path.pop(0)
    return written


def _write(target: str, names: list[str]) -> str:
    entries = []
    for name in names:
        module = sys.modules[name]
        source = module.__file__
        with open(source, "rb") as fh:
            code = compile(fh.read(), source, "exec", dont_inherit=True)
        info = os.stat(source)
        entries.append((name, hasattr(module, "__path__"), source, info.st_mtime_ns, info.st_size,
                        marshal.dumps(code)))
    os.makedirs(os.path.dirname(target), exist_ok=True)
    tmp = f"{target}.{os.getpid()}.tmp"
    with open(tmp, "wb") as fh:
        fh.write(sys.modules["_frozen_importlib_external"].MAGIC_NUMBER + marshal.dumps(entries))
    os.replace(tmp, target)
    return target


if __name__ == "__main__":
    if sys.argv[1:2] != ["build"] or len(sys.argv) > 3:
        sys.exit("usage: python -S -m gitmemfs.core.preload build [FOLDER]")
    print("\n".join(build(sys.argv[2] if len(sys.argv) == 3 else None)))
