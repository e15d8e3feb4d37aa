"""Issue 12, the gate half: each hole an agent with a shell found, performed through
the real entry point (a hooked `git commit`, a push to a bare repository with our
server hook, `git memory check RANGE`, `git memory call`), and refused with one
clear line, the right exit code and nothing changed."""
from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from conftest import commit_all, git, head, memfile, memory, run, snapshot, write
from gitmemfs.core.errors import MemfsError
from gitmemfs.core.visible import visible

RO = "read_only: true"
MODIFIED = "system/rules.md: file is read_only and cannot be modified"
DELETED = "system/rules.md: file is read_only and cannot be deleted"


# -- shared helpers ---------------------------------------------------------------------------

@pytest.fixture
def server(mem: Path, tmp_path: Path) -> Path:
    """A bare repository with `mem`'s history and our server hook; `mem` pushes to it."""
    path = tmp_path / "server.git"
    git("init", "-q", "--bare", str(path), cwd=tmp_path)
    git("remote", "add", "origin", str(path), cwd=mem)
    git("push", "-q", "origin", "main", cwd=mem)
    proc = memory("hooks", "install", cwd=path)
    assert proc.returncode == 0, proc.stderr
    return path


def refs(repo: Path) -> str:
    return git("for-each-ref", cwd=repo).stdout


def push_refused(client: Path, server: Path, *args: str) -> str:
    """A push the server hook declines, leaving every server ref as it was."""
    before = refs(server)
    proc = git("push", "origin", *args, cwd=client, check=False)
    assert proc.returncode != 0, proc.stderr
    assert "hook declined" in proc.stderr, proc.stderr
    assert refs(server) == before
    return proc.stderr


