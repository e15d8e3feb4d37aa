"""Edits commit without starting our own hooks (the write path has validated the
exact change), yet every gate still holds: chained .local hooks run and can refuse,
the post-commit work (mirror, dream trigger) still happens, and any other hook in
the folder sends the commit through git's hooks as before."""
from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from conftest import git, head, memory, snapshot
from gitmemfs.core import hookless
from gitmemfs.gate import hooks as gate_hooks


def hook(repo: Path, name: str, body: str) -> Path:
    path = repo / ".git" / "hooks" / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def trace(repo: Path) -> Path:
    """A pre-commit.local that records it ran (and the index it was shown)."""
    log = repo / ".git" / "trace.log"
    hook(repo, "pre-commit.local", f"echo pre >> '{log}'\ngit diff --cached --name-only >> '{log}'\n")
    return log


def edit(mem: Path, n: int = 0, **kw) -> object:
    return memory("str_replace", "system/contacts.md", "Sarah" if n == 0 else f"Sarah{n}", f"Sarah{n + 1}",
                  "-m", f"edit {n}", cwd=mem, **kw)


def mark_when_started(hook_path: Path, marker: Path) -> None:
    """Make our installed hook (a shell script) touch `marker` when it starts."""
    text = hook_path.read_text()
    assert text.startswith("#!/bin/sh\n") and "\nlib=" in text
    hook_path.write_text(text.replace("\nlib=", f"\n: > {shlex.quote(str(marker))}\nlib=", 1))


def test_an_edit_starts_none_of_our_hooks(mem: Path) -> None:
    """Our pre-commit, were it started, would leave a mark: it is not started."""
    assert hookless.plan(hookless_repo(mem)) is not None
    marker = mem / ".git" / "ran"
    pre = mem / ".git" / "hooks" / "pre-commit"
    mark_when_started(pre, marker)
    assert edit(mem).returncode == 0
    assert not marker.exists()
    git("commit", "-q", "--allow-empty", "-m", "plain", cwd=mem)  # plain git still runs it
    assert marker.exists()


def test_a_chained_pre_commit_local_still_runs_and_refuses(mem: Path) -> None:
    log = trace(mem)
    assert edit(mem).returncode == 0
    assert log.read_text().splitlines() == ["pre", "system/contacts.md"], "it saw the change staged"
    hook(mem, "pre-commit.local", "echo 'policy: no edits on Fridays' >&2\nexit 1\n")
    before = snapshot(mem)
    for args in (["str_replace", "system/contacts.md", "Tom", "Thomas"],
                 ["create", "notes/new/deep.md", "x", "-d", "d"],
                 ["delete", "reference/history/a.md"]):
        proc = memory(*args, "-m", "blocked", cwd=mem)
        assert proc.returncode == 1
        assert "commit failed and the change was rolled back" in proc.stderr
        assert "policy: no edits on Fridays" in proc.stderr
        assert snapshot(mem) == before
    assert not (mem / "notes").exists()


def test_a_chained_post_commit_local_runs_after_the_edit(mem: Path) -> None:
    log = mem / ".git" / "post.log"
    hook(mem, "post-commit.local", f"git rev-parse HEAD >> '{log}'\n")
    assert edit(mem).returncode == 0
    assert log.read_text().split() == [head(mem)]


def test_with_a_mirror_configured_the_post_commit_hook_itself_runs(mem: Path) -> None:
    """Our post-commit (mirror push, dream trigger) and, through it, post-commit.local."""
    log = mem / ".git" / "post.log"
    hook(mem, "post-commit.local", f"echo local >> '{log}'\n")
    git("config", "dream.trigger", "off", cwd=mem)  # a post-commit key: the hook has work
    post = mem / ".git" / "hooks" / "post-commit"
    post.write_text(post.read_text().replace("py=", f"echo ours >> '{log}'\npy=", 1))
    assert edit(mem).returncode == 0
    assert log.read_text().split() == ["ours", "local"]


@pytest.mark.parametrize("name", ["commit-msg", "prepare-commit-msg", "reference-transaction", "pre-commit"])
def test_any_other_hook_sends_the_commit_through_git(mem: Path, name: str) -> None:
    """A hook we do not run ourselves (or a foreign pre-commit) means git runs them all."""
    log = mem / ".git" / "other.log"
    if name == "pre-commit":
        (mem / ".git" / "hooks" / "pre-commit").unlink()
    hook(mem, name, f"echo {name} >> '{log}'\nexit 0\n")
    assert hookless.plan(hookless_repo(mem)) is None
    assert edit(mem).returncode == 0
    assert name in log.read_text()


def config_hook(mem: Path, event: str, log: Path, *, where: str = "--local") -> None:
    """A hook defined in config (git >= 2.54), as a person would set it."""
    git("config", where, "hook.audit.command", f"echo {event} >> '{log}'", cwd=mem)
    git("config", where, "--add", "hook.audit.event", event, cwd=mem)


