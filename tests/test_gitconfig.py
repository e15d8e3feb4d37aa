"""core/gitfiles/gitconfig.py reads settings without git: wherever it answers, it answers
exactly what `git config -z --list` prints; everywhere else it says it is unsure."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from conftest import git
from gitmemfs.core.gitfiles import gitconfig


def git_list(env: dict[str, str] | None, *args: str, cwd: Path | str | None = None) -> dict | None:
    """What `git config [args] -z --list` prints, as {key: values}; None when git
    refuses the files."""
    proc = subprocess.run(["git", "config", *args, "-z", "--list"], cwd=cwd, env=env, capture_output=True)
    if proc.returncode != 0:
        return None
    found: dict[str, list[str | None]] = {}
    for item in proc.stdout.decode("utf-8", "surrogateescape").split("\0"):
        if item:
            key, newline, value = item.partition("\n")
            found.setdefault(key, []).append(value if newline else None)
    return found


def ours(data: bytes) -> dict | None:
    found: dict = {}
    try:
        gitconfig.parse(data, found)
    except gitconfig.Unsure:
        return None
    return found


# Lines from the plain subset and from just past it, mixed at random.
NAME = st.sampled_from(["core", "memory", "User", "remote", "a-b", "x1"] * 3 + ["include", "includeIf", "sec.tion", ""])
SUB = st.sampled_from(['"origin"', '"Sub Case"', '"spaces  in"', ""] * 3 + ['"a\\"b"', '"x\\\\y"', '"'])
KEY = st.sampled_from(["layout", "checkScope", "name", "a-b", "x1", "1bad", "ke_y", "url", "K"])
VALUE_CHARS = st.sampled_from(list("abcXYZ019 \t#;=[]./:@-_é") * 3 + list("\"\\") + ["  ", "\t\t"])
VALUE = st.lists(VALUE_CHARS, max_size=12).map("".join)
PAD = st.sampled_from(["", " ", "\t", "  ", " \t"])
COMMENT = st.sampled_from(["", " # note", " ; note", "#", ";x"])


@st.composite
def header(draw: st.DrawFn) -> str:
    sub = draw(SUB)
    return f"{draw(PAD)}[{draw(NAME)}{' ' + sub if sub else ''}]{draw(PAD)}{draw(COMMENT)}"


@st.composite
def setting(draw: st.DrawFn) -> str:
    form = draw(st.sampled_from(["kv", "kv", "kv", "bare", "bare-comment"]))
    key = draw(KEY)
    if form == "bare":
        return f"{draw(PAD)}{key}{draw(PAD)}"
    if form == "bare-comment":
        return f"{draw(PAD)}{key}{draw(COMMENT)}"
    return f"{draw(PAD)}{key}{draw(PAD)}={draw(PAD)}{draw(VALUE)}{draw(COMMENT)}"


ODD = st.sampled_from(["\r", "\ufeff", "[core] x = 1", "x\\", "\v"])
LINE = st.one_of(header(), setting(), setting(), setting(), COMMENT, PAD, ODD)
FILE = st.lists(LINE, max_size=8).map(lambda lines: "\n".join(lines))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.tuples(header(), FILE).map(lambda parts: "\n".join(parts)), crlf=st.booleans())
@example(text="[memory]\n\tlayout = letta-root\n\tcheckScope=all # why\n", crlf=False)
@example(text='[remote "origin"]\n url = https://example.com/a b\n[core]\nbare\n', crlf=True)
@example(text="[core]\n x =  a \t b  ", crlf=False)
def test_what_we_read_is_what_git_reads(tmp_path: Path, hermetic: Path, text: str, crlf: bool) -> None:
    data = (text.replace("\n", "\r\n") if crlf else text).encode()
    path = tmp_path / "config"
    path.write_bytes(data)
    mine = ours(data)
    theirs = git_list(None, "--file", str(path))
    event("read here" if mine is not None else "left to git")
    if mine is not None:
        assert theirs is not None, f"git refuses {text!r}, we read {mine}"
        assert mine == theirs, text


def test_the_plain_subset_is_read_not_left_to_git() -> None:
    """The settings every memory has: read here (the point of the module)."""
    text = b"[core]\n\trepositoryformatversion = 0\n\tbare = false\n[memory]\n\tlayout = letta\n" \
           b"[remote \"origin\"]\n\turl = https://example.com/m.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
    found = ours(text)
    assert found is not None and found["memory.layout"] == ["letta"]
    assert found["remote.origin.url"] == ["https://example.com/m.git"]


@pytest.mark.parametrize("text", [
    b"[include]\n\tpath = other\n", b"[includeIf \"gitdir:~/w/\"]\n\tpath = x\n", b"[a]\nk = \"quoted\"\n",
    b"[a]\nk = one \\\n two\n", b"[a.b]\nk = v\n", b"[a] k = v\n", b"k = v\n", b"[a]\nk # c\n",
])
def test_anything_past_the_subset_is_left_to_git(text: bytes) -> None:
    assert ours(text) is None


def test_the_whole_read_matches_git_in_a_repository(tmp_path: Path, hermetic: Path) -> None:
    """System, global and local files in git's order, then `git -c` settings."""
    repo = tmp_path / "r"
    git("init", "-q", str(repo), cwd=tmp_path)
    git("config", "memory.layout", "plain", cwd=repo)
    git("config", "--global", "memory.layout", "letta", cwd=repo)
    git("config", "--global", "--add", "memory.approvalTrailers", "Approved-by", cwd=repo)
    git("config", "remote.Origin.URL", "https://example.com/x", cwd=repo)
    env = dict(os.environ)
    found = gitconfig.read(str(repo / ".git"), env)
    assert found is not None and found == git_list(env, cwd=repo)
    assert found["memory.layout"] == ["letta", "plain"] and found["remote.Origin.url"] == ["https://example.com/x"]
    env["GIT_CONFIG_PARAMETERS"] = "'commit.gpgsign'='false' 'Memory.Sub.Key'='v w'"
    found = gitconfig.read(str(repo / ".git"), env)
    assert found is not None and found == git_list(env, cwd=repo)
    env["GIT_CONFIG_COUNT"], env["GIT_CONFIG_KEY_0"], env["GIT_CONFIG_VALUE_0"] = "1", "memory.layout", "x"
    found = gitconfig.read(str(repo / ".git"), env)
    assert found is not None and found == git_list(env, cwd=repo) and found["memory.layout"][-1] == "x"


