"""The dream worktree: created from the parent, inspected without trusting it, removed.

The checkout belongs to a private repository of the run, `<common>/dream/runs/<id>/git`
(bare; its objects are the agent's quarantine, with the memory's objects as an
alternate; its config includes the memory's and points at its hooks). The memory
repository itself never sees the worktree, the branch or a new object until the
run is over and its objects were imported verified (quarantine.py): while an agent
works, `git fetch`, `gc`, `fsck` and `log --all` in the memory are unaffected, and
the agent can write none of the memory's git files.

After the agent ran, everything inside the worktree, its admin dir and the private
repository's refs and objects was writable by it, so nothing here runs git *in* the
worktree (a planted `config.worktree`, `.git` file or `.gitattributes` filter could
then run code outside the sandbox). Instead:

- refs and the worktree's HEAD are read as files, never through a symlink, and
  resolved in the memory repository once their objects are imported;
- "dirty" is decided by hashing the worktree's files in Python and comparing
  them with the tree of the commit the agent ended on; only the check-ignore
  query (which reads .gitignore patterns, nothing executable) sees the worktree;
- a snapshot of dirty files is built from blobs written with
  `hash-object --no-filters` into a temporary index, so no filter, hook or
  fsmonitor of any kind runs on agent-written content;
- `disarm_refs` removes what the agent could plant among the refs to send git
  elsewhere (symbolic refs, symlinks to files or folders: git follows a folder
  symlink even with `update-ref --no-deref`).
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import tempfile
from dataclasses import dataclass
from typing import BinaryIO, Callable, Mapping

from gitmemfs.core import git
from gitmemfs.core.errors import MemfsError
from gitmemfs.core.repo import Repo
from gitmemfs.dream.state import BRANCH_PREFIX, Dirs

_SAFE_GIT = ("-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false")
# The checkout and the agent's git see bytes as committed: the dream decides "dirty"
# by hashing files without filters, so no end-of-line conversion may happen.
NO_EOL = {"core.autocrlf": "false", "core.eol": "lf"}
_OID = re.compile(rb"[0-9a-f]{40}(?:[0-9a-f]{24})?\n?")
_HEX = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_SMALL = 1 << 16


@dataclass
class Worktree:
    id: str
    path: str          # the checkout
    admin: str         # git's files for it: <repo>/worktrees/<id>
    branch: str
    base: str
    repo: str = ""     # the git dir that owns it: the run's private repository

    @property
    def ref(self) -> str:
        return f"refs/heads/{self.branch}"

    @property
    def objects(self) -> str:
        return os.path.join(self.repo, "objects")


def private_repo(dirs: Dirs, dream_id: str) -> str:
    return os.path.join(dirs.run_dir(dream_id), "git")


def writable(wt: Worktree) -> list[str]:
    """What the confined agent must be able to write for git to work in its checkout:
    the checkout, its admin dir, the private objects, the dream branch folders (made
    here: under Landlock git could not create them)."""
    dirs = dream_ref_dirs(wt.repo)
    for folder in dirs:
        os.makedirs(folder, exist_ok=True)
    return [wt.path, wt.admin, wt.objects, *dirs]


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def hooks_dir(repo: Repo) -> str:
    """The memory's hooks folder as git resolves it (core.hooksPath, else <common>/hooks)."""
    configured = (repo.cfg("core.hooksPath") or "").strip()
    if configured:
        return os.path.join(repo.root, os.path.expanduser(configured))
    return os.path.join(os.path.abspath(repo.common_dir), "hooks")