@pytest.mark.parametrize("event", ["pre-commit", "commit-msg", "post-commit", "reference-transaction",
                                   "post-index-change"])
@pytest.mark.parametrize("where", ["--local", "--global"])
def test_a_hook_defined_in_config_sends_the_commit_through_git(mem: Path, event: str, where: str) -> None:
    """Whatever git would run on a commit from config, the edit lets git run: the
    commit goes through `git commit` with hooks (our pre-commit is started too).
    The installed git need not know config hooks for this to hold."""
    log = mem / ".git" / "config-hook.log"
    git("config", "--local", "hook.other.event", "pre-push", cwd=mem)  # not on commit: no matter
    config_hook(mem, event, log, where=where)
    assert hookless.configured_hooks(hookless_repo(mem)) == [event]
    assert hookless.plan(hookless_repo(mem)) is None
    marker = mem / ".git" / "ran"
    mark_when_started(mem / ".git" / "hooks" / "pre-commit", marker)
    assert edit(mem).returncode == 0
    assert marker.exists(), "git ran the hooks"


def test_config_hooks_are_seen_when_git_itself_reads_the_config(mem: Path) -> None:
    """An include makes core/gitfiles/gitconfig.py unsure: the settings then come from
    `git config --list`, and the config hook is seen there too."""
    extra = mem / ".git" / "extra.config"
    extra.write_text('[hook "audit"]\n\tevent = commit-msg\n\tcommand = true\n')
    git("config", "include.path", str(extra), cwd=mem)
    assert hookless.plan(hookless_repo(mem)) is None


def test_hooks_defined_in_config_for_other_events_change_nothing(mem: Path) -> None:
    config_hook(mem, "pre-push", mem / ".git" / "log")
    git("config", "hook.audit.command", "true", cwd=mem)  # a command with no event runs nowhere
    assert hookless.configured_hooks(hookless_repo(mem)) == []
    assert hookless.plan(hookless_repo(mem)) is not None


def test_the_escape_hatch_runs_git_hooks(mem: Path) -> None:
    marker = mem / ".git" / "ran"
    pre = mem / ".git" / "hooks" / "pre-commit"
    mark_when_started(pre, marker)
    assert edit(mem, env={"GIT_MEMFS_COMMIT_HOOKS": "git"}).returncode == 0
    assert marker.exists()


def test_the_rules_still_refuse_a_bad_edit(mem: Path) -> None:
    before = snapshot(mem)
    proc = memory("str_replace", "system/rules.md", "Never", "Always", "-m", "x", cwd=mem)
    assert proc.returncode == 1 and "read_only" in proc.stderr
    assert snapshot(mem) == before


def test_constants_agree_with_the_gate() -> None:
    assert hookless.MARKER.decode() == gate_hooks.MARKER
    assert hookless.POST_COMMIT_KEYS == tuple(k.lower() for k in gate_hooks.POST_COMMIT_KEYS)
    assert set(hookless.OURS) == set(gate_hooks.CLIENT_HOOKS)


def hookless_repo(path: Path):
    from gitmemfs.core.repo import open_repo
    return open_repo(str(path))


if sys.platform != "linux":  # pragma: no cover
    pytestmark = pytest.mark.skip("hook scripts are POSIX sh")


# -- global options: the same on all three commands -------------------------------------------

def test_view_of_a_folder_in_json_lists_its_files(mem: Path) -> None:
    import json
    out = json.loads(memory("view", "reference/history", "--json", cwd=mem).stdout)
    assert out["kind"] == "folder"
    assert out["files"] == [{"path": "reference/history/a.md", "description": "History A"},
                            {"path": "reference/history/b.md", "description": "History B"}]


def test_git_dream_takes_q_and_json_without_progress(mem: Path, tmp_path: Path) -> None:
    import json

    from conftest import run
    proc = run("dream", "-q", "--agent", "builtin:noop", "--no-sandbox", cwd=mem)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "" and proc.stderr == ""
    proc = run("dream", "--json", "--agent", "builtin:noop", "--no-sandbox", cwd=mem)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["ok"] and proc.stderr == ""
    elsewhere = run("dream", "--memory-dir", str(mem), "-q", "list", cwd=tmp_path)
    assert elsewhere.returncode == 0 and elsewhere.stdout == ""


# -- unknown commands ------------------------------------------------------------------------

@pytest.mark.parametrize("cmd,argv,expect", [
    ("memory", ["strreplace", "x"], "unknown command 'strreplace'; did you mean 'str_replace'?"),
    ("memory", ["creat", "x"], "did you mean 'create'"),  # (or 'redact', as close)
    ("memory", ["grep", "x"], "git memory has no grep: use git memory search 'text'"),
    # plain `git revert` commits without the memory rules (it removed a read_only file)
    ("memory", ["revert", "HEAD"], "git memory has no revert: use git memory undo COMMIT"),
    ("dream", ["shwo", "1"], "unknown command 'shwo'; did you mean 'show'?"),
    ("memory-patch", ["-m", "r", "--jsn", "-"], "unrecognized arguments: --jsn"),
])
def test_unknown_commands_suggest_the_closest_or_plain_git(repo: Path, cmd: str, argv: list[str],
                                                           expect: str) -> None:
    from conftest import run
    proc = run(cmd, *argv, cwd=repo)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and expect in proc.stderr, proc.stderr
    assert "-h)" in proc.stderr


