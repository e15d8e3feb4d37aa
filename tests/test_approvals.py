"""Approvals are a person's act, never ambient (issue 24, item 3 and DESIGN §0, third round).

Nothing an agent drives takes an approval from the environment; `git memory protect`
is the approval and its commit records it; where the memory has allowed signers, the
server gate and `check RANGE` count an approval only in a commit signed by one of them.
Real ssh-keygen keys, git's own ssh commit signing, real pushes through installed hooks.
"""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import git, head, memory, run, snapshot, write

AMBIENT = {"GIT_MEMORY_APPROVE": "protect constraints", "LETTA_MEMORY_CONSTRAINTS_UPDATE": "1"}
PROTECTED = ("persona.md: is protected in .memfs.config.json (protectedPaths) and cannot be modified; a person "
             "removes the protection with git memory unprotect")

needs_ssh_keygen = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs ssh-keygen (OpenSSH)")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A plain-layout memory whose persona.md a person protected (protectedPaths; the
    letta-root layout can't hold protection Letta accepts, issue 27 item 11)."""
    path = tmp_path / "root"
    assert memory("init", "--layout", "plain", str(path), cwd=tmp_path).returncode == 0
    made = memory("create", "persona.md", "I am an assistant with a long-term memory kept as files in a git "
                  "repository.\n", "-d", "persona", "-m", "a persona",
                  cwd=path)
    assert made.returncode == 0, made.stderr
    # (the variable only so this set-up also runs on the code before issue 24)
    proc = memory("protect", "persona.md", "-m", "my persona", cwd=path, env={"GIT_MEMORY_APPROVE": "protect"})
    assert proc.returncode == 0, proc.stderr
    return path


# -- the environment approves nothing an agent drives ----------------------------------------

def test_ambient_approval_does_not_reach_the_edit_commands(root: Path) -> None:
    before = snapshot(root)
    proc = memory("str_replace", "persona.md", "assistant", "robot", "-m", "agent edit", cwd=root, env=AMBIENT)
    assert proc.returncode == 1 and PROTECTED in proc.stderr, proc.stderr
    patch = ("*** Begin Patch\n*** Update File: persona.md\n@@\n-I am an assistant with a long-term memory kept "
             "as files in a git repository.\n+I am a robot.\n*** End Patch\n")
    proc = run("memory-patch", "-m", "agent edit", "-", cwd=root, input=patch, env=AMBIENT)
    assert proc.returncode == 1 and PROTECTED in proc.stderr, proc.stderr
    proc = memory("call", json.dumps({"reason": "agent edit", "input": patch}), cwd=root, env=AMBIENT)
    assert proc.returncode == 1 and PROTECTED in proc.stdout, proc.stdout
    assert snapshot(root) == before


def test_ambient_approval_does_not_let_undo_lift_protection(root: Path) -> None:
    before = snapshot(root)
    proc = memory("undo", "--last", "-m", "agent undoes the protection", cwd=root, env=AMBIENT)
    assert proc.returncode == 1
    assert "the size limits in .memfs.config.json are protected" in proc.stderr, proc.stderr
    assert snapshot(root) == before