def create(repo: Repo, dirs: Dirs, dream_id: str, base: str) -> Worktree:
    dirs.ensure()
    own = private_repo(dirs, dream_id)
    fmt = (repo.cfg("extensions.objectformat") or "").lower()
    res = repo.git("init", "-q", "--bare", "--template=", *([f"--object-format={fmt}"] if fmt else []), own,
                   check=False)
    if res.code != 0:
        raise MemfsError(f"git dream: cannot create the run's repository {own}: "
                         f"{git.GitError(res.argv, res.code, res.raw, res.err_raw)}")
    common = os.path.abspath(repo.common_dir)
    with open(os.path.join(own, "config"), "a", encoding="utf-8") as fh:
        fh.write(f"[include]\n\tpath = {_quoted(os.path.join(common, 'config'))}\n"
                 f"[core]\n\tbare = true\n\thooksPath = {_quoted(hooks_dir(repo))}\n"
                 "\tautocrlf = false\n\teol = lf\n\tfsmonitor = false\n"
                 "[gc]\n\tauto = 0\n[maintenance]\n\tauto = false\n")
    with open(os.path.join(own, "objects", "info", "alternates"), "w", encoding="utf-8") as fh:
        fh.write(os.path.join(common, "objects") + "\n")
    path = dirs.worktree(dream_id)
    branch = BRANCH_PREFIX + dream_id
    res = git.run([f"--git-dir={own}", "worktree", "add", "-q", "-b", branch, "--", path, base],
                  cwd=repo.root, check=False, config=NO_EOL)
    admin = os.path.join(os.path.realpath(own), "worktrees", dream_id)
    wt = Worktree(dream_id, path, admin, branch, base, own)
    if res.code != 0:
        remove(repo, wt)
        raise MemfsError(f"git dream: cannot create the worktree {path}: "
                         f"{git.GitError(res.argv, res.code, res.raw, res.err_raw)}")
    if admin_of(path) != admin:
        remove(repo, wt)
        raise MemfsError(f"git dream: git made an unexpected worktree layout at {path}; nothing was started")
    return wt


