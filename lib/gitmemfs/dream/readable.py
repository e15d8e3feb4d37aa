"""What a confined dream agent may read: an allow-list, never the home folder.

Landlock rules allow whole hierarchies; no rule can carve a hole into one. So the
agent's own memory is granted piece by piece (its checkout and run folder, the
memory's objects, config and hooks), never a folder holding other memories, and a
broad grant (a recipe's `~/.letta`, a person's `dream.sandbox.allowRead ~/.config`)
that holds something protected is split into its entries around it (`carve`).

Protected, never reached through a broader grant: the memory's git dir and the
folder holding its agent (its siblings: other agents, other repositories of an `mcp
--root`), Letta's agents trees, and the usual credential stores (`~/.ssh`, `~/.gnupg`,
`~/.aws`, `~/.config/gh`, …). A path named exactly (or inside one named) is granted:
a person who names it means it.

A recipe declares what its CLI needs in comment lines of its own file, read when the
agent command names the file (`sh …/claude-code.sh`):

    # dream.sandbox.allowRead: ${CLAUDE_CONFIG_DIR:-~/.claude} ~/.claude.json
    # dream.sandbox.programs: claude

A program is found on the agent's PATH and granted with what it runs from (its real
file, its interpreter, its node package or virtual environment).
"""
from __future__ import annotations

import glob
import os
import re
import shlex
import shutil
import sys
import sysconfig
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence

from gitmemfs.dream import environment

# Where programs, libraries, certificates and locales live; /proc is the agent's own
# (its PID namespace), and Landlock keeps it from other processes' /proc/<pid> files.
SYSTEM = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/proc", "/sys",
          "/nix/store", "/gnu/store", "/snap")
# Files in /etc that are often links to somewhere else (systemd's resolver, …).
ETC_LINKS = ("/etc/resolv.conf", "/etc/hosts", "/etc/localtime", "/etc/ssl/certs/ca-certificates.crt")
# Relative to HOME: credential stores nothing may reach through a broader grant.
CREDENTIALS = (".ssh", ".gnupg", ".aws", ".azure", ".docker", ".kube", ".netrc", ".git-credentials", ".pypirc",
               ".password-store", ".config/gh", ".config/gcloud", ".config/git/credentials",
               ".local/share/keyrings", ".letta/agents", ".letta/lc-local-backend/memfs")
# git's own configuration in HOME: files only (~/.config/git also holds `credentials`).
GIT_FILES = (".gitconfig", ".config/git/config", ".config/git/attributes", ".config/git/ignore")
# Environment variables that name a file or folder the agent's programs read.
PATH_VARS = ("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "GIT_CONFIG_GLOBAL",
             "GIT_CONFIG_SYSTEM", "GIT_EXEC_PATH")
HEADER = re.compile(r"^#\s*dream\.sandbox\.(allowRead|programs):(.*)$", re.M)
_DEFAULTED = re.compile(r"\$\{(\w+):-([^${}]*)\}")


@dataclass
class Grants:
    dirs: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)