def test_the_anthropic_sdk_class_ignores_the_approval_variables(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    tools = pytest.importorskip("anthropic.lib.tools")
    from gitmemfs.integrations.anthropic import GitMemoryTool

    # A host program started from a shell that exported a person's approvals.
    for key, value in AMBIENT.items():
        monkeypatch.setenv(key, value)
    tool = GitMemoryTool(tmp_path / "base")
    tool.call({"command": "create", "path": "/memories/notes.md", "file_text": "keep this\n"})
    root = tmp_path / "base" / "memories"
    monkeypatch.delenv("GIT_MEMORY_APPROVE")
    monkeypatch.delenv("LETTA_MEMORY_CONSTRAINTS_UPDATE")
    assert memory("protect", "notes.md", "-m", "a person keeps it", cwd=root).returncode == 0
    for key, value in AMBIENT.items():
        monkeypatch.setenv(key, value)
    before = snapshot(root)
    with pytest.raises(tools.ToolError):
        tool.call({"command": "str_replace", "path": "/memories/notes.md", "old_str": "keep", "new_str": "drop"})
    with pytest.raises(tools.ToolError):
        tool.call({"command": "delete", "path": "/memories/notes.md"})
    # nor may the model rewrite the limits file that lists the protection
    with pytest.raises(tools.ToolError):
        tool.call({"command": "str_replace", "path": "/memories/.memfs.config.json",
                   "old_str": '"notes.md"', "new_str": '"other.md"'})
    assert snapshot(root) == before
    assert (root / "notes.md").read_text() == "keep this\n"


def test_protect_works_where_git_runs_the_hooks(repo: Path, tmp_path: Path) -> None:
    """A foreign hook makes the edit commit through git's hooks: ours then gets the
    approval the command granted, and nothing from the shell."""
    hooks = Path(git("rev-parse", "--git-path", "hooks", cwd=repo).stdout.strip())
    hooks = hooks if hooks.is_absolute() else repo / hooks
    (hooks / "commit-msg").write_text("#!/bin/sh\nexit 0\n")
    (hooks / "commit-msg").chmod(0o755)
    proc = memory("protect", "system/human.md", "-m", "keep it", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert "read_only: true" in (repo / "system/human.md").read_text()
    before = snapshot(repo)
    write(repo, "system/human.md", (repo / "system/human.md").read_text().replace("read_only: true\n", ""))
    git("add", "-A", cwd=repo)
    # a person's plain `git commit` still takes the approval from their own shell
    assert git("commit", "-q", "-m", "lift", cwd=repo, check=False).returncode == 1
    assert git("commit", "-q", "-m", "lift", cwd=repo, check=False,
               env={"GIT_MEMORY_APPROVE": "protect"}).returncode == 0
    assert head(repo) != before[0]


# -- signed approvals at the server gate and in check RANGE ------------------------------------

def keypair(folder: Path, name: str) -> Path:
    key = folder / name
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], check=True)
    return key


