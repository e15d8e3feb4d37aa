"""Property-based attacks on the gates (hypothesis), issue 12.

Pure properties (fast, many examples): random names against a port of git's fsck
name checks, random paths against the jail on a tree with symlinks into `.git` and
out of the repository, random changes of a protected file against the validator.
End-to-end properties (slow, few examples): random paths through `git memory call`
(both schemas), `git memory create` and `git memory-patch`; random histories of
tree operations against a protected file through the hook, `check RANGE` and the
server gate.

`make test` runs a bounded number of examples; `make fuzz` sets GIT_MEMFS_FUZZ to
the examples per pure property (GIT_MEMFS_FUZZ_E2E for the end-to-end ones) and
prints how many ran and how many escaped (any escape also fails its test, with the
shrunk example).
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Iterator

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from conftest import git, memfile, memory, run, write
from fuzzkit import Tally, examples, profiles
from gitmemfs.core import entries, paths, rules

PURE, E2E = examples(e2e=4)
pure, slow = profiles(PURE, E2E)
TALLY = Tally("gate")
summary = TALLY.summary()
tried, escaped = TALLY.tried, TALLY.escaped


# -- an independent port of git's fsck name checks (utf8.c, path.c) ----------------------------

_IGNORABLE = {0x200C, 0x200D, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E,
              0x206A, 0x206B, 0x206C, 0x206D, 0x206E, 0x206F, 0xFEFF}


def git_hfs(name: str, needle: str) -> bool:
    """is_hfs_dot_generic: `.needle` once HFS+ drops its ignorable code points."""
    chars = [c for c in name if ord(c) not in _IGNORABLE]
    want = "." + needle
    if len(chars) != len(want):
        return False
    return all((c.lower() if ord(c) < 128 else c) == w for c, w in zip(chars, want))


def _tail_ok(rest: str) -> bool:
    for c in rest:
        if c in ":\\/":
            return True
        if c not in ". ":
            return False
    return True


def git_ntfs_dotgit(name: str) -> bool:
    low = name.lower() if name.isascii() else "".join(c.lower() if ord(c) < 128 else c for c in name)
    for head in (".git", "git~1"):
        if low.startswith(head) and _tail_ok(name[len(head):]):
            return True
    return False


def git_ntfs_generic(name: str, needle: str, fallback: str) -> bool:
    def tail(i: int) -> bool:
        for c in name[i:]:
            if c == ":":
                return True
            if c not in ". ":
                return False
        return True

    low = "".join(c.lower() if ord(c) < 128 else c for c in name)
    if low.startswith("." + needle):
        return tail(len(needle) + 1)
    if low[:6] == needle[:6] and len(name) > 7 and name[6] == "~" and "1" <= name[7] <= "4":
        return tail(8)
    saw_tilde = False
    i = 0
    while i < 8:
        if i >= len(name):
            return False
        c = name[i]
        if saw_tilde:
            if not "0" <= c <= "9":
                return False
        elif c == "~":
            i += 1
            if i >= len(name) or not "1" <= name[i] <= "9":
                return False
            saw_tilde = True
        elif i >= 6 or ord(c) >= 128 or c.lower() != fallback[i]:
            return False
        i += 1
    return tail(8)


CONTROL_NEEDLES = (("gitmodules", "gi7eba"), ("gitattributes", "gi7d29"), ("mailmap", "maba30"))


def git_flags(component: str, nested: bool) -> bool:
    """Whether a name must be refused: git takes it for .git, or for a control file
    (.gitignore counts below the top folder only)."""
    if git_hfs(component, "git") or git_ntfs_dotgit(component):
        return True
    needles = CONTROL_NEEDLES + ((("gitignore", "gi250a"),) if nested else ())
    return any(git_hfs(component, n) or git_ntfs_generic(component, n, f) for n, f in needles)


PIECES = [".", "..", "git", "GIT", "Git", "gi", "t", "~", "1", "2", "4", "5", "9", "0", " ", ":", "\\",
          "\u200c", "\u200d", "\u202e", "\ufeff", "\u206a", "\u00e9", "modules", "attributes", "ignore",
          "mailmap", "gitmod", "gi7eba", "gi7d29", "gi250a", "maba30", "ma", "a", "x", "$INDEX_ALLOCATION",
          ".md", "\u0130", "\u212a"]
component = st.one_of(st.lists(st.sampled_from(PIECES), min_size=1, max_size=6).map("".join),
                      st.text(min_size=1, max_size=12).filter(lambda t: "/" not in t and "\0" not in t))


@pure
@given(component)
def test_fuzz_every_name_git_flags_is_refused(name: str) -> None:
    tried("names")
    body = memfile("Fuzz").encode()
    for path, nested in ((name, False), (f"notes/{name}", True), (f"{name}/x.md", False)):
        if not git_flags(name, nested):
            continue
        found = rules.check_change(path, None, body, scope="all", new_mode="100644")
        escaped("names", bool(found), (path, found))


# -- the jail, on a tree with symlinks into .git and out of the repository ---------------------

@pytest.fixture(scope="module")
def jail_root() -> Iterator[str]:
    top = tempfile.mkdtemp(prefix="fuzz-jail-")
    root = os.path.join(top, "mem")
    os.makedirs(os.path.join(root, ".git", "refs", "heads"))
    os.makedirs(os.path.join(root, "system"))
    os.makedirs(os.path.join(root, "notes"))
    os.symlink(".git", os.path.join(root, "link_git"))
    os.symlink("..", os.path.join(root, "link_out"))
    os.symlink("nowhere", os.path.join(root, "dangling"))
    os.symlink("../notes", os.path.join(root, "system", "link_in"))
    yield root
    shutil.rmtree(top)


SEGS = [".", "..", ".git", ".GIT", ".git\u200c", "git~1", "link_git", "link_out", "dangling", "system", "notes",
        "link_in", "a.md", "x", "", "~", "%2e%2e", "a" * 300, "\u00e9", "refs", "heads", ".git.", "memory"]
PREFIXES = ["", "/", "memory/", "~/", "./", "\\", "//"]


@pure
@given(st.sampled_from(PREFIXES + ["ROOT/"]), st.lists(st.sampled_from(SEGS), min_size=1, max_size=6),
       st.sampled_from(["/", "\\"]))
def test_fuzz_the_jail_never_lets_a_path_out(jail_root: str, prefix: str, segs: list[str], sep: str) -> None:
    tried("jail")
    raw = (jail_root + "/" if prefix == "ROOT/" else prefix) + sep.join(segs)
    try:
        label = paths.normalize_label(raw, "file_path", jail_root)
        rel = paths.file_of(label)
        target = paths.check_jail(jail_root, rel)
    except paths.PathError:
        return
    if rules.check_change(rel, None, memfile("Fuzz").encode(), scope="all"):
        return  # the validator refuses it before anything is written
    real_root = os.path.realpath(jail_root)
    real = os.path.realpath(os.path.dirname(target))
    inside = real == real_root or real.startswith(real_root + os.sep)
    in_git = real.startswith(os.path.join(real_root, ".git"))
    escaped("jail", inside and not in_git and paths.symlink_on_the_way(jail_root, rel) is None,
            (raw, rel, real))


# -- any change of a protected file ------------------------------------------------------------

TRUE = ["true", "True", "TRUE", "'true'", '"true"', "yes", "on", "1", "[x]", "{a: 1}", "maybe"]
FALSE = ["false", "False", "'false'", "no", "off", "0", "''", "~", "null", ""]
KEYS = ["read_only", "'read_only'", '"read_only"', " read_only", "read_only "]
LINES = st.one_of(
    st.builds(lambda k, v: f"{k}: {v}", st.sampled_from(KEYS), st.sampled_from(TRUE + FALSE)),
    st.sampled_from(["description: Fuzz", "description: 'other'", "limit: 5", "# comment", "tags: [a]",
                     "description: |\n  two\n  lines", "read_only:", "description:"]),
)


@st.composite
def protected_file(draw: st.DrawFn) -> bytes:
    lines = draw(st.lists(LINES, max_size=4))
    lines.insert(draw(st.integers(0, len(lines))), "read_only: true")
    if not any(ln.startswith("description:") for ln in lines):
        lines.insert(0, "description: Fuzz")
    body = draw(st.text(max_size=40))
    return ("---\n" + "\n".join(lines) + "\n---\n" + body).encode("utf-8", "surrogatepass")


@st.composite
def change_of(draw: st.DrawFn, old: bytes) -> tuple[bytes | None, str]:
    kind = draw(st.sampled_from(["delete", "mode", "body", "frontmatter", "bytes", "same"]))
    mode = draw(st.sampled_from(["100644", "100755", "120000", "160000"]))
    if kind == "delete":
        return None, "100644"
    if kind == "mode" or kind == "same":
        return old, mode
    if kind == "body":
        return old + draw(st.text(min_size=1, max_size=20)).encode("utf-8", "surrogatepass"), mode
    if kind == "frontmatter":
        lines = draw(st.lists(LINES, min_size=1, max_size=5))
        return ("---\n" + "\n".join(lines) + "\n---\n").encode(), mode
    return draw(st.binary(max_size=60)), mode


@pure
@given(st.sampled_from(["system/ro.md", "reference/x/ro.md", "notes/ro.md", "ro.md"]),
       protected_file().flatmap(lambda old: st.tuples(st.just(old), change_of(old))))
def test_fuzz_no_change_of_a_protected_file_is_accepted(path: str, case: tuple) -> None:
    tried("protected")
    old, (new, mode) = case
    assert rules.is_protected(old), old
    if new == old and mode == "100644":
        return
    found = rules.check_change(path, old, new, scope="letta", old_mode="100644",
                               new_mode=None if new is None else mode)
    escaped("protected", bool(found), (old, new, mode))
    kept = rules.check_kept(path, old, deleted=new is None, changed=True)
    escaped("protected", bool(kept), (old, new, mode, "guard"))


# -- end to end: random paths through every write entry point ----------------------------------

def _outside_state(repo: Path) -> tuple[list[str], list[str]]:
    git_dir = sorted(str(p.relative_to(repo)) for p in (repo / ".git").rglob("*")
                     if not {"objects", "logs"} & set(p.parts) and p.name not in ("index", "ORIG_HEAD"))
    around = sorted(str(p.relative_to(repo.parent)) for p in repo.parent.rglob("*")
                    if repo not in p.parents and p != repo)
    return git_dir, around


E2E_SEGS = [".git", ".GIT", ".git\u200c", "git~1", "link_git", "..", "system", "notes", ".gitattributes",
            "x.md", "\u00e9", "a" * 250, "gitmod~1", "%2e%2e", ".", "link_out", "x. "]


@slow
@given(st.lists(st.sampled_from(E2E_SEGS), min_size=1, max_size=4).map("/".join),
       st.sampled_from(["letta", "anthropic", "cli", "patch"]))
def test_fuzz_paths_through_every_write_entry_point(tmp_path_factory: pytest.TempPathFactory,
                                                     rel: str, entry: str) -> None:
    tried("e2e-paths")
    top = tmp_path_factory.mktemp("e2e")
    repo = top / "mem"
    assert memory("init", str(repo), cwd=top).returncode == 0
    os.symlink(".git", repo / "link_git")
    os.symlink("..", repo / "link_out")
    git("add", "link_git", "link_out", cwd=repo)
    git("commit", "-q", "--no-verify", "-m", "planted links", cwd=repo)
    (top / "outside").mkdir()
    before = _outside_state(repo)
    if entry == "letta":
        obj = {"command": "create", "reason": "r", "file_path": rel, "description": "d", "file_text": "x"}
        proc = memory("call", json.dumps(obj), cwd=repo)
    elif entry == "anthropic":
        obj = {"command": "create", "path": "/memories/" + rel, "file_text": "x"}
        proc = memory("call", json.dumps(obj), "--schema", "anthropic", cwd=repo)
    elif entry == "cli":
        proc = memory("create", rel, "x", "-d", "d", "-m", "r", cwd=repo)
    else:
        patch = f"*** Begin Patch\n*** Add File: {rel}\n+---\n+description: d\n+---\n+x\n*** End Patch\n"
        proc = run("memory-patch", "-m", "r", cwd=repo, input=patch)
    assert "internal error" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    after = _outside_state(repo)
    names = git("ls-tree", "-r", "-z", "--name-only", "HEAD", cwd=repo).stdout.split("\0")
    bad = [n for n in names if n and entries.name_problem(n)]
    fsck = git("fsck", "--no-progress", cwd=repo, check=False)
    escaped("e2e-paths", after == before and not bad and fsck.returncode == 0,
            (rel, entry, proc.stdout, proc.stderr, bad, fsck.stderr))


# -- end to end: random histories against a protected file -------------------------------------

OPS = ["body", "chmod", "gitlink", "symlink", "delete", "mv", "dup-false", "read_only-false", "replace-tree"]


def _apply(repo: Path, op: str) -> None:
    path = "system/ro.md"
    present = git("ls-files", "--", path, cwd=repo).stdout.strip()
    if not present:
        git("checkout", "HEAD~0", "--", path, cwd=repo, check=False)
    if op == "body":
        target = repo / path
        if target.is_symlink() or not target.is_file():  # an earlier op left a link, a gitlink folder or nothing
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            elif target.is_symlink():
                target.unlink()
            target.write_text(memfile("Protected", "x\n", "read_only: true"))
        with open(target, "a") as fh:
            fh.write("more\n")
        git("add", path, cwd=repo)
    elif op == "chmod":
        git("update-index", "--chmod=+x", path, cwd=repo, check=False)
    elif op == "gitlink":
        sha = git("rev-parse", "HEAD", cwd=repo).stdout.strip()
        git("update-index", "--add", "--cacheinfo", f"160000,{sha},{path}", cwd=repo)
    elif op == "symlink":
        oid = git("hash-object", "-w", "--stdin", cwd=repo, input="../notes/x.md").stdout.strip()
        git("update-index", "--add", "--cacheinfo", f"120000,{oid},{path}", cwd=repo)
    elif op == "delete":
        git("rm", "-q", "--cached", "--ignore-unmatch", path, cwd=repo)
    elif op == "mv":
        git("rm", "-q", "--cached", "--ignore-unmatch", path, cwd=repo)
        # Keep the entry's mode: after a bypassed gitlink the oid names a commit, not a blob.
        entry = git("ls-tree", "HEAD", "--", path, cwd=repo).stdout.split()
        if entry:
            mode, _kind, oid = entry[:3]
            git("update-index", "--add", "--cacheinfo", f"{mode},{oid},system/moved.md", cwd=repo)
    else:
        text = {"dup-false": memfile("Protected", "x\n", "read_only: true", "read_only: false"),
                "read_only-false": memfile("Protected", "x\n", "read_only: false"),
                "replace-tree": memfile("Protected", "x\n")}[op]
        oid = git("hash-object", "-w", "--stdin", cwd=repo, input=text).stdout.strip()
        git("update-index", "--add", "--cacheinfo", f"100644,{oid},{path}", cwd=repo)


@slow
@given(st.lists(st.sampled_from(OPS), min_size=1, max_size=3))
@example(["delete", "gitlink"])  # found by CI: the gitlink op must add a path a bypass deleted
@example(["gitlink", "delete"])  # found by CI: deleting a bypassed gitlink is judged by range and server
@example(["gitlink", "mv"])  # moving a bypassed gitlink keeps its mode
def test_fuzz_histories_against_a_protected_file(tmp_path_factory: pytest.TempPathFactory, ops: list[str]) -> None:
    tried("histories")
    top = tmp_path_factory.mktemp("hist")
    repo = top / "mem"
    assert memory("init", str(repo), cwd=top).returncode == 0
    write(repo, "system/ro.md", memfile("Protected", "x\n", "read_only: true"))
    git("add", "-A", cwd=repo)
    git("commit", "-q", "--no-verify", "-m", "protected", cwd=repo)
    server = top / "server.git"
    git("init", "-q", "--bare", str(server), cwd=top)
    git("push", "-q", str(server), "main", cwd=repo)
    assert memory("hooks", "install", cwd=server).returncode == 0
    base = git("rev-parse", "HEAD", cwd=repo).stdout.strip()
    hooked_ok = []
    for op in ops:
        _apply(repo, op)
        if git("diff", "--cached", "--quiet", cwd=repo, check=False).returncode == 0:
            continue
        proc = git("commit", "-q", "-m", op, cwd=repo, check=False)
        # The hook judges the index against HEAD. Only the first commit starts from the clean
        # base; later ones are judged against a --no-verify bypass (a gitlink committed that way
        # may then be deleted), so the range check and the server below judge the whole history.
        if not hooked_ok:
            hooked_ok.append(proc.returncode == 0)
        if proc.returncode != 0:
            git("commit", "-q", "--no-verify", "-m", op, cwd=repo)
        git("reset", "-q", "--hard", cwd=repo)
    if git("rev-parse", "HEAD", cwd=repo).stdout.strip() == base:
        return
    escaped("histories", not any(hooked_ok), (ops, "hook accepted a change"))
    check = memory("check", f"{base}..HEAD", cwd=repo)
    escaped("histories", check.returncode == 1, (ops, check.stdout))
    push = git("push", str(server), "main", cwd=repo, check=False)
    server_head = git("rev-parse", "main", cwd=server).stdout.strip()
    escaped("histories", push.returncode != 0 and server_head == base, (ops, push.stderr))
