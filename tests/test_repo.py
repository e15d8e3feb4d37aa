"""Finding the memory repo, init, and the writer lock."""
from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

from conftest import git, head, memory, snapshot
from gitmemfs.admin import init as init_mod


def test_memory_dir_precedence(repo: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    assert memory("init", str(other), cwd=tmp_path).returncode == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    def where(*args: str, env: dict[str, str] | None = None) -> str:
        proc = memory(*args, "--json", "view", "system", cwd=elsewhere, env=env)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    assert "system/persona.md" in where("--memory-dir", str(repo))
    assert "system/persona.md" in where(env={"MEMORY_DIR": str(repo)})
    assert "system/persona.md" in where(env={"LETTA_MEMORY_DIR": str(repo)})
    # --memory-dir beats the environment.
    proc = memory("--memory-dir", str(repo), "create", "notes/a.md", "x", "-d", "d", "-m", "m",
                  cwd=elsewhere, env={"MEMORY_DIR": str(other)})
    assert proc.returncode == 0 and (repo / "notes/a.md").exists() and not (other / "notes").exists()
    # MEMORY_DIR beats LETTA_MEMORY_DIR.
    proc = memory("create", "notes/b.md", "x", "-d", "d", "-m", "m", cwd=elsewhere,
                  env={"MEMORY_DIR": str(repo), "LETTA_MEMORY_DIR": str(other)})
    assert proc.returncode == 0 and (repo / "notes/b.md").exists()


def test_agent_id_maps_to_letta_home(tmp_path: Path) -> None:
    home = tmp_path / "lh"
    target = home / "agents" / "agent-7" / "memory"
    proc = memory("init", cwd=tmp_path, env={"LETTA_HOME": str(home), "LETTA_AGENT_ID": "agent-7"})
    assert proc.returncode == 0, proc.stderr
    assert (target / "system/persona.md").exists()
    proc = memory("create", "notes/x.md", "x", "-d", "d", "-m", "as agent", cwd=tmp_path,
                  env={"LETTA_HOME": str(home), "LETTA_AGENT_ID": "agent-7"})
    assert proc.returncode == 0, proc.stderr
    assert git("log", "-1", "--format=%ae", cwd=target).stdout.strip() == "agent-7@letta.com"
    # Any other agent id: a reserved domain, not Letta's.
    proc = memory("create", "notes/y.md", "y", "-d", "d", "-m", "as agent", cwd=tmp_path,
                  env={"LETTA_HOME": str(home), "AGENT_ID": "agent-7"})
    assert proc.returncode == 0, proc.stderr
    assert git("log", "-1", "--format=%ae", cwd=target).stdout.strip() == "agent-7@agents.invalid"


def test_agent_id_elsewhere_says_which_repository_and_how_to_pick_the_other(repo: Path, tmp_path: Path) -> None:
    env = {"LETTA_HOME": str(tmp_path / "lh"), "AGENT_ID": "bot-1"}
    proc = memory("view", "system/persona.md", cwd=repo / "system", env=env)
    assert proc.returncode == 4
    assert f"memory directory does not exist: {tmp_path / 'lh' / 'agents' / 'bot-1' / 'memory'}" in proc.stderr
    assert "AGENT_ID=bot-1 chooses that folder; the current directory is in" in proc.stderr
    assert f"pass --memory-dir {repo} or set MEMORY_DIR" in proc.stderr
    # When the agent's repository exists, the command works there and says so.
    assert memory("init", cwd=tmp_path, env=env).returncode == 0
    proc = memory("view", "system/persona.md", cwd=repo, env=env)
    assert proc.returncode == 0
    assert proc.stderr.startswith(f"note: using {tmp_path / 'lh' / 'agents' / 'bot-1' / 'memory'}.")
    assert memory("--json", "view", "system/persona.md", cwd=repo, env=env).stderr == ""


def test_git_dash_c_and_subdirectories(repo: Path, tmp_path: Path) -> None:
    proc = git("-C", str(repo), "memory", "create", "notes/c.md", "x", "-d", "d", "-m", "via -C", cwd=tmp_path)
    assert proc.returncode == 0 and (repo / "notes/c.md").exists()
    proc = memory("view", "system/human.md", cwd=repo / "system")
    assert proc.returncode == 0 and "description:" in proc.stdout


def test_init_marks_seeds_and_never_reseeds(repo: Path) -> None:
    assert git("config", "memory.repo", cwd=repo).stdout.strip() == "true"
    assert git("config", "memory.checkScope", cwd=repo).stdout.strip() == "all"
    assert git("symbolic-ref", "--short", "HEAD", cwd=repo).stdout.strip() == "main"
    assert git("rev-list", "--count", "HEAD", cwd=repo).stdout.strip() == "1"
    assert git("log", "-1", "--format=%s", cwd=repo).stdout.strip() == "Initialize memory repository"
    (repo / "system/persona.md").unlink()
    git("commit", "-qam", "remove persona", cwd=repo)
    before = snapshot(repo)
    proc = memory("init", str(repo), "--agent-id", "agent-1", cwd=repo)
    assert proc.returncode == 0 and "Reinitialized existing memory repository" in proc.stdout
    assert snapshot(repo) == before
    assert git("config", "memory.agentId", cwd=repo).stdout.strip() == "agent-1"


def test_init_adopts_a_plain_repo_and_refuses_a_non_empty_folder(tmp_path: Path, git_repo) -> None:  # type: ignore[no-untyped-def]
    plain = git_repo.workspace
    proc = memory("init", str(plain), "--remote", "https://example.com/mem.git", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert git("remote", "get-url", "origin", cwd=plain).stdout.strip() == "https://example.com/mem.git"
    assert (plain / "system/human.md").exists()
    full = tmp_path / "full"
    full.mkdir()
    (full / "keep.txt").write_text("mine")
    proc = memory("init", str(full), cwd=tmp_path)
    assert proc.returncode == 1 and "is not empty and not a git repository" in proc.stderr
    assert sorted(os.listdir(full)) == ["keep.txt"]


def test_seed_files_pass_the_rules() -> None:
    from gitmemfs.core import rules

    for rel, text in init_mod.seeds().items():
        assert rules.check_change(rel, None, text.encode(), scope="all") == []


def test_busy_writer_lock_exits_3(mem: Path) -> None:
    before = snapshot(mem)
    with open(mem / ".git/memory.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        start = time.monotonic()
        proc = memory("create", "notes/x.md", "x", "-d", "d", "-m", "m", cwd=mem,
                      env={"GIT_MEMORY_LOCK_TIMEOUT": "0.5"})
        waited = time.monotonic() - start
    assert proc.returncode == 3 and "another git memory writer" in proc.stderr
    assert waited >= 0.5
    assert snapshot(mem) == before
    assert head(mem) == before[0]


def test_init_with_remote_tracks_it_so_sync_pushes(tmp_path: Path) -> None:
    bare = tmp_path / "remote.git"
    git("init", "-q", "--bare", str(bare), cwd=tmp_path)
    mem = tmp_path / "mem"
    assert memory("init", str(mem), "--remote", str(bare), cwd=tmp_path).returncode == 0
    assert git("rev-parse", "--abbrev-ref", "main@{upstream}", cwd=mem, check=False).returncode != 0  # not fetched yet
    proc = memory("sync", cwd=mem)
    assert proc.returncode == 0, proc.stderr
    assert git("rev-parse", "main", cwd=bare).stdout == git("rev-parse", "HEAD", cwd=mem).stdout
