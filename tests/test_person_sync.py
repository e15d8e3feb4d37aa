"""Issue 34: `git memory sync`, `clone`, `status` and the mirror's push run no program
the memory's own config names, and no hook an agent planted. An agent with a shell
plants each kind (a credential helper, an ssh command behind a URL rewrite, `ext::`,
fsmonitor, a filter, the pack programs, hooks); the person's real command against a
real smart-HTTP server (or a bare repository on a path, where git starts the pack
programs) runs none of them (the marker each would write stays absent), refuses with
one `error:` line naming the key, and works again once the key is gone. The person's
own config (a global credential helper, a global URL rewrite, an allowed value) works."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Callable

import pytest
from gitserver import TOKEN, GitServer, quick_clone, seed, server_fixture, token_env  # noqa: F401
from trustkit import planted

from conftest import git, head, memory


def plant_hook(repo: Path, tmp: Path, name: str) -> Path:
    """A hook an agent left in the memory's hooks folder; returns its marker."""
    script, marker = planted(tmp, name, "exit 0")
    folder = repo / ".git" / "hooks"
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(script.read_text())
    (folder / name).chmod(0o755)
    return marker


def sync(repo: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return memory("sync", cwd=repo, env=token_env() if env is None else env)


def refused(proc: subprocess.CompletedProcess[str], key: str) -> None:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 1 and len(lines) == 1, proc.stdout + proc.stderr
    assert lines[0].startswith("error: ") and key.lower() in lines[0].lower(), lines[0]
    assert "git config --unset-all" in lines[0] and "memory.allowConfig" in lines[0], lines[0]


def remote_moves(server: GitServer, tmp: Path) -> str:
    """Another machine pushes a change to the file the person's clone has."""
    other = quick_clone(server, tmp, "other")
    proc = memory("create", "notes/other.md", "from elsewhere", "-d", "Other", "-m", "other", cwd=other)
    assert proc.returncode == 0, proc.stderr
    assert sync(other).returncode == 0
    return head(other)


@pytest.fixture
def mine(server: GitServer, tmp_path: Path) -> Path:
    """The person's clone of the memory on the server, one local commit ahead."""
    seed(server, tmp_path)
    repo = quick_clone(server, tmp_path, "mine")
    proc = memory("create", "notes/mine.md", "mine", "-d", "Mine", "-m", "mine", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    return repo


def _helper(repo: Path, script: Path, url: str) -> tuple[str, str]:
    git("config", "credential.helper", str(script), cwd=repo)
    return "credential.helper", ""


def _url_helper(repo: Path, script: Path, url: str) -> tuple[str, str]:
    git("config", f"credential.{url.rsplit('/', 1)[0]}.helper", str(script), cwd=repo)
    return "helper", ""


def _ssh(repo: Path, script: Path, url: str) -> tuple[str, str]:
    git("config", "core.sshCommand", str(script), cwd=repo)
    git("config", "url.ssh://agent.invalid/x.git.insteadOf", url, cwd=repo)
    return "core.sshcommand", token_env()["GIT_MEMORY_TOKEN"]


def _ext(repo: Path, script: Path, url: str) -> tuple[str, str]:
    git("config", f"url.ext::{script}.insteadOf", url, cwd=repo)
    git("config", "protocol.ext.allow", "always", cwd=repo)
    return "insteadof", TOKEN


def _fsmonitor(repo: Path, script: Path, url: str) -> tuple[str, str]:
    git("config", "core.fsmonitor", str(script), cwd=repo)
    return "core.fsmonitor", TOKEN


def _included(repo: Path, script: Path, url: str) -> tuple[str, str]:
    extra = repo.parent / "agent.cfg"
    extra.write_text(f"[core]\n\tfsmonitor = {script}\n")
    git("config", "include.path", str(extra), cwd=repo)
    return "core.fsmonitor", TOKEN


PLANTS: dict[str, Callable[[Path, Path, str], tuple[str, str]]] = {
    "credential.helper": _helper, "credential.<url>.helper": _url_helper, "core.sshCommand": _ssh,
    "url.<ext>.insteadOf": _ext, "core.fsmonitor": _fsmonitor, "include.path": _included}


@pytest.mark.parametrize("kind", sorted(PLANTS))
def test_a_planted_program_does_not_run_in_sync(server: GitServer, mine: Path, tmp_path: Path, kind: str) -> None:
    url = server.url()
    script, marker = planted(tmp_path, "agent")
    key, token = PLANTS[kind](mine, script, url)
    before, remote = head(mine), git("rev-parse", "main", cwd=server.root / "memory.git").stdout
    env = {"GIT_MEMORY_TOKEN": token} if token else {}  # without a token git asks the helpers
    proc = sync(mine, env)
    assert not marker.exists(), proc.stdout + proc.stderr
    refused(proc, key)
    assert head(mine) == before and git("rev-parse", "main", cwd=server.root / "memory.git").stdout == remote
    # The person looks, removes what the agent left, and the same sync pushes.
    for name in ("credential.helper", f"credential.{url.rsplit('/', 1)[0]}.helper", "core.sshCommand",
                 "url.ssh://agent.invalid/x.git.insteadOf", f"url.ext::{script}.insteadOf", "protocol.ext.allow",
                 "core.fsmonitor", "include.path"):
        git("config", "--unset-all", name, cwd=mine, check=False)
    proc = sync(mine)
    assert proc.returncode == 0, proc.stderr
    assert git("rev-parse", "main", cwd=server.root / "memory.git").stdout.strip() == head(mine)
    assert not marker.exists()


def test_a_planted_filter_does_not_run_when_sync_pulls(server: GitServer, tmp_path: Path) -> None:
    seed(server, tmp_path)
    mine = quick_clone(server, tmp_path, "mine")
    script, marker = planted(tmp_path, "smudge", "exec cat")
    (mine / ".git" / "info").mkdir(exist_ok=True)
    (mine / ".git" / "info" / "attributes").write_text("*.md filter=agent\n")
    git("config", "filter.agent.smudge", str(script), cwd=mine)
    git("config", "filter.agent.clean", str(script), cwd=mine)
    theirs = remote_moves(server, tmp_path)
    proc = sync(mine)
    assert not marker.exists(), proc.stdout + proc.stderr
    refused(proc, "filter.agent.")
    git("config", "--remove-section", "filter.agent", cwd=mine)
    proc = sync(mine)
    assert proc.returncode == 0 and head(mine) == theirs, proc.stderr


def test_planted_hooks_do_not_run_in_sync(server: GitServer, mine: Path, tmp_path: Path) -> None:
    """Fetch (reference-transaction), a rebase onto the remote (pre-rebase,
    post-checkout, post-rewrite) and the push (pre-push): none of the agent's hooks runs,
    and the sync still rebases and pushes."""
    remote_moves(server, tmp_path)
    markers = [plant_hook(mine, tmp_path, name) for name in (
        "reference-transaction", "pre-rebase", "post-checkout", "post-rewrite", "post-merge", "pre-push",
        "prepare-commit-msg", "pre-auto-gc")]
    proc = memory("--json", "sync", cwd=mine, env=token_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["state"] == "pushed"
    assert [m.name for m in markers if m.exists()] == []
    assert git("rev-parse", "main", cwd=server.root / "memory.git").stdout.strip() == head(mine)


def test_the_persons_own_helper_and_url_rewrite_still_work(server: GitServer, mine: Path, tmp_path: Path) -> None:
    """A credential helper and a URL rewrite in the person's global config: sync uses
    both (no token in the environment: the helper answers)."""
    helper, marker = planted(tmp_path, "mine", f"echo username=letta\necho password={TOKEN}")
    git("config", "--global", "credential.helper", str(helper), cwd=tmp_path)
    base = server.url().rsplit("/", 1)[0]
    git("config", "--global", f"url.{base}/.insteadOf", "https://memory.example/", cwd=tmp_path)
    git("remote", "set-url", "origin", "https://memory.example/memory.git", cwd=mine)
    proc = sync(mine, {})
    assert proc.returncode == 0, proc.stderr
    assert marker.exists(), "the person's helper answered"
    assert git("rev-parse", "main", cwd=server.root / "memory.git").stdout.strip() == head(mine)


def test_a_value_the_person_allowed_runs_and_no_other(server: GitServer, mine: Path, tmp_path: Path) -> None:
    helper, marker = planted(tmp_path, "allowed", f"echo username=letta\necho password={TOKEN}")
    git("config", "credential.helper", str(helper), cwd=mine)
    git("config", "--global", "--add", "memory.allowConfig", f"credential.helper={helper}", cwd=tmp_path)
    proc = sync(mine, {})
    assert proc.returncode == 0, proc.stderr
    assert marker.exists()
    # The agent swaps the allowed key's value: refused, the swapped-in program not run.
    evil, evil_marker = planted(tmp_path, "evil")
    git("config", "credential.helper", str(evil), cwd=mine)
    proc = sync(mine, {})
    assert not evil_marker.exists()
    refused(proc, "credential.helper")


@pytest.fixture
def on_path(tmp_path: Path) -> tuple[Path, Path]:
    """A bare repository on a path (where git starts the pack programs itself) and the
    person's clone of it, one commit ahead."""
    bare = tmp_path / "srv.git"
    seeded = tmp_path / "seed"
    assert memory("init", "-q", str(seeded), cwd=tmp_path).returncode == 0
    git("init", "-q", "--bare", str(bare), cwd=tmp_path)
    git("push", "-q", str(bare), "main", cwd=seeded)
    repo = tmp_path / "mine"
    git("clone", "-q", str(bare), str(repo), cwd=tmp_path)
    git("config", "memory.repo", "true", cwd=repo)
    assert memory("create", "notes/a.md", "a", "-d", "A", "-m", "a", cwd=repo).returncode == 0
    return bare, repo


@pytest.mark.parametrize("key, then", [("remote.origin.uploadpack", 'exec git-upload-pack "$@"'),
                                       ("remote.origin.receivepack", 'exec git-receive-pack "$@"')])
def test_planted_pack_programs_do_not_run_in_sync(on_path: tuple[Path, Path], tmp_path: Path, key: str,
                                                  then: str) -> None:
    bare, repo = on_path
    script, marker = planted(tmp_path, "pack", then)
    git("config", key, str(script), cwd=repo)
    proc = sync(repo, {})
    assert not marker.exists(), proc.stdout + proc.stderr
    refused(proc, key)
    git("config", "--unset-all", key, cwd=repo)
    proc = sync(repo, {})
    assert proc.returncode == 0 and git("rev-parse", "main", cwd=bare).stdout.strip() == head(repo), proc.stderr


def test_the_pins_hold_where_the_check_saw_nothing(on_path: tuple[Path, Path], tmp_path: Path) -> None:
    """What a key written after the check meets: the network git run with our pins on
    a repository full of planted keys (fixed names and made-up ones) runs none of them."""
    from gitmemfs.core import git as coregit
    from gitmemfs.core import ownconfig

    bare, repo = on_path
    found = []
    for key, then in (("remote.origin.uploadpack", 'exec git-upload-pack "$@"'),
                      ("remote.origin.receivepack", 'exec git-receive-pack "$@"'),
                      ("credential.helper", "exit 1"), ("core.sshCommand", "exit 1")):
        script, marker = planted(tmp_path, key, then)
        git("config", key, str(script), cwd=repo)
        found.append(marker)
    ext, marker = planted(tmp_path, "ext")
    git("config", f"url.ext::{ext}.pushInsteadOf", "ssh://agent.invalid/", cwd=repo)
    git("config", "remote.origin.pushurl", "ssh://agent.invalid/x.git", cwd=repo)
    git("config", "protocol.ext.allow", "always", cwd=repo)
    found.append(marker)
    found += [plant_hook(repo, tmp_path, name) for name in ("reference-transaction", "pre-push")]
    for args in (["fetch", "-q", "origin"], ["push", "-q", "origin", "main"]):
        argv, config, extra = ownconfig.network_git(str(repo), args, urls=[str(bare)], repo_config=False)
        env = coregit.environment(extra, config=config)
        subprocess.run(coregit.argv_for(argv), cwd=repo, env=env, capture_output=True, check=False)
    assert [m.name for m in found if m.exists()] == []
    # Without the pins, the same git runs them: the test can tell.
    git("fetch", "-q", "origin", cwd=repo, check=False)
    assert found[0].exists()


def test_a_planted_fsmonitor_does_not_run_in_status(mine: Path, tmp_path: Path) -> None:
    script, marker = planted(tmp_path, "fsmonitor")
    git("config", "core.fsmonitor", str(script), cwd=mine)
    proc = memory("status", cwd=mine)
    assert not marker.exists(), proc.stdout + proc.stderr
    refused(proc, "core.fsmonitor")


def test_a_planted_ssh_command_does_not_run_in_the_mirror_push(repo: Path, tmp_path: Path) -> None:
    script, marker = planted(tmp_path, "ssh")
    assert memory("mirror", "set-url", "ssh://agent.invalid/x.git", cwd=repo).returncode == 0
    git("config", "core.sshCommand", str(script), cwd=repo)
    proc = memory("mirror", "push", cwd=repo)
    assert not marker.exists(), proc.stdout + proc.stderr
    assert proc.returncode == 1 and "core.sshcommand" in proc.stderr.lower(), proc.stderr


def test_a_hook_planted_during_the_clone_does_not_run(server: GitServer, tmp_path: Path) -> None:
    """The agent writes a post-checkout hook into the new clone while it fetches (here
    from inside the person's own credential helper, so the moment is certain): the
    checkout that follows does not run it."""
    seed(server, tmp_path)
    dest = tmp_path / "clone"
    hook, marker = planted(tmp_path, "post-checkout", "exit 0")
    plant = (f"mkdir -p '{dest}/.git/hooks' && cp '{hook}' '{dest}/.git/hooks/post-checkout' && "
             f"chmod +x '{dest}/.git/hooks/post-checkout'")
    helper, _ = planted(tmp_path, "mine", f"{plant}\necho username=letta\necho password={TOKEN}")
    git("config", "--global", "credential.helper", str(helper), cwd=tmp_path)
    proc = memory("clone", server.url(), str(dest), cwd=tmp_path, env={})
    assert proc.returncode == 0, proc.stderr
    assert (dest / ".git" / "hooks" / "post-checkout").exists(), "the agent's hook was planted"
    assert not marker.exists()
    assert os.path.exists(dest / "system")


def test_a_key_planted_during_the_fetch_is_refused_before_the_push(server: GitServer, mine: Path,
                                                                    tmp_path: Path) -> None:
    """The agent writes a credential helper of its own while sync fetches (here from
    inside the person's own helper, so the moment is certain): the push is checked as
    it starts, refused, and the agent's helper never runs."""
    evil, marker = planted(tmp_path, "evil")
    plant = f"git -C '{mine}' config credential.{server.url().rsplit('/', 1)[0]}.helper '{evil}'"
    helper, _ = planted(tmp_path, "mine", f"{plant}\necho username=letta\necho password={TOKEN}")
    git("config", "--global", "credential.helper", str(helper), cwd=tmp_path)
    remote = git("rev-parse", "main", cwd=server.root / "memory.git").stdout
    proc = sync(mine, {})
    assert not marker.exists(), proc.stdout + proc.stderr
    refused(proc, ".helper")
    assert git("rev-parse", "main", cwd=server.root / "memory.git").stdout == remote