def read_small(path: str, *, tail: bool = False) -> str | None:
    """A regular file's text, at most 64 KiB (the last 64 KiB with `tail`), never through
    a symlink: whatever the agent left there (a FIFO, /dev/zero, a huge file) cannot make
    us hang or read something else. None when it is not a readable regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        if tail and st.st_size > _SMALL:
            os.lseek(fd, st.st_size - _SMALL, os.SEEK_SET)
        return os.read(fd, _SMALL).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def admin_of(path: str) -> str | None:
    text = read_small(os.path.join(path, ".git"))
    if text is None:
        return None
    line = text.strip()
    if not line.startswith("gitdir: "):
        return None
    return os.path.realpath(os.path.join(path, line[len("gitdir: "):]))


def tampering(wt: Worktree) -> list[str]:
    """Admin files the agent changed that git would trust later (empty when intact)."""
    found = []

    def read(path: str) -> str | None:
        text = read_small(path)
        return None if text is None else text.strip()

    commondir = read(os.path.join(wt.admin, "commondir"))
    if commondir is None or os.path.realpath(os.path.join(wt.admin, commondir)) != os.path.realpath(wt.repo):
        found.append("commondir no longer points at the repository")
    gitdir = read(os.path.join(wt.admin, "gitdir"))
    if gitdir is None or os.path.realpath(gitdir) != os.path.realpath(os.path.join(wt.path, ".git")):
        found.append("gitdir no longer points at the worktree")
    if admin_of(wt.path) != os.path.realpath(wt.admin):
        found.append("the worktree's .git file points elsewhere")
    if os.path.lexists(os.path.join(wt.admin, "config.worktree")):
        found.append("a config.worktree was planted")
    return found


def refs(repo: Repo, prefix: str) -> dict[str, str]:
    """{name under prefix: sha} for the plain refs of the memory repository under
    `prefix` (e.g. refs/dreams/kept/); symbolic refs are left out."""
    res = repo.git("for-each-ref", "--format=%(refname)%00%(objectname)%00%(symref)", prefix, check=False)
    out = {}
    for line in res.lines():
        ref, _, rest = line.partition("\0")
        sha, _, symref = rest.partition("\0")
        if not symref:
            out[ref[len(prefix):]] = sha
    return out


def dream_ref_dirs(git_dir: str) -> list[str]:
    return [os.path.join(git_dir, "refs", "heads", "dream"),
            os.path.join(git_dir, "logs", "refs", "heads", "dream")]


def disarm_refs(git_dir: str) -> tuple[list[str], dict[str, str]]:
    """In `git_dir`'s `refs/heads/dream/` (and its reflogs), remove what could make git
    act elsewhere: symlinks, symbolic refs, anything but a folder or a plain ref file;
    stale `.lock` files go too. Returns (a description of each planted thing, the
    plain loose refs left: {name under dream/: sha})."""
    found: list[str] = []
    tips: dict[str, str] = {}

    def walk(folder: str, rel: str, is_refs: bool) -> None:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return
        for entry in entries:
            name = f"{rel}/{entry.name}"
            try:
                st = os.lstat(entry.path)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                walk(entry.path, name, is_refs)
                continue
            why = None
            if stat.S_ISLNK(st.st_mode):
                why = f"{name} is a symbolic link"
            elif not stat.S_ISREG(st.st_mode):
                why = f"{name} is not a regular file"
            elif entry.name.endswith(".lock"):
                why = ""  # left by a git command the timeout stopped
            elif is_refs:
                head = (read_small(entry.path) or "").encode()
                if head.startswith(b"ref:"):
                    why = f"{name} is a symbolic ref to {head[4:].decode(errors='replace').strip()}"
                elif not _OID.fullmatch(head):
                    why = f"{name} is not a valid ref"
                else:
                    tips[name[len("refs/heads/dream/"):]] = head.decode().strip()
            if why is None:
                continue
            try:
                os.unlink(entry.path)  # never follows: a symlink goes, not what it names
            except OSError:
                pass
            if why:
                found.append(why)

    for top, label, is_refs in zip(dream_ref_dirs(git_dir), ("refs/heads/dream", "logs/refs/heads/dream"),
                                   (True, False)):
        walk(top, label, is_refs)
    return found, tips


def delete_ref(repo: Repo, ref: str, old: str | None = None) -> None:
    """Delete `ref` itself, never what it may point at."""
    repo.git("update-ref", "--no-deref", "-d", ref, *([old] if old else []), check=False)


_CONVERTING = ("eol", "ident", "filter", "working-tree-encoding")


def _attribute_files(repo: Repo, paths: list[str]) -> bool:
    """Whether any attributes could apply: a .gitattributes in the tree, the repository's
    info/attributes, the user's or the system's attributes file."""
    if any(p == ".gitattributes" or p.endswith("/.gitattributes") for p in paths):
        return True
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    candidates = [os.path.join(repo.common_dir, "info", "attributes"), os.path.join(xdg, "git", "attributes"),
                  os.path.expanduser((repo.cfg("core.attributesFile") or "").strip() or "~/.nonexistent")]
    if not os.environ.get("GIT_ATTR_NOSYSTEM"):
        candidates += ["/etc/gitattributes", "/usr/local/etc/gitattributes"]
    return any(os.path.isfile(c) for c in candidates)


def conversions(repo: Repo, paths: list[str]) -> list[str]:
    """Tracked paths git would convert on checkout even with core.autocrlf=false and
    core.eol=lf: `eol=crlf`, `ident`, a configured `filter`, `working-tree-encoding`."""
    if not paths or not _attribute_files(repo, paths):
        return []
    feed = b"".join(os.fsencode(p) + b"\0" for p in paths)
    res = git.run(["check-attr", "-z", "--stdin", "--cached", *_CONVERTING], cwd=repo.root, input=feed,
                  check=False)
    if res.code != 0:
        return []
    fields = res.out.split("\0")
    found = []
    for i in range(0, len(fields) - 2, 3):
        path, attr, value = fields[i:i + 3]
        if value in ("unspecified", "unset") or (attr == "eol" and value == "lf"):
            continue
        if attr == "filter" and not any(repo.cfg(f"filter.{value}.{k}") for k in ("smudge", "process")):
            continue
        if path not in found:
            found.append(path)
    return found


# -- where the agent ended --------------------------------------------------------------

def rev(repo: Repo, spec: str) -> str | None:
    res = repo.git("rev-parse", "-q", "--verify", "--end-of-options", f"{spec}^{{commit}}", check=False)
    return res.out.strip() if res.code == 0 and res.out.strip() else None


def head_text(wt: Worktree) -> str:
    return (read_small(os.path.join(wt.admin, "HEAD")) or "").strip()


def head_names(wt: Worktree, tips: Mapping[str, str]) -> str | None:
    """The commit the worktree's HEAD file names (a dream branch of its repository, or a
    detached sha), as written: the caller resolves it once the objects are in."""
    text = head_text(wt)
    if text.startswith("ref: refs/heads/" + BRANCH_PREFIX):
        return tips.get(text[len("ref: refs/heads/" + BRANCH_PREFIX):].strip())
    return text if _HEX.fullmatch(text) else None


def last_reflog_sha(wt: Worktree) -> str | None:
    """The newest value of the worktree's HEAD per its reflog (as written, unresolved)."""
    text = read_small(os.path.join(wt.admin, "logs", "HEAD"), tail=True) or ""
    for line in reversed(text.splitlines()):
        parts = line.split(" ", 2)
        if len(parts) >= 2 and _HEX.fullmatch(parts[1]) and parts[1].strip("0"):
            return parts[1]
    return None


# -- dirty files, hashed without git in the worktree -------------------------------------------