def commit_refused(repo: Path, *lines: str, args: tuple[str, ...] = ()) -> str:
    """A hooked `git commit` refused by our pre-commit with these problem lines; the
    repository (HEAD, index, files) stays as it was."""
    before = snapshot(repo)
    proc = git("commit", "-q", "-m", "attack", *args, cwd=repo, check=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stderr.splitlines()[0] == "Frontmatter validation failed:", proc.stderr
    for line in lines:
        assert line in proc.stderr.splitlines(), proc.stderr
    assert snapshot(repo) == before
    return proc.stderr


def check_flags(repo: Path, spec: str, *lines: str) -> str:
    proc = memory("check", spec, cwd=repo)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    for line in lines:
        assert line in proc.stdout, proc.stdout
    return proc.stdout


# -- item 2: replacement objects --------------------------------------------------------------

def _replaced(mem: Path) -> tuple[str, str, str]:
    """Base B; X edits the read_only file (committed past the hooks); I is harmless.
    `git replace X I` makes every git with replace refs on see I where X is."""
    base = head(mem)
    write(mem, "system/rules.md", memfile("Ground rules", "Anything goes.\n", RO))
    bad = commit_all(mem, "x: slipped past the hook")
    git("reset", "-q", "--hard", base, cwd=mem)
    write(mem, "system/fine.md", memfile("Fine"))
    good = commit_all(mem, "i: harmless")
    git("reset", "-q", "--hard", bad, cwd=mem)
    git("replace", bad, good, cwd=mem)
    # Plain git is fooled: it shows I's tree for X.
    assert git("show", "--stat", "--format=", bad, cwd=mem).stdout.strip().startswith("system/fine.md")
    return base, bad, good


def test_check_range_judges_the_replaced_commit_itself(mem: Path) -> None:
    base, bad, _ = _replaced(mem)
    out = check_flags(mem, f"{base}..{bad}", MODIFIED)
    assert out.splitlines()[0].startswith(bad[:7])


def test_server_refuses_a_push_of_refs_replace(mem: Path, server: Path) -> None:
    _, bad, good = _replaced(mem)
    before = snapshot(mem)
    stderr = push_refused(mem, server, f"refs/replace/{bad}")
    assert (f"remote: refs/replace/{bad}: replacement refs are refused: git-memfs judges objects as "
            "stored (push the commits themselves, not refs/replace/*)") in stderr
    stderr = push_refused(mem, server, f"refs/replace/{bad}", f"{bad}:refs/heads/main")
    assert f"remote: {bad[:7]} {MODIFIED}" in stderr
    assert snapshot(mem) == before


def test_server_with_a_replace_ref_still_judges_what_is_pushed(mem: Path, server: Path) -> None:
    """Even when the server already has a replace ref (planted some other way), the
    gate reads the pushed commit as stored."""
    _, bad, good = _replaced(mem)
    git("push", "-q", "origin", f"{good}:refs/heads/side", cwd=mem)
    # Plant the replacement object by hand: refs/replace is refused on push.
    git("fetch", "-q", str(mem), f"{bad}:refs/heads/tmp-x", cwd=server)
    git("update-ref", f"refs/replace/{bad}", good, cwd=server)
    git("update-ref", "-d", "refs/heads/tmp-x", cwd=server)
    stderr = push_refused(mem, server, f"{bad}:refs/heads/main")
    assert f"remote: {bad[:7]} {MODIFIED}" in stderr


def test_every_git_we_start_has_replacement_objects_off() -> None:
    from gitmemfs.core import git as runner

    env = runner.environment()
    assert env["GIT_NO_REPLACE_OBJECTS"] == "1" and env["GIT_GRAFT_FILE"] == "/dev/null/no-grafts"


def test_check_range_ignores_a_grafts_file(mem: Path) -> None:
    """info/grafts (deprecated, still honoured) could cut the bad commit out of a range."""
    base = head(mem)
    write(mem, "system/rules.md", memfile("Ground rules", "Anything goes.\n", RO))
    bad = commit_all(mem, "x: slipped past the hook")
    write(mem, "system/fine.md", memfile("Fine"))
    top = commit_all(mem, "on top")
    (mem / ".git" / "info").mkdir(exist_ok=True)
    # base "descends" from bad, so base..top would leave bad out
    (mem / ".git" / "info" / "grafts").write_text(f"{base} {bad}\n")
    assert git("rev-list", f"{base}..{top}", cwd=mem).stdout.split() == [top]
    check_flags(mem, f"{base}..{top}", MODIFIED)


# -- item 1: entry modes: gitlinks, symlinks, mode bits ---------------------------------------

GITLINK = "system/rules.md: is a gitlink (a submodule entry); memory paths must be regular files"


def _gitlink_swap(repo: Path, path: str = "system/rules.md") -> None:
    """Stage a gitlink in place of `path` (any commit id will do: git never checks)."""
    git("update-index", "--add", "--cacheinfo", f"160000,{head(repo)},{path}", cwd=repo)


def test_gitlink_swap_of_a_read_only_file_is_refused_by_the_hook(mem: Path) -> None:
    _gitlink_swap(mem)
    commit_refused(mem, MODIFIED)
    proc = memory("check", "--staged", cwd=mem)
    assert proc.returncode == 1 and MODIFIED in proc.stdout.splitlines()


def test_a_new_gitlink_anywhere_is_refused(mem: Path) -> None:
    _gitlink_swap(mem, "notes/sub")
    commit_refused(mem, "notes/sub: is a gitlink (a submodule entry); memory paths must be regular files")


def test_gitlink_round_trip_is_caught_by_range_server_and_tree_check(mem: Path, server: Path) -> None:
    """Turn the protected file into a gitlink and back into a blob without
    read_only, both past the client hook: every authority still refuses it."""
    base = head(mem)
    _gitlink_swap(mem)
    git("commit", "-q", "--no-verify", "-m", "to gitlink", cwd=mem)
    as_link = head(mem)
    check_flags(mem, "--all", GITLINK)
    git("rm", "-q", "--cached", "system/rules.md", cwd=mem)
    write(mem, "system/rules.md", memfile("Ground rules", "Anything goes.\n", "read_only: false"))
    git("add", "system/rules.md", cwd=mem)
    git("commit", "-q", "--no-verify", "-m", "back to a blob", cwd=mem)
    out = check_flags(mem, f"{base}..HEAD", MODIFIED)
    assert out.splitlines()[0] == f"{as_link[:7]} {MODIFIED}"
    before = snapshot(mem)
    stderr = push_refused(mem, server, "main")
    assert f"remote: {as_link[:7]} {MODIFIED}" in stderr
    assert snapshot(mem) == before


def test_mode_change_of_a_read_only_file_is_a_modification(mem: Path, server: Path) -> None:
    base = head(mem)
    git("update-index", "--chmod=+x", "system/rules.md", cwd=mem)
    commit_refused(mem, MODIFIED)
    git("commit", "-q", "--no-verify", "-m", "chmod", cwd=mem)
    check_flags(mem, f"{base}..HEAD", MODIFIED)
    assert f"remote: {head(mem)[:7]} {MODIFIED}" in push_refused(mem, server, "main")


def test_symlink_with_the_same_bytes_replacing_a_read_only_file_is_refused(mem: Path) -> None:
    """A symlink blob whose target text equals the file's bytes has the same oid."""
    data = (mem / "system/rules.md").read_bytes()
    oid = git("hash-object", "-w", "--stdin", cwd=mem, input=data.decode()).stdout.strip()
    git("update-index", "--cacheinfo", f"120000,{oid},system/rules.md", cwd=mem)
    commit_refused(mem, MODIFIED)


def test_merge_that_turns_a_protected_file_into_a_gitlink_is_refused_on_the_server(mem: Path,
                                                                                  server: Path) -> None:
    """The merge's first parent is the attacker's old side: the other-parent guard sees the entry change."""
    main = head(mem)
    git("checkout", "-q", "-b", "side", f"{main}~1", cwd=mem)
    _gitlink_swap(mem)
    git("commit", "-q", "--no-verify", "-m", "side", cwd=mem)
    git("merge", "-q", "--no-verify", "-s", "ours", "-m", "merge", main, cwd=mem)
    stderr = push_refused(mem, server, "side:main")
    assert MODIFIED in stderr


# -- item 11: a hooked merge judged against every parent --------------------------------------

def test_hooked_merge_cannot_drop_a_file_protected_in_the_second_parent(mem: Path) -> None:
    base = head(mem)
    git("checkout", "-q", "-b", "other", cwd=mem)
    write(mem, "system/ro2.md", memfile("Protected on the other side", "keep\n", RO))
    commit_all(mem, "a person adds a protected file")
    git("checkout", "-q", "main", cwd=mem)
    write(mem, "system/contacts.md", memfile("People I know", "changed on main\n"))
    commit_all(mem, "main moves on")
    git("merge", "-q", "--no-commit", "other", cwd=mem)
    git("rm", "-q", "-f", "system/ro2.md", cwd=mem)
    commit_refused(mem, "system/ro2.md: file is read_only and cannot be deleted")
    assert (mem / ".git" / "MERGE_HEAD").exists()
    # Modifying it on the way through is refused too.
    git("checkout", "-q", "other", "--", "system/ro2.md", cwd=mem)
    write(mem, "system/ro2.md", memfile("Protected on the other side", "changed\n", RO))
    git("add", "system/ro2.md", cwd=mem)
    commit_refused(mem, "system/ro2.md: file is read_only and cannot be modified")
    assert git("rev-list", "--count", f"{base}..HEAD", cwd=mem).stdout.strip() == "1"


def test_a_merge_keeping_mains_approved_change_to_a_protected_file_is_not_a_revert(mem: Path) -> None:
    """A dream kept from before a person's approved change to a read_only file: merging
    it keeps main's version (only main changed the file since the base), in `check
    RANGE` as in a hooked merge. Taking the dream side's older version, or merging main
    into the old side with its version kept, still drops the change and is refused."""
    write(mem, "system/rules.md", memfile("Rules", "old rule\n", RO))
    base = commit_all(mem, "a person protects the rules")
    git("checkout", "-q", "-b", "dream", cwd=mem)
    write(mem, "notes/dreamed.md", memfile("Dreamed", "a note\n"))
    dream = commit_all(mem, "the dream's note")
    git("checkout", "-q", "main", cwd=mem)
    write(mem, "system/rules.md", memfile("Rules", "new rule\n", RO))
    tip = commit_all(mem, "the person's approved change")  # past the hook, as an approval is
    git("merge", "-q", "--no-ff", "--no-verify", "-m", "merge the dream", "dream", cwd=mem)
    proc = memory("check", f"{tip}..HEAD", cwd=mem)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # The hooked merge of the same: the pre-commit judges the staged merge the same way.
    git("reset", "-q", "--hard", tip, cwd=mem)
    git("merge", "-q", "--no-commit", "--no-ff", "dream", cwd=mem)
    proc = git("commit", "-q", "-m", "merge the dream, hooked", cwd=mem, check=False)
    assert proc.returncode == 0, proc.stderr
    # The other way round: the old side keeps its version while taking main in.
    git("checkout", "-q", "dream", cwd=mem)
    git("merge", "-q", "--no-verify", "-s", "ours", "-m", "main, but the old rules", tip, cwd=mem)
    check_flags(mem, f"{dream}..HEAD", MODIFIED)
    git("reset", "-q", "--hard", dream, cwd=mem)
    git("merge", "-q", "--no-commit", "-s", "ours", tip, cwd=mem)
    commit_refused(mem, MODIFIED)
    assert base


def test_merge_heads_in_a_linked_worktree(mem: Path, tmp_path: Path) -> None:
    from gitmemfs.gate import check

    git("worktree", "add", "-q", "-b", "wt", str(tmp_path / "wt"), cwd=mem)
    assert check.merge_heads(str(tmp_path / "wt")) == []
    git("checkout", "-q", "-b", "other", cwd=mem)
    write(mem, "notes/x.md", memfile("X"))
    sha = commit_all(mem, "x")
    git("merge", "-q", "--no-commit", "--no-ff", "other", cwd=tmp_path / "wt")
    assert check.merge_heads(str(tmp_path / "wt")) == [sha]


# -- item 12: duplicate frontmatter keys ------------------------------------------------------

DUPS = [
    "read_only: false\nread_only: true",
    "read_only: 'false'\n\"read_only\": yes",
    "read_only: true\nread_only: false",
]


@pytest.mark.parametrize("dup", DUPS)
def test_duplicate_read_only_keys_protect_in_hook_check_and_tools(mem: Path, server: Path, dup: str) -> None:
    write(mem, "system/dup.md", f"---\ndescription: Twice\n{dup}\n---\nbody\n")
    base = commit_all(mem, "a person commits a file with a duplicate key")
    # The server gets it past its own hook (it would refuse the file: a key set twice).
    git("fetch", "-q", str(mem), "main:main", cwd=server)
    git("fetch", "-q", "origin", cwd=mem)
    # The hook: git rm plus a hooked commit.
    git("rm", "-q", "system/dup.md", cwd=mem)
    commit_refused(mem, "system/dup.md: file is read_only and cannot be deleted")
    git("reset", "-q", "--hard", cwd=mem)
    # The tools say the same.
    before = snapshot(mem)
    proc = memory("delete", "system/dup.md", "-m", "drop it", cwd=mem)
    assert proc.returncode == 1 and "read_only" in proc.stderr, proc.stderr
    assert snapshot(mem) == before
    # Past the hook: check RANGE and the server.
    git("rm", "-q", "system/dup.md", cwd=mem)
    git("commit", "-q", "--no-verify", "-m", "drop", cwd=mem)
    check_flags(mem, f"{base}..HEAD", "system/dup.md: file is read_only and cannot be deleted")
    assert "system/dup.md: file is read_only and cannot be deleted" in push_refused(mem, server, "main")


def test_duplicate_keys_are_invalid_everywhere(mem: Path) -> None:
    write(mem, "system/dup.md", "---\ndescription: One\ndescription: Two\n---\nbody\n")
    git("add", "system/dup.md", cwd=mem)
    commit_refused(mem, "system/dup.md: duplicate frontmatter key 'description'")
    proc = memory("check", "--staged", cwd=mem)
    assert proc.returncode == 1 and "system/dup.md: duplicate frontmatter key 'description'" in proc.stdout


# -- item 3: a committed symlink into .git ----------------------------------------------------

def call(repo: Path, obj: dict, *extra: str) -> tuple[int, dict]:
    proc = memory("call", json.dumps(obj), *extra, cwd=repo)
    return proc.returncode, json.loads(proc.stdout)


def _git_dir_listing(repo: Path) -> list[str]:
    return sorted(str(p.relative_to(repo / ".git")) for p in (repo / ".git").rglob("*")
                  if "objects" not in p.parts and p.name not in ("index", "ORIG_HEAD") and "logs" not in p.parts)


@pytest.mark.parametrize("target", [".git", "./.git/", "notes/../.git", ".GIT", "..", "/etc", "../outside"])
def test_symlink_into_git_or_outside_is_refused_at_every_gate(mem: Path, server: Path, target: str) -> None:
    os.symlink(target, mem / "gitlink")
    git("add", "gitlink", cwd=mem)
    stderr = commit_refused(mem)
    assert f"gitlink: is a symbolic link to {target!r}" in stderr
    base = head(mem)
    git("commit", "-q", "--no-verify", "-m", "link", cwd=mem)
    check_flags(mem, f"{base}..HEAD", f"gitlink: is a symbolic link to {target!r}")
    check_flags(mem, "--all", f"gitlink: is a symbolic link to {target!r}")
    assert f"gitlink: is a symbolic link to {target!r}" in push_refused(mem, server, "main")


def test_symlink_inside_the_repo_is_allowed_outside_checked_scope(mem: Path) -> None:
    os.symlink("reference/history", mem / "notes-link")
    (mem / "notes").mkdir()
    os.symlink("../reference/history/a.md", mem / "notes" / "a-link")
    git("add", "notes-link", "notes/a-link", cwd=mem)
    assert git("commit", "-q", "-m", "links", cwd=mem, check=False).returncode == 0


@pytest.mark.parametrize("path", ["gitlink/refs/tags/x", "gitlink/refs/heads/x", "gitlink/config",
                                  "gitlink/hooks/pre-commit"])
def test_writes_never_go_through_a_committed_symlink_to_git(mem: Path, path: str) -> None:
    os.symlink(".git", mem / "gitlink")
    commit_all(mem, "a symlink to .git, merged past the hooks")
    listing = _git_dir_listing(mem)
    before = snapshot(mem)
    for obj, extra in (({"command": "create", "reason": "r", "file_path": path, "file_text": "x",
                         "description": "d"}, ()),
                       ({"command": "create", "path": f"/memories/{path}.md", "file_text": "x"},
                        ("--schema", "anthropic"))):
        code, out = call(mem, obj, *extra)
        assert code == 1 and out["ok"] is False, out
        # Letta schema: our message; Anthropic schema: the reference's wording (issue 13).
        assert ("gitlink is a symbolic link; memory paths never go through one" in out["error"]
                or "names git's own data (.git)" in out["error"]), out
        assert snapshot(mem) == before
        assert _git_dir_listing(mem) == listing
        assert git("rev-parse", "HEAD", cwd=mem).returncode == 0
    proc = memory("create", f"{path}.md", "x", "-d", "d", "-m", "r", cwd=mem)
    assert proc.returncode == 1 and "gitlink is a symbolic link" in proc.stderr
    patch = f"*** Begin Patch\n*** Add File: {path}.md\n+---\n+description: d\n+---\n+x\n*** End Patch\n"
    proc = run("memory-patch", "-m", "r", cwd=mem, input=patch)
    assert proc.returncode == 1 and "gitlink is a symbolic link" in proc.stderr, proc.stderr
    assert snapshot(mem) == before and _git_dir_listing(mem) == listing


def test_pruning_never_goes_through_a_symlink(mem: Path) -> None:
    """The rollback prunes the folders a write created; never one behind a symlink."""
    from gitmemfs.core import writer

    (mem / "notes" / "keep").mkdir(parents=True)
    outside = mem.parent / "outside" / "empty"
    outside.mkdir(parents=True)
    writer._prune_empty(str(mem), str(mem / "notes" / "keep"))
    assert not (mem / "notes").exists()
    os.symlink(str(outside.parent), mem / "out")
    writer._prune_empty(str(mem), str(mem / "out" / "empty"))
    assert outside.exists()


def test_a_link_swapped_in_after_the_checks_is_never_written_through(mem: Path) -> None:
    """The window between the symlink check and the write: a folder becomes a link to
    .git in between. Every folder is opened without following links, so the write
    fails and the rollback leaves .git alone."""
    from gitmemfs.core import writer
    from gitmemfs.core.repo import open_repo

    repo = open_repo(str(mem))
    listing = _git_dir_listing(mem)
    os.symlink(".git", mem / "swapped")
    for rel in ("swapped/refs/heads/x.md", "swapped/newdir/x.md", "swapped/config"):
        with pytest.raises(OSError) as caught:
            writer._write_atomic(repo, str(mem / rel), b"x")
        assert caught.value.errno in (errno.ELOOP, errno.ENOTDIR)
        with pytest.raises(OSError):
            writer._remove(repo, str(mem / rel))
        with pytest.raises(OSError):  # a rollback refuses too (and the journal would stay)
            writer.restore(repo, {rel: b"old"})
        try:  # lexists() follows the link to .git/config; the unlink must not
            writer.restore(repo, {rel: None})
        except OSError as exc:
            assert exc.errno in (errno.ELOOP, errno.ENOTDIR)
        assert _git_dir_listing(mem) == listing
    assert (mem / ".git" / "config").read_bytes().startswith(b"[core]")
    with writer.WriteSession(repo, scope=["notes/x.md"]) as session:
        os.symlink(".git", mem / "notes")  # after the session's clean check
        with pytest.raises(MemfsError, match="notes/x.md is a symbolic link|notes is a symbolic link"):
            session.read("notes/x.md")


def test_a_writer_racing_a_link_swapper_never_writes_outside(tmp_path: Path) -> None:
    """An agent flips a folder between a real folder and a link to a folder outside the
    memory while the Anthropic tool (scoped cleanliness, so untracked links do not stop
    it) writes into that folder. Each call lands in the real folder or is refused
    cleanly; nothing appears outside; the repository stays sound."""
    import threading

    repo = tmp_path / "plain"
    assert memory("init", "--layout", "plain", str(repo), cwd=tmp_path).returncode == 0
    outside = tmp_path / "outside"
    outside.mkdir()
    real, link, spare = repo / "box", repo / ".box-link", repo / ".box-real"
    real.mkdir()
    stop = threading.Event()

    def swapper() -> None:
        while not stop.is_set():
            try:
                os.symlink(str(outside), link)
                os.rename(real, spare)
                os.rename(link, real)  # box -> outside
                os.rename(real, link)
                os.rename(spare, real)  # box is a folder again
                os.unlink(link)
            except OSError:
                pass

    thread = threading.Thread(target=swapper, daemon=True)
    thread.start()
    try:
        outs = [memory("call", json.dumps({"command": "create", "path": f"/memories/box/n{i}.txt",
                                           "file_text": f"{i}\n"}), "--schema", "anthropic", cwd=repo)
                for i in range(25)]
    finally:
        stop.set()
        thread.join()
    assert list(outside.iterdir()) == []
    for proc in outs:
        assert "internal error" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    assert git("fsck", "--no-progress", cwd=repo, check=False).returncode == 0
    landed = git("ls-tree", "-r", "--name-only", "HEAD", cwd=repo).stdout.split()
    assert all(name.startswith("box/n") for name in landed), landed  # only real-folder writes landed
    proc = memory("call", json.dumps({"command": "create", "path": "/memories/after.txt", "file_text": "ok\n"}),
                  "--schema", "anthropic", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr


# -- item 5: names git's fsck flags -----------------------------------------------------------

FSCK_NAMES = [".git\u200c/x.md", ".gI\u200et/x.md", "notes/.git\ufeff/x.md", ".git./x.md", ".git /x.md",
              "GIT~1/x.md", "notes/git~1/x.md", ".git::$INDEX_ALLOCATION/x.md", "notes/x.md.", "notes /x.md",
              "gitmod~1", "notes/gi7eba~3"]


def commit_with_entry(repo: Path, name: str, content: str, mode: str = "100644") -> str:
    """A commit on top of HEAD that adds `name`, built with mktree and commit-tree:
    plumbing takes names (`.git.`, `git~1`) that `git add` and the index refuse."""
    oid = git("hash-object", "-w", "--stdin", cwd=repo, input=content).stdout.strip()
    parts = name.split("/")
    entry = f"{mode} blob {oid}\t{parts[-1]}\n"
    for depth in range(len(parts) - 1, -1, -1):
        folder = "/".join(parts[:depth])
        listing = git("ls-tree", f"HEAD:{folder}" if folder else "HEAD", cwd=repo, check=False).stdout
        listing = "".join(ln + "\n" for ln in listing.splitlines() if ln.split("\t", 1)[1] != parts[depth])
        tree = git("mktree", cwd=repo, input=listing + entry).stdout.strip()
        if depth:
            entry = f"040000 tree {tree}\t{parts[depth - 1]}\n"
    sha = git("commit-tree", tree, "-p", "HEAD", "-m", f"add {name}", cwd=repo).stdout.strip()
    git("update-ref", "refs/heads/main", sha, cwd=repo)
    return sha


@pytest.mark.parametrize("name", FSCK_NAMES)
def test_names_git_fsck_flags_are_refused_by_hook_check_and_server(mem: Path, server: Path, name: str) -> None:
    oid = git("hash-object", "-w", "--stdin", cwd=mem, input=memfile("Evil")).stdout.strip()
    staged = git("update-index", "--add", "--cacheinfo", f"100644,{oid},{name}", cwd=mem, check=False)
    base = head(mem)
    shown = visible(name)  # as a person's terminal gets it (a U+200E mark as \\u200e)
    if staged.returncode == 0:  # names git's own index takes: our hook refuses them
        stderr = commit_refused(mem)
        assert f"{shown}: has " in stderr
        git("commit", "-q", "--no-verify", "-m", "evil name", cwd=mem)
    else:  # names only plumbing can commit
        commit_with_entry(mem, name, memfile("Evil"))
    check_flags(mem, f"{base}..HEAD", f"{shown}: has ")
    check_flags(mem, "--all", f"{shown}: has ")
    assert f"{shown}: has " in push_refused(mem, server, "main")


@pytest.mark.parametrize("name", [".git\u200c/x.md", "notes/GIT~1/x.md", "notes/x. /y.md", "a\\.git/x.md"])
def test_fsck_names_are_refused_by_the_tools(mem: Path, name: str) -> None:
    before = snapshot(mem)
    proc = memory("create", name, "x", "-d", "d", "-m", "r", cwd=mem)
    assert proc.returncode in (1, 2) and proc.stderr.startswith("error: "), proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert snapshot(mem) == before


def test_ordinary_names_with_dots_and_unicode_pass(mem: Path) -> None:
    for name in ["notes/..foo.md", "notes/github.md", "notes/caf\u00e9.md", "notes/v1.2.md", "notes/git~2.md"]:
        write(mem, name, memfile("Fine"))
    git("add", "-A", cwd=mem)
    assert git("commit", "-q", "-m", "fine names", cwd=mem, check=False).returncode == 0


# -- item 6: git control files ----------------------------------------------------------------

CONTROL = [".gitattributes", ".gitmodules", ".mailmap", "notes/.gitignore", "notes/.gitattributes",
           ".GitAttributes", ".gitattributes.", ".gitmodules\u200c", "system/.git-keep"]


@pytest.mark.parametrize("name", CONTROL)
def test_control_files_are_refused_in_agent_commits(mem: Path, server: Path, name: str) -> None:
    oid = git("hash-object", "-w", "--stdin", cwd=mem, input="* text eol=crlf\n").stdout.strip()
    git("update-index", "--add", "--cacheinfo", f"100644,{oid},{name}", cwd=mem)
    commit_refused(mem)
    base = head(mem)
    git("commit", "-q", "--no-verify", "-m", "control file", cwd=mem)
    shown = visible(name)  # as a person reads it (a ZWNJ as \\u200c)
    check_flags(mem, f"{base}..HEAD", f"{shown}: ")
    assert f"{shown}: " in push_refused(mem, server, "main")


def test_control_file_message_and_root_gitignore_allowed(mem: Path) -> None:
    write(mem, ".gitattributes", "* text eol=crlf\n")
    git("add", ".gitattributes", cwd=mem)
    commit_refused(mem, ".gitattributes: is a git control file, not memory; agents and dreams cannot add or "
                        "change it (a person may commit it with the hooks off)")
    git("reset", "-q", cwd=mem)
    (mem / ".gitattributes").unlink()
    write(mem, ".gitignore", "*.tmp\n")
    git("add", ".gitignore", cwd=mem)
    assert git("commit", "-q", "-m", "ignore tmp", cwd=mem, check=False).returncode == 0


def test_a_dream_cannot_commit_gitattributes(repo: Path) -> None:
    """The attack of item 6: a dream that commits `* text eol=crlf` is not merged,
    so later dreams still run."""
    before = snapshot(repo)
    cmd = ("printf '* text eol=crlf\\n' > .gitattributes && git add .gitattributes && "
           "git commit -q -m 'attrs' || git commit -q --no-verify -m attrs")
    proc = run("dream", "--json", "--agent", cmd, cwd=repo)
    out = json.loads(proc.stdout)
    assert out["status"] != "merged", out
    assert ".gitattributes: is a git control file" in json.dumps(out), out
    assert snapshot(repo) == before
    proc = run("dream", "--json", "--agent", "true", cwd=repo)
    assert json.loads(proc.stdout)["status"] == "no_changes", proc.stdout


# -- item 4: every read goes through the jail -------------------------------------------------

@pytest.mark.parametrize("path", ["/memories/..", "/memories/../", "/memories/.git", "/memories/system/../..",
                                  "/memories/.git/refs", "/memories/./.git", "/memories/link", "/memories/link/x.md"])
def test_anthropic_view_cannot_leave_the_jail(mem: Path, path: str) -> None:
    os.symlink(str(mem.parent), mem / "link")
    code, out = call(mem, {"command": "view", "path": path}, "--schema", "anthropic")
    assert code != 0 and out["ok"] is False, out
    assert "\n" not in out["error"], out  # the reference's wording, one line (issue 13)
    assert (".git" not in out["error"].replace(path, "") or "into the .git" in out["error"]
            or "names git's own data (.git)" in out["error"])
    assert "HEAD" not in out["error"] and "config" not in out["error"]


def test_views_skip_dangling_and_escaping_symlinks(mem: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text(memfile("TOP SECRET DESCRIPTION"))
    os.symlink("nowhere", mem / "system" / "dangling")
    os.symlink(str(secret), mem / "system" / "leak.md")
    code, out = call(mem, {"command": "view", "path": "/memories"}, "--schema", "anthropic")
    assert code == 0 and out["ok"], out
    assert "dangling" not in out["message"] and "leak" not in out["message"]
    code, out = call(mem, {"command": "view", "path": "/memories/system"}, "--schema", "anthropic")
    assert code == 0 and "contacts.md" in out["message"] and "leak" not in out["message"], out
    code, out = call(mem, {"command": "view", "reason": "look", "file_path": "system"})
    assert code == 0 and "TOP SECRET" not in out["message"] and "contacts.md" in out["message"], out
    for obj, extra in (({"command": "view", "path": "/memories/system/leak.md"}, ("--schema", "anthropic")),
                       ({"command": "view", "reason": "r", "file_path": "system/leak.md"}, ())):
        code, out = call(mem, obj, *extra)
        assert code == 1 and "TOP SECRET" not in json.dumps(out), out
        assert "symbolic link" in out["error"] or "would escape /memories" in out["error"], out
