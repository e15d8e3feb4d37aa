"""Replace pip's console scripts in a checkout's venv with lean launchers.

`make venv` installs the package editable, and pip writes `.venv/bin/git-memory`
(and the other two) as a script that runs site.py and imports `re`: ~5 ms of every
command, a tenth of an edit. The README puts `.venv/bin` on PATH, so that is the
launcher people run. This writes each one anew as a Python script run with `-S`
that puts the checkout's `lib/` and the venv's site-packages on the path itself,
as `bin/git-memory` does, without a shell in front. A later `pip install` writes
pip's scripts back; they work the same, only slower.

Usage: python tools/make_launchers.py VENV (run by the venv's own python).
"""
from __future__ import annotations

import os
import sys
import sysconfig

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARKER = "git-memfs lean launcher"
# (script, module, entry): as setup.cfg's console_scripts.
SCRIPTS = (("git-memory", "gitmemfs.cli.memory", "run"),
           ("git-memory-patch", "gitmemfs.cli.patch", "main"),
           ("git-dream", "gitmemfs.cli.dream", "main"))


def launcher(python: str, lib: str, site: str, module: str, entry: str) -> str:
    lines = [f"#!{python} -S",
             f"# {MARKER}, written by `make venv` (tools/make_launchers.py): no site.py,",
             "# no shell; the checkout's lib/ and the venv's packages after the standard library.",
             "import sys",
             "del sys.path[0]  # this folder, not a module folder",
             f"sys.path += [{lib!r}, {site!r}]"]
    if module == "gitmemfs.cli.memory":  # an edit's modules from one file (gitmemfs/core/preload.py)
        lines += ["from gitmemfs.core.preload import load_for", "load_for(sys.argv[1:])"]
    lines += [f"from {module} import {entry}", "run()" if entry == "run" else f"sys.exit({entry}())"]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    venv = os.path.abspath(argv[0] if argv else ".venv")
    python = os.path.join(venv, "bin", "python")
    if os.path.realpath(sys.prefix) != os.path.realpath(venv):
        print(f"error: run this with {python}, not {sys.executable}", file=sys.stderr)
        return 2
    site = sysconfig.get_paths()["purelib"]
    lib = os.path.join(ROOT, "lib")
    for script, module, entry in SCRIPTS:
        if len(python) + 4 > 127 or any(c.isspace() for c in python):
            # The kernel reads 127 bytes of a `#!` line and splits it at a space: keep pip's.
            print(f"note: {python} does not fit a #! line; kept pip's {script}", file=sys.stderr)
            return 0
        target = os.path.join(venv, "bin", script)
        tmp = target + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(launcher(python, lib, site, module, entry))
        os.chmod(tmp, 0o755)
        os.replace(tmp, target)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