@pytest.fixture
def signers(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(the person's key, another key, an allowed-signers file listing only the person's)."""
    keys = tmp_path / "keys"
    keys.mkdir()
    person, other = keypair(keys, "person"), keypair(keys, "other")
    allowed = keys / "allowed_signers"
    allowed.write_text(f'person@example.com namespaces="git" {(keys / "person.pub").read_text()}')
    return person, other, allowed


def use_key(repo: Path, key: Path) -> None:
    git("config", "gpg.format", "ssh", cwd=repo)
    git("config", "user.signingKey", str(key), cwd=repo)


@pytest.fixture
def server(repo: Path, tmp_path: Path, signers: tuple[Path, Path, Path]) -> Path:
    path = tmp_path / "server.git"
    git("init", "-q", "--bare", str(path), cwd=tmp_path)
    git("remote", "add", "origin", str(path), cwd=repo)
    git("push", "-q", "origin", "main", cwd=repo)
    assert memory("hooks", "install", cwd=path).returncode == 0
    git("config", "gpg.ssh.allowedSignersFile", str(signers[2]), cwd=path)
    git("config", "memory.approvalTrailers", "true", cwd=path)  # trailers alone no longer do
    return path


def signed(repo: Path) -> bool:
    return "\ngpgsig " in git("cat-file", "commit", "HEAD", cwd=repo).stdout


def server_head(server: Path) -> str:
    return git("rev-parse", "main", cwd=server).stdout.strip()


@needs_ssh_keygen
def test_the_server_gate_counts_only_approvals_signed_by_an_allowed_signer(
        repo: Path, server: Path, signers: tuple[Path, Path, Path]) -> None:
    person, other, _ = signers
    before = server_head(server)
    # An unsigned protect commit, pushed with the approval in the pusher's environment
    # (a local push runs the server's hook with it): refused.
    assert memory("protect", "system/human.md", "-m", "keep it", cwd=repo).returncode == 0
    proc = git("push", "origin", "main", cwd=repo, check=False, env={"GIT_MEMORY_APPROVE": "protect"})
    assert proc.returncode != 0
    assert "'read_only' is a protected field and cannot be set by the agent" in proc.stderr, proc.stderr
    assert (f"note: {head(repo)[:12]} carries Memory-Approved: protect but is not signed by a key in "
            "gpg.ssh.allowedSignersFile, so it approves nothing here (sign it: git commit --amend -S "
            "--no-edit)") in proc.stderr
    assert server_head(server) == before
    # Signed, but by a key the memory does not list: refused.
    git("reset", "-q", "--hard", "HEAD~1", cwd=repo)
    use_key(repo, other)
    assert memory("protect", "system/human.md", "-m", "keep it", "--sign", cwd=repo).returncode == 0
    assert signed(repo)
    proc = git("push", "origin", "main", cwd=repo, check=False)
    assert proc.returncode != 0 and "cannot be set by the agent" in proc.stderr
    assert server_head(server) == before
    # Signed by the person (commit.gpgsign: signed without asking): accepted.
    git("reset", "-q", "--hard", "HEAD~1", cwd=repo)
    use_key(repo, person)
    git("config", "commit.gpgsign", "true", cwd=repo)
    assert memory("protect", "system/human.md", "-m", "keep it", cwd=repo).returncode == 0
    proc = git("push", "origin", "main", cwd=repo, check=False)
    assert proc.returncode == 0, proc.stderr
    assert server_head(server) == head(repo)
    # An agent's edit after it is never signed, whatever the person's setting.
    git("config", "memory.agentId", "a1", cwd=repo)
    assert memory("str_replace", "system/persona.md", "assistant", "helper", "-m", "agent", cwd=repo).returncode == 0
    assert not signed(repo)


@needs_ssh_keygen
def test_a_signed_commit_without_the_trailer_approves_nothing(
        repo: Path, server: Path, signers: tuple[Path, Path, Path]) -> None:
    use_key(repo, signers[0])
    before = server_head(server)
    text = (repo / "system/human.md").read_text()
    write(repo, "system/human.md", text.replace("\n---\n", "\nread_only: true\n---\n", 1))
    git("add", "-A", cwd=repo)
    assert git("commit", "-q", "-S", "-m", "sign only", cwd=repo, env={"GIT_MEMORY_APPROVE": "protect"},
               check=False).returncode == 0
    assert signed(repo)
    proc = git("push", "origin", "main", cwd=repo, check=False, env={"GIT_MEMORY_APPROVE": "protect"})
    assert proc.returncode != 0 and "cannot be set by the agent" in proc.stderr
    assert server_head(server) == before
    # The same change with the trailer, signed: a person's recorded approval.
    git("commit", "-q", "--amend", "-S", "--no-edit", "--trailer", "Memory-Approved: protect", cwd=repo,
        env={"GIT_MEMORY_APPROVE": "protect"})
    assert git("push", "origin", "main", cwd=repo, check=False).returncode == 0


@needs_ssh_keygen
def test_check_range_counts_only_signed_approvals_where_signers_are_set(
        repo: Path, signers: tuple[Path, Path, Path]) -> None:
    person, other, allowed = signers
    base = head(repo)
    use_key(repo, person)
    assert memory("protect", "system/human.md", "-m", "signed", "--sign", cwd=repo).returncode == 0
    signed = head(repo)
    assert memory("unprotect", "system/human.md", "-m", "unsigned", cwd=repo).returncode == 0
    unsigned = head(repo)
    rng = f"{base}..HEAD"
    # Without signers: as before, the checking shell's approval counts.
    assert memory("check", rng, cwd=repo).returncode == 1
    assert memory("check", rng, cwd=repo, env={"GIT_MEMORY_APPROVE": "protect"}).returncode == 0
    # With signers: only the signed commit's approval, whatever the environment says.
    git("config", "gpg.ssh.allowedSignersFile", str(allowed), cwd=repo)
    proc = memory("--json", "check", rng, cwd=repo, env={"GIT_MEMORY_APPROVE": "protect"})
    assert proc.returncode == 1
    problems = json.loads(proc.stdout)["problems"]
    assert [(p["commit"], p["message"]) for p in problems] == [
        (unsigned, "file is read_only and cannot be modified")]
    proc = memory("check", rng, cwd=repo)
    assert f"note: {unsigned[:12]} carries Memory-Approved: protect but is not signed" in proc.stdout
    assert signed != unsigned


def test_signers_configured_but_unreadable_approve_nothing(repo: Path, tmp_path: Path) -> None:
    base = head(repo)
    assert memory("protect", "system/human.md", "-m", "keep", cwd=repo).returncode == 0
    git("config", "gpg.ssh.allowedSignersFile", str(tmp_path / "missing"), cwd=repo)
    git("config", "memory.approvalTrailers", "true", cwd=repo)
    proc = memory("check", f"{base}..HEAD", cwd=repo, env={"GIT_MEMORY_APPROVE": "protect"})
    assert proc.returncode == 1 and "cannot be set by the agent" in proc.stdout + proc.stderr


def test_without_signers_trusted_trailers_still_approve(repo: Path) -> None:
    base = head(repo)
    assert memory("protect", "system/human.md", "-m", "keep", cwd=repo).returncode == 0
    assert memory("check", f"{base}..HEAD", cwd=repo).returncode == 1
    git("config", "memory.approvalTrailers", "true", cwd=repo)
    assert memory("check", f"{base}..HEAD", cwd=repo).returncode == 0