def beneath(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def carve(path: str, protected: Sequence[str]) -> list[str]:
    """`path` itself, or, when it holds a protected path below it, its entries but
    the protected ones (recursively); never a symlink met on the way (it could lead
    into one). A protected path named itself is granted: a person who names it means it."""
    if not any(beneath(p, path) and p != path for p in protected):
        return [path]
    out: list[str] = []
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return []
    for name in names:
        child = os.path.join(path, name)
        if not os.path.islink(child) and not any(child == p for p in protected):
            out += carve(child, protected)
    return out


def expand(value: str, env: Mapping[str, str]) -> str:
    """`~`, `$NAME` and `${NAME:-default}` against the agent's environment."""
    while True:
        done = _DEFAULTED.sub(lambda m: env.get(m.group(1)) or m.group(2), value)
        if done == value:
            break
        value = done
    value = re.sub(r"\$(\w+)|\$\{(\w+)\}", lambda m: env.get(m.group(1) or m.group(2), ""), value)
    home = env.get("HOME", "")
    if home and (value == "~" or value.startswith("~/")):
        value = home + value[1:]
    return value


def recipe_header(path: str) -> tuple[list[str], list[str]]:
    """(read paths, programs) a recipe file declares in its comment lines."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(8192).decode("utf-8", "replace")
    except OSError:
        return [], []
    reads: list[str] = []
    programs: list[str] = []
    for key, value in HEADER.findall(head):
        (reads if key == "allowRead" else programs).extend(value.split())
    return reads, programs


def program_paths(name: str, search: str, depth: int = 0) -> list[str]:
    """What running `name` (found on `search`, a PATH) reads: its file, the node
    package or virtual environment it belongs to, its interpreter's."""
    found = name if "/" in name else shutil.which(name, path=search)
    if not found or depth > 3:
        return []
    real = os.path.realpath(found)
    out = [real]
    for path in (os.path.abspath(found), real):  # a venv's python is a link out of it
        folder, prefix = os.path.dirname(path), os.path.dirname(os.path.dirname(path))
        if os.path.basename(folder) in ("bin", "sbin") and os.path.isfile(os.path.join(prefix, "pyvenv.cfg")):
            out.append(prefix)  # a virtual environment: its pyvenv.cfg and lib/
    folder = package = os.path.dirname(real)
    while package != os.path.dirname(package) and "node_modules" in package.split(os.sep)[:-1]:
        if os.path.isfile(os.path.join(package, "package.json")):
            out.append(package)  # the npm package it is part of, bundled dependencies included
            break
        package = os.path.dirname(package)
    try:
        with open(real, "rb") as fh:
            first = fh.readline(256)
    except OSError:
        return out
    if first.startswith(b"#!"):
        words = first[2:].decode("utf-8", "replace").split()
        if words and os.path.basename(words[0]) == "env":
            words = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        if words:
            out += program_paths(words[0], search, depth + 1)
        if words and os.path.basename(words[0]).startswith("python") and os.path.basename(folder) == "bin":
            # pip install --user (or --prefix): the package sits in <prefix>/lib/pythonX.Y/site-packages
            out += glob.glob(os.path.join(glob.escape(os.path.dirname(folder)), "lib", "python3*", "site-packages"))
    return out


def toolkit() -> list[str]:
    """This package, its interpreter and its console scripts: the agent runs `git memory`."""
    paths = [environment.PACKAGE_PARENT, sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix,
             *program_paths(sys.executable, ""), environment.scripts_dir() or ""]
    return paths + [sysconfig.get_path(key) or "" for key in ("stdlib", "platstdlib", "purelib", "platlib")]


def named_files(command: str, env: Mapping[str, str]) -> tuple[list[str], str]:
    """The script the agent command runs (`sh …/recipe.sh`, `python3 …/agent.py URL`:
    the first argument naming a file; later ones are its data and stay unread) and
    its program."""
    try:
        words = shlex.split(command)
    except ValueError:
        return [], ""
    first = words[0] if words and "=" not in words[0] else ""
    for word in words[1:]:  # the first word is the program (program_paths)
        path = expand(word, env)
        if os.path.isabs(path) and os.path.isfile(path):
            return [os.path.realpath(path)], first
    return [], first


@dataclass
class Request:
    """Everything the allow-list is built from."""
    command: str
    env: Mapping[str, str]
    own: Sequence[str]           # the run's folders and files: checkout, run folder, the memory's config, …
    memory_root: str
    common_dir: str
    configured: Sequence[str]    # dream.sandbox.allowRead
    extra: Sequence[str] = ()    # granted for writing: readable as well


def protected_paths(memory_root: str, common_dir: str, env: Mapping[str, str]) -> list[str]:
    root = os.path.realpath(memory_root)
    agent = os.path.dirname(root) if os.path.basename(root) == "memory" else root
    home = env.get("HOME", "")
    out = [os.path.realpath(common_dir), os.path.dirname(agent)]
    if home:
        out += [os.path.realpath(os.path.join(home, rel)) for rel in CREDENTIALS]
    local = env.get("LETTA_LOCAL_BACKEND_DIR", "")
    if local:
        out.append(os.path.realpath(os.path.join(local, "memfs")))
    return out


def plan(req: Request, say: Callable[[str], None]) -> Grants:
    """The folders and files the agent may read."""
    env = req.env
    grants = Grants()
    protected = protected_paths(req.memory_root, req.common_dir, env)
    search = env.get("PATH", os.defpath)
    files, first = named_files(req.command, env)
    asked: list[tuple[str, str]] = [(p, "dream.sandbox.allowRead") for p in req.configured]
    programs = [first] if first else []
    for script in files:
        reads, names = recipe_header(script)
        asked += [(p, os.path.basename(script)) for p in reads]
        programs += names
    wanted: list[str] = [*SYSTEM, *(os.path.realpath(p) for p in ETC_LINKS if os.path.exists(p)), *files,
                         *req.own, *toolkit()]
    home = env.get("HOME", "")
    if home:
        wanted += [os.path.join(home, rel) for rel in GIT_FILES]
    wanted += [env[v] for v in PATH_VARS if env.get(v)]
    if env.get("GIT_MEMFS_PYTHON"):
        programs.append(env["GIT_MEMFS_PYTHON"])  # the interpreter our launchers run on
    for name in programs:
        wanted += program_paths(expand(name, env), search)
    named: list[str] = []
    for raw, why in asked:
        path = expand(raw.strip(), env)
        if not os.path.isabs(path):
            say(f"{why}: {raw} is not an absolute path; not readable")
        elif not os.path.exists(path):
            say(f"{why}: {path} does not exist; not readable")
        else:
            named.append(path)
    named = [os.path.realpath(p) for p in [*named, *req.extra] if p and os.path.isabs(p)]
    for path in dict.fromkeys([*(os.path.realpath(p) for p in wanted if p and os.path.isabs(p)), *named]):
        if not os.path.exists(path) or (path in protected and path not in named):
            continue  # a protected folder is granted only when named (/opt holding the agents, say)
        parts = carve(path, protected)
        if parts != [path]:
            say(f"{path} holds other memories or credentials: readable are {len(parts)} of its entries, "
                "not it")
        for part in parts:
            (grants.dirs if os.path.isdir(part) else grants.files).append(part)
    # A grant beneath another says nothing more (and makes the log longer).
    grants.dirs = [d for d in grants.dirs if not any(beneath(d, o) and d != o for o in grants.dirs)]
    grants.files = [f for f in grants.files if not any(beneath(f, o) for o in grants.dirs)]
    return grants


def alternates(objects: str) -> Iterable[str]:
    """Object folders the memory borrows from (objects/info/alternates)."""
    try:
        with open(os.path.join(objects, "info", "alternates"), encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return []
    return [os.path.normpath(os.path.join(objects, ln)) for ln in lines if ln and not ln.startswith("#")]