class _Entry:
    __slots__ = ("mode", "oid", "abspath", "link")

    def __init__(self, mode: str, oid: str | None, abspath: str | None = None, link: bytes | None = None):
        self.mode = mode
        self.oid = oid
        self.abspath = abspath
        self.link = link


def _object_id(kind: str, data: bytes, algo: str) -> str:
    h = hashlib.new(algo)
    h.update(f"{kind} {len(data)}\0".encode())
    h.update(data)
    return h.hexdigest()


def _open(path: str) -> BinaryIO:
    try:
        return open(path, "rb")
    except PermissionError:  # the agent chmod'ed it; it is still ours to read
        os.chmod(path, stat.S_IMODE(os.lstat(path).st_mode) | stat.S_IRUSR)
        return open(path, "rb")


def _read(path: str) -> bytes:
    with _open(path) as fh:
        return fh.read()


def _file_id(path: str, algo: str) -> str:
    """A file's blob id, streamed (an agent may leave a huge file behind)."""
    with _open(path) as fh:
        size = os.fstat(fh.fileno()).st_size
        h = hashlib.new(algo)
        h.update(f"blob {size}\0".encode())
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _walk(root: str) -> dict[str, tuple[str, str]]:
    """rel path -> (kind, abspath) for regular files and symlinks; `.git` anywhere is skipped."""
    out: dict[str, tuple[str, str]] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        keep = []
        for name in dirnames:
            full = os.path.join(dirpath, name)
            if name.lower() == ".git":
                continue
            if os.path.islink(full):
                filenames.append(name)
            else:
                keep.append(name)
        dirnames[:] = keep
        for name in filenames:
            if name.lower() == ".git":
                continue
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", full)
            elif stat.S_ISREG(st.st_mode):
                out[rel] = ("exec" if st.st_mode & stat.S_IXUSR else "file", full)
    return out


def _tree(repo: Repo, commit: str) -> dict[str, tuple[str, str]]:
    res = repo.git("ls-tree", "-r", "-z", "--full-tree", commit)
    entries = {}
    for item in res.zsplit():
        meta, _, path = item.partition("\t")
        mode, _kind, oid = meta.split(" ")
        entries[path] = (mode, oid)
    return entries


def _ignored(repo: Repo, wt: Worktree, paths: list[str]) -> set[str]:
    if not paths:
        return set()
    feed = b"".join(os.fsencode(p) + b"\0" for p in paths)
    res = git.run([*_SAFE_GIT, f"--git-dir={repo.common_dir}", f"--work-tree={wt.path}",
                         "check-ignore", "-z", "--stdin", "--no-index"],
                  cwd=repo.root, input=feed, check=False, ok=(0, 1))
    return set(res.zsplit()) if res.code == 0 else set()


def dirty_state(repo: Repo, wt: Worktree, head: str) -> tuple[dict[str, _Entry], list[str]]:
    """(the worktree as tree entries, paths that differ from `head`)."""
    algo = "sha256" if (repo.cfg("extensions.objectformat") or "").lower() == "sha256" else "sha1"
    filemode = repo.cfg_bool("core.filemode", True)
    committed = _tree(repo, head)
    reclaim(wt.path)
    found = _walk(wt.path)
    extras = [p for p in found if p not in committed]
    for path in _ignored(repo, wt, extras):
        found.pop(path, None)
    entries: dict[str, _Entry] = {}
    changed: list[str] = []
    for rel, (kind, full) in found.items():
        old = committed.get(rel)
        if kind == "link":
            target = os.fsencode(os.readlink(full))
            entry = _Entry("120000", _object_id("blob", target, algo), link=target)
        else:
            mode = "100755" if kind == "exec" else "100644"
            if not filemode:
                mode = old[0] if old and old[0] in ("100644", "100755") else "100644"
            entry = _Entry(mode, _file_id(full, algo), abspath=full)
        entries[rel] = entry
        if old is None or old != (entry.mode, entry.oid):
            changed.append(rel)
    for rel, (mode, oid) in committed.items():
        if mode == "160000":  # a submodule: its folder is not ours to hash
            entries.setdefault(rel, _Entry(mode, oid))
        elif rel not in entries:
            changed.append(rel)
    return entries, sorted(changed)