EXEC_PATH = "/usr/lib/git-core"


@pytest.mark.skipif(not os.access(os.path.join(EXEC_PATH, "git"), os.X_OK),
                    reason="no distribution git in /usr/lib/git-core")
def test_the_system_settings_are_read_as_git_runs_a_subcommand(tmp_path: Path, hermetic: Path) -> None:
    """`git memory` runs with git's exec path first on PATH, so the git found there is
    /usr/lib/git-core/git: its system file (/etc/gitconfig) is read as git reads it."""
    repo = tmp_path / "r"
    git("init", "-q", str(repo), cwd=tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "GIT_CONFIG_NOSYSTEM"}
    env["PATH"] = EXEC_PATH + os.pathsep + env["PATH"]
    found = gitconfig.read(str(repo / ".git"), env)
    assert found is not None and found == git_list(env, cwd=repo)


@pytest.mark.parametrize("change", [
    {"GIT_DIR": "elsewhere"}, {"GIT_CONFIG_PARAMETERS": "'a.b=c'"}, {"GIT_CONFIG_NOSYSTEM": "maybe"},
    {"GIT_CONFIG_GLOBAL": ""}, {"GIT_CONFIG_NOSYSTEM": "0", "PATH": "/nowhere"},
])
def test_an_environment_it_cannot_follow_means_ask_git(tmp_path: Path, hermetic: Path, change: dict) -> None:
    repo = tmp_path / "r"
    git("init", "-q", str(repo), cwd=tmp_path)
    env = {**os.environ, **change}
    assert gitconfig.read(str(repo / ".git"), env) is None


def test_worktree_settings_are_left_to_git(tmp_path: Path, hermetic: Path) -> None:
    repo = tmp_path / "r"
    git("init", "-q", str(repo), cwd=tmp_path)
    git("config", "extensions.worktreeConfig", "true", cwd=repo)
    assert gitconfig.read(str(repo / ".git")) is None


@pytest.mark.parametrize("line", ["\tflag", "\tflag =", "\tflag = yes", "\tflag = No", "\tflag = on", "\tflag = 0",
                                  "\tflag = 1", "\tflag = TRUE", "\tflag = off"])
def test_a_boolean_reads_as_git_reads_it(tmp_path: Path, line: str) -> None:
    """`any_true` against `git config --bool`: a key with no `=` is true, an empty value false."""
    path = tmp_path / "config"
    path.write_bytes(f"[core]\n{line}\n".encode())
    found = ours(path.read_bytes())
    assert found is not None
    proc = subprocess.run(["git", "config", "--file", str(path), "--bool", "core.flag"], capture_output=True,
                          text=True)
    assert gitconfig.any_true(found, "core.flag") == (proc.stdout.strip() == "true"), proc.stdout
