"""core/gitfiles/discovery.py finds the work tree without git only where git would find the
same one: held to `git rev-parse` on real layouts, made by hand and generated."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import git, memory
from gitmemfs.core import git as gitrun
from gitmemfs.core.gitfiles import discovery, gitconfig
from gitmemfs.core.repo import open_repo


def rev_parse(path: Path) -> tuple[str, str] | None:
    proc = subprocess.run(["git", "-C", str(path), "rev-parse", "--show-toplevel", "--absolute-git-dir"],
                          text=True, capture_output=True)
    if proc.returncode != 0:
        return None
    lines = proc.stdout.splitlines()
    return (lines[0], lines[1]) if len(lines) == 2 else None


def quick(path: Path) -> tuple[str, str] | None:
    """What open_repo takes without git: a find() whose settings are settled."""
    found = discovery.find(str(path), gitrun.REPO_ENV)
    if found is None:
        return None
    settings_ = gitconfig.read(found[1])
    return found if settings_ is not None and discovery.settled(settings_) else None


def agrees(path: Path) -> tuple[str, str] | None:
    found = quick(path)
    if found is not None:
        assert found == rev_parse(path), path
    return found


def init(path: Path, *extra: str) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git("init", "-q", *extra, str(path), cwd=path.parent)
    return path


def test_the_usual_layouts_are_found_without_git(tmp_path: Path) -> None:
    outer = init(tmp_path / "outer")
    (outer / "a" / "b").mkdir(parents=True)
    inner = init(outer / "a" / "inner")
    (inner / "deep").mkdir()
    assert agrees(outer) == (str(outer), str(outer / ".git"))
    assert agrees(outer / "a" / "b") == (str(outer), str(outer / ".git"))
    assert agrees(inner / "deep") == (str(inner), str(inner / ".git")), "the nearest repository wins"


def test_a_path_through_a_symbolic_link_gives_the_physical_one(tmp_path: Path) -> None:
    real = init(tmp_path / "real")
    (real / "sub").mkdir()
    (tmp_path / "link").symlink_to(real)
    assert agrees(tmp_path / "link" / "sub") == (str(real), str(real / ".git"))


@pytest.mark.parametrize("case", ["worktree", "bare", "inside .git", "empty .git folder", ".git file with junk",
                                  "HEAD with junk", "core.worktree", "core.bare", "newer format", "no repository"])
def test_anything_unusual_is_left_to_git(tmp_path: Path, case: str) -> None:
    main = init(tmp_path / "main")
    git("commit", "-q", "--allow-empty", "-m", "first", cwd=main)
    where = main
    if case == "worktree":
        git("worktree", "add", "-q", str(tmp_path / "wt"), cwd=main)
        where = tmp_path / "wt"
    elif case == "bare":
        where = init(tmp_path / "bare.git", "--bare")
    elif case == "inside .git":
        where = main / ".git" / "refs"
    elif case == "empty .git folder":  # git skips it and finds the outer repository
        where = main / "sub"
        (where / ".git").mkdir(parents=True)
    elif case == ".git file with junk":
        where = main / "sub"
        where.mkdir()
        (where / ".git").write_text("not a gitdir line\n")
    elif case == "HEAD with junk":
        (main / ".git" / "HEAD").write_text("garbage\n")
    elif case == "core.worktree":
        (tmp_path / "elsewhere").mkdir()
        git("config", "core.worktree", str(tmp_path / "elsewhere"), cwd=main)
    elif case == "core.bare":
        git("config", "core.bare", "true", cwd=main)
    elif case == "newer format":
        git("config", "core.repositoryformatversion", "1", cwd=main)
        git("config", "extensions.objectformat", "sha1", cwd=main)
    elif case == "no repository":
        where = tmp_path / "plain"
        where.mkdir()
    assert quick(where) is None


@pytest.mark.parametrize("name", ["GIT_DIR", "GIT_WORK_TREE", "GIT_CEILING_DIRECTORIES",
                                  "GIT_DISCOVERY_ACROSS_FILESYSTEM"])
def test_the_environment_that_moves_or_bounds_the_search_is_left_to_git(tmp_path: Path, name: str) -> None:
    repo = init(tmp_path / "r")
    assert discovery.find(str(repo), gitrun.REPO_ENV, {name: str(tmp_path)}) is None
    assert discovery.find(str(repo), gitrun.REPO_ENV, {}) is not None


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another owner needs root")
def test_a_repository_of_another_owner_is_left_to_git(tmp_path: Path) -> None:
    repo = init(tmp_path / "theirs")
    os.chown(repo, 12345, 12345)
    assert discovery.find(str(repo), gitrun.REPO_ENV, {}) is None
    assert rev_parse(repo) is None, "git refuses it too (dubious ownership)"


def test_open_repo_still_answers_where_discovery_steps_aside(tmp_path: Path) -> None:
    main = init(tmp_path / "mem")
    (main / "system").mkdir()
    git("commit", "-q", "--allow-empty", "-m", "first", cwd=main)
    git("worktree", "add", "-q", str(tmp_path / "wt"), cwd=main)
    (tmp_path / "wt" / "system").mkdir()
    repo = open_repo(str(tmp_path / "wt"))
    assert (repo.root, repo.common_dir) == (str(tmp_path / "wt"), str(main / ".git"))
    with pytest.raises(Exception, match="bare repository"):
        open_repo(str(init(tmp_path / "b.git", "--bare")))


# Generated layouts: folders, some holding a repository, a junk `.git` (an empty
# folder, a file) or nothing; from any folder, discovery is silent or agrees with git.
ENTRY = st.sampled_from(["repo", "repo", "empty-git-dir", "git-file", "none", "none"])
LAYOUT = st.lists(st.tuples(st.integers(0, 5), ENTRY), min_size=1, max_size=6)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(layout=LAYOUT, start=st.integers(0, 6))
def test_generated_layouts_agree_with_git(tmp_path_factory: pytest.TempPathFactory,
                                          layout: list[tuple[int, str]], start: int) -> None:
    base = tmp_path_factory.mktemp("layout")
    folders = [base]
    for parent, kind in layout:
        folder = folders[parent % len(folders)] / f"d{len(folders)}"
        folder.mkdir()
        folders.append(folder)
        if kind == "repo":
            init(folder)
        elif kind == "empty-git-dir":
            (folder / ".git").mkdir()
        elif kind == "git-file":
            (folder / ".git").write_text("gitdir: /nowhere\n")
    where = folders[start % len(folders)]
    found = agrees(where)
    # Where git finds a repository by a plain `.git` folder on the way up, so must we.
    chain = [where, *where.parents]
    plain = next((f for f in chain if (f / ".git").exists()), None)
    if plain is not None and (plain / ".git").is_dir() and (plain / ".git" / "HEAD").exists():
        assert found == (str(plain), str(plain / ".git"))


def test_an_edit_starts_no_rev_parse(mem: Path, tmp_path: Path) -> None:
    log = tmp_path / "trace"
    proc = memory("str_replace", "system/contacts.md", "Sarah", "Sara", "-m", "spelling", cwd=mem,
                  env={"GIT_TRACE": str(log)})
    assert proc.returncode == 0, proc.stderr
    started = [line for line in log.read_text().splitlines() if "trace: built-in: git" in line]
    assert not any("--show-toplevel" in line or " config " in line for line in started), started
    assert any(" status " in line for line in started) and any(" commit " in line for line in started)