def test_writes_are_durable_unless_memory_durable_is_false(mem: Path) -> None:
    from gitmemfs.core import durable
    assert git("config", "core.fsync", cwd=mem).stdout.strip() == "committed,index"  # init set it
    assert durable.git_args(hookless_repo(mem).config) == []  # so the writer need not
    git("config", "--unset", "core.fsync", cwd=mem)  # a memory made before issue 36
    git("config", "--unset", "core.fsyncMethod", cwd=mem)
    repo = hookless_repo(mem)
    assert repo.durable and durable.git_args(repo.config) == ["-c", "core.fsync=committed,index",
                                                              "-c", "core.fsyncMethod=fsync"]
    git("config", "core.fsync", "all", cwd=mem)  # a person's stronger setting stays
    assert "core.fsync=committed,index" not in durable.git_args(hookless_repo(mem).config)
    git("config", "memory.durable", "false", cwd=mem)
    assert not hookless_repo(mem).durable and durable.git_args(hookless_repo(mem).config) == []
    assert edit(mem).returncode == 0  # and the plain path still edits


def test_a_failing_commit_of_a_tracked_file_reports_git_not_no_effect(mem: Path, tmp_path: Path) -> None:
    """Without `git add` first, a commit that fails for git's own reasons (no identity)
    must still say why, and roll back."""
    empty = tmp_path / "empty.gitconfig"
    empty.write_text("")
    before = snapshot(mem)
    proc = memory("str_replace", "system/contacts.md", "Tom", "Thomas", "-m", "m", cwd=mem,
                  env={"GIT_CONFIG_GLOBAL": str(empty), "EMAIL": "", "GIT_AUTHOR_EMAIL": ""})
    if proc.returncode == 0:
        pytest.skip("git found an identity from the system (hostname/EMAIL)")
    assert "set AGENT_ID" in proc.stderr and "no effective changes" not in proc.stderr
    assert snapshot(mem) == before


def _started(log: Path) -> list[str]:
    return [line for line in (log.read_text() if log.exists() else "").splitlines()
            if " start " in line and "maintenance run --auto" in line]


def _loose_in_17(repo: Path, count: int) -> None:
    """Write `count` loose blobs whose ids start with 17: git's sample of the loose objects."""
    import hashlib

    i = written = 0
    while written < count:
        data = f"filler {i}\n"
        i += 1
        if hashlib.sha1(f"blob {len(data)}\0{data}".encode()).hexdigest().startswith("17"):
            git("hash-object", "-w", "--stdin", input=data, cwd=repo)
            written += 1


def test_git_housekeeping_still_follows_an_edit(mem: Path, tmp_path: Path) -> None:
    """git runs `maintenance run --auto` after a commit; the edit starts it detached
    (in its own session, not waited for, not holding the writer lock), and git
    decides there is work: with more loose objects than gc.auto allows, it gathers them."""
    import os
    import time

    git("config", "gc.auto", "1", cwd=mem)
    _loose_in_17(mem, 2)
    log = tmp_path / "trace2.log"
    env = {**os.environ, "GIT_TRACE2": str(log)}
    assert edit(mem, env=env).returncode == 0
    deadline = time.monotonic() + 30
    while not _started(log) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _started(log), "git's housekeeping did not run after the edit"
    assert edit(mem, 1).returncode == 0  # and the next edit is not held up by it
    while not any("child_start" in line and " gc " in line for line in log.read_text().splitlines()):
        assert time.monotonic() < deadline, "git found no work for its gc"
        time.sleep(0.05)


def test_maintenance_auto_false_is_honoured(mem: Path, tmp_path: Path) -> None:
    import os
    import time

    git("config", "maintenance.auto", "false", cwd=mem)
    git("config", "gc.auto", "1", cwd=mem)
    _loose_in_17(mem, 2)
    log = tmp_path / "trace2.log"
    assert edit(mem, env={**os.environ, "GIT_TRACE2": str(log)}).returncode == 0
    time.sleep(1)
    assert _started(log) == []


def test_what_another_process_stages_meanwhile_is_not_committed_unchecked(mem: Path) -> None:
    """With our hooks off, the commit takes only the edit's paths: a file staged while
    the edit runs (here by pre-commit.local, at the last moment) stays out of it."""
    hook(mem, "pre-commit.local", "printf 'no frontmatter\\n' > system/sneaky.md && git add system/sneaky.md\n")
    assert edit(mem).returncode == 0
    assert "system/sneaky.md" not in git("ls-tree", "-r", "--name-only", "HEAD", cwd=mem).stdout
    assert "system/contacts.md" in git("show", "--name-only", "--format=", "HEAD", cwd=mem).stdout
