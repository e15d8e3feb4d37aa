"""`git memory hooks install | status`: where hooks go, foreign hooks, chaining, and
whether the hooks will really run."""
from __future__ import annotations

import json
import os
import shlex
import sys
import time
from pathlib import Path

import pytest

from conftest import LIB, ROOT, git, head, memfile, memory, snapshot, write
from gitmemfs import hookmain
from gitmemfs.core import detach
from gitmemfs.gate import hooks

BAD = "no frontmatter\n"


def status(repo: Path) -> dict:
    proc = memory("hooks", "status", "--json", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def commit_bad(repo: Path, rel: str = "system/bad.md") -> str:
    """Stage a file without frontmatter and try to commit it: our hook must refuse."""
    write(repo, rel, BAD)
    git("add", "-A", cwd=repo)
    before = head(repo)
    proc = git("commit", "-q", "-m", "bad", cwd=repo, check=False)
    assert proc.returncode == 1, proc.stderr
    assert f"{rel}: missing frontmatter (must start with ---)" in proc.stderr
    assert head(repo) == before
    return proc.stderr


def foreign(path: Path, body: str = "exit 0") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def test_init_installs_hooks_that_run_our_interpreter(tmp_path: Path) -> None:
    proc = memory("init", str(tmp_path / "m"), cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("; hooks installed"), proc.stdout
    repo = tmp_path / "m"
    info = status(repo)
    assert info["installed"] and info["effective"] and info["problems"] == []
    assert info["hooks_dir"] == str(repo / ".git" / "hooks")
    assert set(info["hooks"]) == {"pre-commit", "pre-merge-commit", "post-commit"}
    text = (repo / ".git/hooks/pre-commit").read_text()
    assert "git-memfs-hook: installed (pre-commit)" in text
    assert f"py={shlex.quote(sys.executable)}\n" in text and str(LIB) in text
    assert text.startswith("#!/bin/sh\n"), "a few lines of sh, which can say when the Python is gone"
    assert os.access(repo / ".git/hooks/pre-commit", os.X_OK)
    commit_bad(repo)
    text_status = memory("hooks", cwd=repo).stdout
    assert "The memory checks run on every commit here." in text_status


def test_reinstall_is_idempotent(repo: Path) -> None:
    proc = memory("hooks", "install", "--json", cwd=repo)
    out = json.loads(proc.stdout)
    assert out["ok"] and out["written"] == [] and sorted(out["unchanged"]) == sorted(
        ["pre-commit", "pre-merge-commit", "post-commit"])


def test_foreign_hook_is_never_overwritten_without_force(repo: Path) -> None:
    hook = foreign(repo / ".git/hooks/pre-commit", f"echo theirs >> '{repo / '.git/theirs.log'}'")
    original = hook.read_text()
    (repo / ".git/hooks/post-commit").unlink()
    proc = memory("hooks", "install", cwd=repo)
    assert proc.returncode == 1
    assert "is not a git-memfs hook, and it is left as it is" in proc.stderr
    assert "rename it to pre-commit.local (our hook runs it after the memory checks)" in proc.stderr
    assert hook.read_text() == original
    assert not (repo / ".git/hooks/post-commit").exists(), "a refused install must change nothing"
    info = status(repo)
    assert not info["effective"] and info["hooks"]["pre-commit"]["state"] == "foreign"
    assert info["hooks"]["post-commit"]["state"] == "missing"

    proc = memory("hooks", "install", "--force", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert "Your previous pre-commit hook is now pre-commit.local; it runs after ours." in proc.stdout
    assert (repo / ".git/hooks/pre-commit.local").read_text() == original
    info = status(repo)
    assert info["effective"]
    assert info["hooks"]["pre-commit"]["chained"] == str(repo / ".git/hooks/pre-commit.local")
    commit_bad(repo)
    assert not (repo / ".git/theirs.log").exists(), "the chained hook runs only after our checks pass"
    git("reset", "-q", "--hard", cwd=repo)
    write(repo, "system/good.md", memfile("Good"))
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "good", cwd=repo)
    assert (repo / ".git/theirs.log").read_text() == "theirs\n"


def test_chained_hook_can_still_refuse_and_gets_arguments(repo: Path) -> None:
    foreign(repo / ".git/hooks/pre-commit.local", "echo 'local policy says no' >&2; exit 3")
    write(repo, "system/good.md", memfile("Good"))
    git("add", "-A", cwd=repo)
    before = snapshot(repo)
    proc = git("commit", "-q", "-m", "x", cwd=repo, check=False)
    assert proc.returncode == 1 and "local policy says no" in proc.stderr
    assert snapshot(repo) == before
    # Not executable: skipped with git's own kind of hint, as git would skip it.
    (repo / ".git/hooks/pre-commit.local").chmod(0o644)
    proc = git("commit", "-q", "-m", "x", cwd=repo, check=False)
    assert proc.returncode == 0 and "was ignored because it is not executable" in proc.stderr


def test_force_keeps_a_second_foreign_hook_when_local_exists(repo: Path) -> None:
    foreign(repo / ".git/hooks/post-commit.local", "exit 0")
    hook = foreign(repo / ".git/hooks/post-commit", "echo mine")
    proc = memory("hooks", "install", "--force", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    kept = [p for p in (repo / ".git/hooks").iterdir() if p.name.startswith("post-commit.replaced-")]
    assert len(kept) == 1 and kept[0].read_text() == "#!/bin/sh\necho mine\n"
    assert "it does not run: merge it into post-commit.local" in proc.stdout
    assert "git-memfs-hook" in hook.read_text()


def test_init_of_a_repo_with_foreign_hooks_leaves_them_and_says_so(tmp_path: Path) -> None:
    repo = tmp_path / "adopted"
    git("init", "-q", str(repo), cwd=tmp_path)
    foreign(repo / ".git/hooks/pre-commit")
    proc = memory("init", str(repo), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "hooks not installed: pre-commit already exists and is not ours" in proc.stdout
    assert (repo / ".git/hooks/pre-commit").read_text() == "#!/bin/sh\nexit 0\n"


def test_local_core_hooks_path_is_honoured(repo: Path) -> None:
    git("config", "core.hooksPath", "my-hooks", cwd=repo)  # relative: to the work tree
    info = status(repo)
    assert info["hooks_dir"] == str(repo / "my-hooks") and info["hooks_path"] == "my-hooks"
    assert info["hooks_path_scope"] == "local"
    assert not info["effective"]
    assert info["stray"] == [str(repo / ".git/hooks" / n) for n in ("pre-commit", "pre-merge-commit", "post-commit")]
    assert any("do not run: core.hooksPath points git at" in p for p in info["problems"])
    proc = memory("hooks", "install", cwd=repo)
    assert proc.returncode == 0 and str(repo / "my-hooks") in proc.stdout
    assert status(repo)["effective"]
    git("rm", "-rq", "--cached", "--ignore-unmatch", "my-hooks", cwd=repo)
    (repo / ".git/info").mkdir(exist_ok=True)
    (repo / ".git/info/exclude").write_text("my-hooks/\n")
    commit_bad(repo)


def test_global_core_hooks_path_is_not_taken_over(tmp_path: Path, hermetic: Path) -> None:
    shared = tmp_path / "shared-hooks"
    foreign(shared / "commit-msg")
    git("config", "--global", "core.hooksPath", str(shared), cwd=tmp_path)
    proc = memory("init", str(tmp_path / "m"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "hooks not installed: core.hooksPath is set in your global git config" in proc.stdout
    assert sorted(p.name for p in shared.iterdir()) == ["commit-msg"]
    proc = memory("hooks", "install", cwd=tmp_path / "m")
    assert proc.returncode == 1
    assert "a folder every repository of yours uses" in proc.stderr
    assert f"git config core.hooksPath {tmp_path / 'm' / '.git' / 'hooks'}" in proc.stderr
    assert memory("hooks", "install", "--force", cwd=tmp_path / "m").returncode == 0
    assert (shared / "pre-commit").exists()


def test_status_reports_hooks_that_will_not_run(repo: Path) -> None:
    hook = repo / ".git/hooks/pre-commit"
    hook.chmod(0o644)
    info = status(repo)
    assert info["installed"] and not info["effective"]
    assert info["hooks"]["pre-commit"]["state"] == "not_executable"
    text = memory("hooks", "status", cwd=repo).stdout
    assert "not executable, so git ignores it" in text and "will not all run" in text
    hook.chmod(0o755)
    hook.write_text(hook.read_text().replace(sys.executable, "/nonexistent/python3"))
    info = status(repo)
    assert info["hooks"]["pre-commit"]["state"] == "broken"
    assert "its interpreter /nonexistent/python3 is gone" in info["hooks"]["pre-commit"]["detail"]
    stderr = commit_bad_fails_closed(repo)  # the hook says why, and refuses the commit
    assert "error: git-memfs pre-commit hook refused the commit: the git-memfs that installed it is gone " \
           "(/nonexistent/python3," in stderr, stderr
    assert memory("hooks", "install", cwd=repo).returncode == 0
    assert status(repo)["effective"]


def commit_bad_fails_closed(repo: Path) -> str:
    write(repo, "system/good.md", memfile("Good"))
    git("add", "-A", cwd=repo)
    before = head(repo)
    proc = git("commit", "-q", "-m", "x", cwd=repo, check=False)
    assert proc.returncode == 1 and head(repo) == before
    return proc.stderr


def test_linked_worktree_uses_the_shared_hooks(repo: Path, tmp_path: Path) -> None:
    wt = tmp_path / "wt"
    git("worktree", "add", "-q", "-b", "side", str(wt), cwd=repo)
    info = status(wt)
    assert info["hooks_dir"] == str(repo / ".git/hooks") and info["effective"]
    commit_bad(wt)


def test_portable_githooks_via_core_hooks_path(repo: Path) -> None:
    githooks = ROOT / "githooks"
    git("config", "core.hooksPath", str(githooks), cwd=repo)
    info = status(repo)
    assert info["effective"]
    assert info["hooks"]["pre-commit"]["detail"] == "installed (portable script)"
    proc = memory("hooks", "install", "--json", cwd=repo)
    assert json.loads(proc.stdout)["written"] == [], "install must leave a checkout's githooks/ alone"
    commit_bad(repo)


def test_portable_script_boots_like_installed_hooks() -> None:
    text = (ROOT / "githooks" / "memfs-hook").read_text()
    assert "git-memfs-hook: portable" in text
    assert detach.BOOT.replace("'", '"') in text
    for name in ("pre-commit", "pre-merge-commit", "post-commit", "pre-receive", "update"):
        link = ROOT / "githooks" / name
        assert link.is_symlink() and os.readlink(link) == "memfs-hook"
        assert name in hookmain.HANDLERS


@pytest.mark.parametrize("args", [("hooks", "install"), ("hooks", "status"), ("mirror", "status")])
def test_hooks_and_mirror_need_a_memory_repo(git_repo, args: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    plain = git_repo.workspace
    proc = memory(*args, cwd=plain)
    assert proc.returncode == 4
    assert "is not a memory repository; run git memory init" in proc.stderr
    assert not (plain / ".git/hooks/pre-commit").exists()


def test_post_commit_runs_local_hook_with_and_without_a_mirror(repo: Path, tmp_path: Path) -> None:
    log = tmp_path / "local.log"
    foreign(repo / ".git/hooks/post-commit.local", f"echo \"$#\" >> '{log}'")
    write(repo, "system/a.md", memfile("A"))
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "no mirror: the script's shortcut runs it", cwd=repo)
    git("init", "-q", "--bare", str(tmp_path / "m.git"), cwd=tmp_path)
    git("config", "memory.mirrorUrl", str(tmp_path / "m.git"), cwd=repo)
    write(repo, "system/b.md", memfile("B"))
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "mirror: Python runs it", cwd=repo)
    assert log.read_text() == "0\n0\n"


def test_post_commit_shortcut_knows_every_mirror_key() -> None:
    from gitmemfs.remote import mirror

    for key in mirror.URL_KEYS:
        section, _, rest = key.partition(".")
        sub, _, name = rest.rpartition(".")
        canonical = ".".join(filter(None, [section.lower(), sub, name.lower()]))
        assert canonical in hooks.POST_COMMIT_KEYS


def test_a_gate_installed_as_a_python_script_still_guards(mem: Path) -> None:
    """Until this release a gate was a Python script git started directly (no shell);
    repositories that have one keep it working without a reinstall."""
    site = os.path.dirname(os.path.dirname(__import__("yaml").__file__))
    text = (ROOT / "tests/fixtures/hooks-0.3-python-gate/pre-commit").read_text()
    hook = mem / ".git/hooks/pre-commit"
    hook.write_text(text.replace("@PYTHON@", sys.executable).replace("@LIB@", f"{LIB}:{site}"))
    assert hooks.status(mem)["hooks"]["pre-commit"]["state"] == "installed"
    write(mem, "system/rules.md", memfile("Ground rules", "Share everything.\n", "read_only: true"))
    before = snapshot(mem)
    proc = git("commit", "-qam", "loosen the rules", cwd=mem, check=False)
    assert proc.returncode == 1 and "system/rules.md: file is read_only and cannot be modified" in proc.stderr
    assert snapshot(mem) == before


def test_hooks_installed_by_the_first_release_still_guard_and_mirror(mem: Path, tmp_path: Path) -> None:
    """Hooks written by 0.1.0 (before the package layout moved into subpackages) name
    `gitmemfs.hookmain`, which stays put: such a repository keeps validating commits
    and mirroring them without a reinstall."""
    site = os.path.dirname(os.path.dirname(__import__("yaml").__file__))
    for name in ("pre-commit", "post-commit"):
        text = (ROOT / "tests/fixtures/hooks-0.1.0" / name).read_text()
        hook = mem / ".git/hooks" / name
        hook.write_text(text.replace("@PYTHON@", sys.executable).replace("@LIB@", f"{LIB}:{site}"))
        hook.chmod(0o755)
    info = json.loads(memory("hooks", "status", "--json", cwd=mem).stdout)
    assert info["hooks"]["pre-commit"]["state"] == "installed", info

    write(mem, "system/rules.md", memfile("Ground rules", "Share everything.\n", "read_only: true"))
    before = snapshot(mem)
    proc = git("commit", "-qam", "loosen the rules", cwd=mem, check=False)
    assert proc.returncode == 1 and "system/rules.md: file is read_only and cannot be modified" in proc.stderr
    assert snapshot(mem) == before

    bare = tmp_path / "mirror.git"
    git("init", "-q", "--bare", str(bare), cwd=tmp_path)
    git("checkout", "--", "system/rules.md", cwd=mem)
    git("config", "memory.mirrorUrl", str(bare), cwd=mem)
    write(mem, "system/contacts.md", memfile("People I know", "Sarah: +1-555-0111\n"))
    git("commit", "-qam", "Sarah's new number", cwd=mem)
    deadline = time.monotonic() + 30
    while git("rev-parse", "-q", "--verify", "refs/heads/main", cwd=bare, check=False).stdout.strip() != head(mem):
        assert time.monotonic() < deadline, "the old post-commit hook never mirrored the commit"
        time.sleep(0.05)
