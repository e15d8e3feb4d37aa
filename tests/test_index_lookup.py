"""core/gitfiles/index.py and loose.Reader's staged look-ups answer `:path` and `HEAD:path`
from the index file exactly as `git cat-file --batch` does, or leave them to git."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from conftest import git
from gitmemfs.core import git as gitrun
from gitmemfs.core.gitfiles import index, loose

PART = st.sampled_from(["a", "b", "A", "Z", ".m", "-x", "0", "x.md", "x-y", "é", "MEMORY.md", "a b"])
PATH = st.lists(PART, min_size=1, max_size=3).map("/".join)


def ls_files(repo: Path) -> dict[str, tuple[int, str]]:
    out = git("ls-files", "-s", "-z", cwd=repo).stdout
    entries = {}
    for item in out.split("\0"):
        if item:
            meta, _, path = item.partition("\t")
            mode, oid, _stage = meta.split()
            entries[path] = (int(mode, 8), oid)
    return entries


def index_repo(tmp_path: Path, paths: list[str], version: int) -> Path:
    repo = tmp_path / "r"
    if repo.exists():
        subprocess.run(["rm", "-rf", str(repo)], check=True)
    git("init", "-q", str(repo), cwd=tmp_path)
    oid = git("hash-object", "-w", "--stdin", cwd=repo, input="x\n").stdout.strip()
    info = "".join(f"100644 {oid}\t{p}\n" for p in paths)
    git("update-index", "--add", "--index-info", cwd=repo, input=info)
    git("update-index", "--index-version", str(version), cwd=repo)
    return repo


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(paths=st.lists(PATH, min_size=1, max_size=12, unique=True), queries=st.lists(PATH, max_size=6),
       version=st.sampled_from([2, 3, 4]))
@example(paths=["a/b", "a-b", "a.b", "a0"], queries=["a", "a/b", "a-"], version=4)
def test_the_index_walk_finds_what_git_lists(tmp_path: Path, hermetic: Path, paths: list[str],
                                             queries: list[str], version: int) -> None:
    # A path cannot be both a file and a folder: drop the files that are folders too.
    paths = [p for p in paths if not any(q.startswith(p + "/") for q in paths)]
    repo = index_repo(tmp_path, paths, version)
    entries = ls_files(repo)
    data = (repo / ".git" / "index").read_bytes()
    for query in [*queries, *paths, *(p.rsplit("/", 1)[0] for p in paths)]:
        found = index.find(data, query.encode())
        expected = entries.get(query)
        assert (found.entry and (found.entry.mode, found.entry.oid)) == (expected or None), query
        assert found.folder == any(p.startswith(query + "/") for p in entries), query


def test_long_names_and_extended_flags(tmp_path: Path, hermetic: Path) -> None:
    """A name of 0xFFF bytes or more (the length field saturates), and version 3's
    extended flags (skip-worktree, intent-to-add)."""
    long = "d/" + "n" * 5000
    repo = index_repo(tmp_path, [long, "e", "f"], 2)
    git("update-index", "--skip-worktree", "e", cwd=repo)
    assert (repo / ".git" / "index").read_bytes()[4:8] == b"\0\0\0\3"
    data = (repo / ".git" / "index").read_bytes()
    entries = ls_files(repo)
    for query in (long, "e", "f", "d"):
        found = index.find(data, query.encode())
        assert (found.entry and found.entry.oid) == (entries[query][1] if query in entries else None)


def test_what_it_cannot_follow_it_leaves_to_git(tmp_path: Path, hermetic: Path) -> None:
    repo = index_repo(tmp_path, ["a", "b"], 2)
    git("update-index", "--split-index", cwd=repo)
    with pytest.raises(index.Unsure):
        index.IndexFile(str(repo / ".git" / "index"), str(repo / ".git")).lookup("b")
    git("update-index", "--no-split-index", cwd=repo)
    for name in list((repo / ".git").iterdir()):
        if name.name.startswith("sharedindex."):
            name.unlink()
    assert index.IndexFile(str(repo / ".git" / "index"), str(repo / ".git")).lookup("b").entry is not None
    many = index_repo(tmp_path, [f"f{i:05d}" for i in range(index.MAX_WALK + 10)], 2)
    with pytest.raises(index.Unsure):
        index.find((many / ".git" / "index").read_bytes(), b"zz")


def test_a_big_index_is_read_as_far_as_needed(tmp_path: Path, hermetic: Path) -> None:
    """Names past the first 64 KiB are found all the same (the file is then read whole)."""
    paths = [f"d{i:04d}/{'n' * 40}" for i in range(2000)]
    repo = index_repo(tmp_path, paths, 2)
    assert (repo / ".git" / "index").stat().st_size > index.IndexFile.HEAD
    entries = ls_files(repo)
    reader = index.IndexFile(str(repo / ".git" / "index"), str(repo / ".git"))
    for path in (paths[0], paths[1500], paths[-1], "d1999", "zz"):
        found = reader.lookup(path)
        assert (found.entry and found.entry.oid) == (entries[path][1] if path in entries else None)
    assert reader.lookup("d1999").folder


def test_a_conflict_is_left_to_git(tmp_path: Path, hermetic: Path) -> None:
    repo = index_repo(tmp_path, [], 2)
    oid = git("hash-object", "-w", "--stdin", cwd=repo, input="y\n").stdout.strip()
    git("update-index", "--index-info", cwd=repo, input=f"100644 {oid} 1\tc\n100644 {oid} 2\tc\n")
    with pytest.raises(index.Unsure):
        index.find((repo / ".git" / "index").read_bytes(), b"c")


def staged_repo(tmp_path: Path) -> Path:
    """A commit, then staged: a change, a deletion, an addition, a file made a folder."""
    repo = tmp_path / "s"
    git("init", "-q", str(repo), cwd=tmp_path)
    for name, text in {"keep.md": "k\n", "MEMORY.md": "m\n", "change.md": "1\n", "gone.md": "g\n",
                       "turn": "t\n", "dir/in.md": "i\n"}.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "base", cwd=repo)
    (repo / "change.md").write_text("2\n")
    (repo / "gone.md").unlink()
    (repo / "new.md").write_text("n\n")
    (repo / "turn").unlink()
    (repo / "turn").mkdir()
    (repo / "turn" / "x.md").write_text("x\n")
    git("add", "-A", cwd=repo)
    return repo


SPECS = [f"{side}{p}" for side in (":", "HEAD:") for p in (
    "keep.md", "MEMORY.md", "change.md", "gone.md", "new.md", "turn", "turn/x.md", "dir", "dir/in.md",
    "nothing.md", "./keep.md", "0:keep.md")]


def test_staged_look_ups_match_cat_file(tmp_path: Path, hermetic: Path) -> None:
    repo = staged_repo(tmp_path)
    changed = git("diff", "--cached", "--name-only", "-z", "--no-renames", cwd=repo).stdout.split("\0")
    with gitrun.BlobReader(str(repo)) as batch:
        expected = batch.read_many(SPECS)
    reader = loose.Reader(str(repo))
    reader.know_staged([c for c in changed if c], 20)
    with reader:
        assert reader.read_many(SPECS) == expected
    answered_here = []
    for spec in SPECS:
        try:
            reader._staged.read(reader.objects, spec)  # type: ignore[union-attr]
            answered_here.append(spec)
        except index.Unsure:
            pass
    # The unchanged files (the hook's usual look-ups) never start git.
    assert {":keep.md", "HEAD:keep.md", ":MEMORY.md", "HEAD:MEMORY.md", "HEAD:nothing.md"} <= set(answered_here)
    assert "HEAD:change.md" not in answered_here and "HEAD:turn" not in answered_here


def test_the_hook_starts_only_the_diff(tmp_path: Path, hermetic: Path) -> None:
    """A commit in a plain memory: the pre-commit hook's one git process is the diff."""
    repo = tmp_path / "m"
    subprocess.run(["git", "memory", "init", str(repo)], check=True, capture_output=True)
    (repo / "system" / "persona.md").write_text("---\ndescription: me\n---\nHello.\n")
    git("add", "-A", cwd=repo)
    trace = tmp_path / "trace"
    proc = subprocess.run([str(repo / ".git" / "hooks" / "pre-commit")], cwd=repo, capture_output=True,
                          text=True, env={**os.environ, "GIT_TRACE": str(trace)})
    assert proc.returncode == 0, proc.stderr
    commands = [line.split("trace: built-in: ", 1)[1] for line in trace.read_text().splitlines()
                if "trace: built-in: " in line]
    assert len(commands) == 1 and commands[0].startswith("git diff --cached "), commands