def snapshot(repo: Repo, wt: Worktree, head: str, env: Callable[[], Mapping[str, str]],
             message: str) -> tuple[str | None, list[str]]:
    """(a commit on top of `head` holding the worktree exactly as the agent left it, the
    paths that differ), or (None, []) when nothing differs. `env` gives the identity."""
    entries, changed = dirty_state(repo, wt, head)
    if not changed:
        return None, []
    return commit_entries(repo, entries, changed, head, dict(env()), message), changed


def commit_entries(repo: Repo, entries: dict[str, _Entry], changed: list[str], head: str,
                   env: dict[str, str], message: str) -> str:
    changed_set = set(changed)
    _write_blobs(repo, [e for rel, e in entries.items() if rel in changed_set])
    fd, index = tempfile.mkstemp(prefix="dream-index-", dir=repo.git_dir)
    os.close(fd)
    os.unlink(index)  # git wants to create it
    try:
        index_env = {**env, "GIT_INDEX_FILE": index}
        feed = b"".join(f"{e.mode} {e.oid}\t".encode() + os.fsencode(rel) + b"\0"
                        for rel, e in sorted(entries.items()))
        git.run(["update-index", "-z", "--index-info"], cwd=repo.root, input=feed, env=index_env)
        tree = git.run(["write-tree"], cwd=repo.root, env=index_env).out.strip()
    finally:
        for leftover in (index, index + ".lock"):
            if os.path.exists(leftover):
                os.unlink(leftover)
    return git.run(["commit-tree", tree, "-p", head, "-F", "-"], cwd=repo.root, input=message,
                   env=env).out.strip()


def _write_blobs(repo: Repo, entries: list[_Entry]) -> None:
    by_path = [e for e in entries if e.abspath is not None and "\n" not in e.abspath]
    if by_path:
        feed = "".join(e.abspath + "\n" for e in by_path if e.abspath).encode("utf-8", "surrogateescape")
        git.run(["hash-object", "-w", "--no-filters", "--stdin-paths"], cwd=repo.root, input=feed)
    for e in entries:
        if e.link is not None:
            git.run(["hash-object", "-w", "--no-filters", "--stdin"], cwd=repo.root, input=e.link)
        elif e.abspath is not None and "\n" in e.abspath:
            git.run(["hash-object", "-w", "--no-filters", "--stdin"], cwd=repo.root, input=_read(e.abspath))


# -- removal -------------------------------------------------------------------------------

def reclaim(path: str) -> None:
    """Give ourselves back rwx on every folder under `path`: the agent may have run
    chmod (Landlock does not restrict it), and we must still read and remove it all."""
    if not os.path.isdir(path) or os.path.islink(path):
        return
    for dirpath, dirnames, _ in os.walk(path, onerror=None):
        for name in [".", *dirnames]:
            full = os.path.normpath(os.path.join(dirpath, name))
            try:
                st = os.lstat(full)
                if stat.S_ISDIR(st.st_mode) and st.st_mode & stat.S_IRWXU != stat.S_IRWXU:
                    os.chmod(full, stat.S_IMODE(st.st_mode) | stat.S_IRWXU)
            except OSError:
                pass


def _rmtree(path: str) -> None:
    if os.path.lexists(path):
        reclaim(path)
        shutil.rmtree(path)


def remove(repo: Repo, wt: Worktree, *, keep_repo: bool = False) -> None:
    """Remove the worktree, its admin dir and the run's private repository by hand (no
    git runs inside them). `keep_repo`: leave the repository (the agent's refs and
    objects) for a person to inspect. A run made before private repositories (its
    worktree in the memory's own git dir) gets git's bookkeeping pruned instead."""
    _rmtree(wt.path)
    _rmtree(wt.admin)
    if os.path.realpath(wt.repo) == os.path.realpath(repo.common_dir):
        repo.git("worktree", "prune", check=False)
        delete_ref(repo, wt.ref)
    elif not keep_repo:
        _rmtree(wt.repo)


def leftover(repo: Repo, dirs: Dirs, dream_id: str, base: str) -> Worktree:
    """The Worktree of an interrupted run. The admin dir is derived, not read from the
    (agent-writable) `.git` file: `create` checked git named it after the id."""
    own = private_repo(dirs, dream_id)
    if not os.path.isdir(own) and os.path.isdir(os.path.join(repo.common_dir, "worktrees", dream_id)):
        own = repo.common_dir  # made by a version before private repositories
    admin = os.path.join(os.path.realpath(own), "worktrees", dream_id)
    return Worktree(dream_id, dirs.worktree(dream_id), admin, BRANCH_PREFIX + dream_id, base, own)
