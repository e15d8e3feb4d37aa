"""Issue 34: a program an agent names in the memory's `.git/config` (or a file it
includes) never runs inside a person's `git memory protect` or `redact --push`: the
command refuses before it changes anything, naming the key and the fix, and the
person's own programs (global config) still run. Real repositories, real ssh-keygen
signing, real pushes to a bare server, the commands as a person types them."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from trustkit import keypair, memory_with, planted

from conftest import git, head, memory

SECRET = "sk-live-9Rt2WqZp71bn"


@pytest.fixture
def signing(tmp_path: Path) -> Path:
    """The person's ssh signing key, in the person's own (global) git config."""
    if shutil.which("ssh-keygen") is None:
        pytest.skip("needs ssh-keygen (OpenSSH)")
    key = keypair(tmp_path, "person")
    for name, value in (("gpg.format", "ssh"), ("user.signingKey", str(key))):
        git("config", "--global", name, value, cwd=tmp_path)
    return key


def signed(repo: Path) -> bool:
    return "\ngpgsig " in git("cat-file", "commit", "HEAD", cwd=repo).stdout


@pytest.mark.parametrize("how", ["config", "include"])
def test_planted_signing_program_does_not_run_in_protect_sign(repo: Path, tmp_path: Path, signing: Path,
                                                               how: str) -> None:
    script, marker = planted(tmp_path, "gpg-ssh", 'exec ssh-keygen "$@"')  # it even signs
    if how == "config":
        git("config", "gpg.ssh.program", str(script), cwd=repo)
    else:  # pulled in from a file the agent wrote: that file's keys are the repository's
        extra = tmp_path / "extra.cfg"
        extra.write_text(f'[gpg "ssh"]\n\tprogram = {script}\n')
        git("config", "include.path", str(extra), cwd=repo)
    before = head(repo)
    proc = memory("protect", "-S", "system/human.md", "-m", "keep it", cwd=repo)
    assert not marker.exists()
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "gpg.ssh.program" in lines[0], proc.stderr
    assert "git config --unset-all 'gpg.ssh.program'" in lines[0]
    if how == "include":
        assert str(extra) in lines[0]
    assert head(repo) == before and "read_only" not in (repo / "system/human.md").read_text()
    # The person checks it, removes it, and the same command signs with their own key.
    git("config", "--unset-all", "include.path" if how == "include" else "gpg.ssh.program", cwd=repo)
    proc = memory("protect", "-S", "system/human.md", "-m", "keep it", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert signed(repo) and not marker.exists()


def test_the_persons_own_signing_program_still_runs(repo: Path, tmp_path: Path, signing: Path) -> None:
    script, marker = planted(tmp_path, "mine", 'exec ssh-keygen "$@"')
    git("config", "--global", "gpg.ssh.program", str(script), cwd=repo)
    proc = memory("protect", "-S", "system/human.md", "-m", "keep it", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert marker.exists() and signed(repo)


def test_planted_fsmonitor_does_not_run_in_protect(repo: Path, tmp_path: Path) -> None:
    script, marker = planted(tmp_path, "fsmonitor")
    git("config", "core.fsmonitor", str(script), cwd=repo)
    before = head(repo)
    proc = memory("protect", "system/human.md", "-m", "keep it", cwd=repo)
    assert not marker.exists()
    assert proc.returncode == 1 and "core.fsmonitor" in proc.stderr, proc.stdout + proc.stderr
    assert head(repo) == before
    # git's own daemon is no planted program: `true`/`false` are left alone.
    git("config", "core.fsmonitor", "false", cwd=repo)
    proc = memory("protect", "system/human.md", "-m", "keep it", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert "read_only: true" in (repo / "system/human.md").read_text()


@pytest.fixture
def pushed(tmp_path: Path) -> dict[str, Path]:
    pytest.importorskip("git_filter_repo", reason="git-filter-repo is not installed (the redact extra)")
    srv = tmp_path / "srv.git"
    git("init", "-q", "--bare", str(srv), cwd=tmp_path)
    mem = memory_with(tmp_path / "mem", "reference/keys.md", f"prod key {SECRET}\n", "the keys")
    git("remote", "add", "origin", str(srv), cwd=mem)
    git("push", "-q", "-u", "origin", "main", cwd=mem)
    (tmp_path / "secrets.txt").write_text(SECRET + "\n")
    return {"srv": srv, "mem": mem, "tmp": tmp_path}


def assert_nothing_redacted(world: dict[str, Path], before: str) -> None:
    mem, srv = world["mem"], world["srv"]
    assert head(mem) == before and SECRET in (mem / "reference/keys.md").read_text()
    assert git("rev-parse", "main", cwd=srv).stdout.strip() == before


def test_planted_ssh_command_does_not_run_in_redact_push(pushed: dict[str, Path]) -> None:
    mem, tmp = pushed["mem"], pushed["tmp"]
    script, marker = planted(tmp, "ssh")
    # The push goes over ssh (a redirect), and ssh is the agent's program.
    git("config", "core.sshCommand", str(script), cwd=mem)
    git("config", "url.ssh://agent.invalid/x.git.pushInsteadOf", str(pushed["srv"]), cwd=mem)
    before = head(mem)
    proc = memory("redact", "--text-file", str(tmp / "secrets.txt"), "--push", cwd=mem)
    assert not marker.exists()
    assert proc.returncode == 1 and "core.sshcommand" in proc.stderr.lower(), proc.stdout + proc.stderr
    assert_nothing_redacted(pushed, before)


def test_insteadof_does_not_send_the_push_elsewhere(pushed: dict[str, Path]) -> None:
    mem, tmp = pushed["mem"], pushed["tmp"]
    theirs = tmp / "agent.git"
    git("init", "-q", "--bare", str(theirs), cwd=tmp)
    git("config", f"url.{theirs}.insteadOf", str(pushed["srv"]), cwd=mem)
    before = head(mem)
    proc = memory("redact", "--text-file", str(tmp / "secrets.txt"), "--push", cwd=mem)
    assert git("for-each-ref", cwd=theirs).stdout == ""
    assert proc.returncode == 1 and "insteadof" in proc.stderr.lower(), proc.stdout + proc.stderr
    assert_nothing_redacted(pushed, before)
    git("config", "--unset-all", f"url.{theirs}.insteadOf", cwd=mem)
    proc = memory("redact", "--text-file", str(tmp / "secrets.txt"), "--push", cwd=mem)
    assert proc.returncode == 0, proc.stderr
    assert "[REDACTED]" in git("show", "main:reference/keys.md", cwd=pushed["srv"]).stdout


def test_a_program_written_mid_command_is_pinned_out(pushed: dict[str, Path]) -> None:
    """A key the agent writes while `redact` runs (here: when the person's own signing
    program runs for the record) does not run: the fixed-name ones are pinned (the
    push's ssh stays the person's), and the config is checked again before the push."""
    if shutil.which("ssh-keygen") is None:
        pytest.skip("needs ssh-keygen (OpenSSH)")
    mem, tmp = pushed["mem"], pushed["tmp"]
    evil, marker = planted(tmp, "ssh")
    key = keypair(tmp, "person")
    late = (f"git config core.sshCommand '{evil}'\n"
            f"git config url.ssh://agent.invalid/x.git.pushInsteadOf '{pushed['srv']}'\n")
    mine, _ = planted(tmp, "mine", late + 'exec ssh-keygen "$@"')
    for name, value in (("gpg.format", "ssh"), ("user.signingKey", str(key)), ("gpg.ssh.program", str(mine))):
        git("config", "--global", name, value, cwd=tmp)
    git("config", "commit.gpgSign", "true", cwd=mem)  # init turned it off for the agent's commits
    proc = memory("redact", "--text-file", str(tmp / "secrets.txt"), "--push", cwd=mem)
    assert git("config", "core.sshCommand", cwd=mem, check=False).stdout.strip() == str(evil), proc.stdout + proc.stderr
    assert not marker.exists(), proc.stdout + proc.stderr
    # Checked again before the push: refused, the local redaction kept, the fix named.
    assert proc.returncode == 1 and "core.sshcommand" in proc.stderr.lower(), proc.stdout + proc.stderr
    assert "[REDACTED]" in (mem / "reference/keys.md").read_text()
    assert SECRET in git("show", "main:reference/keys.md", cwd=pushed["srv"]).stdout
    git("config", "--unset-all", "core.sshCommand", cwd=mem)
    git("config", "--unset-all", "url.ssh://agent.invalid/x.git.pushInsteadOf", cwd=mem)
    git("config", "--global", "--unset-all", "gpg.ssh.program", cwd=tmp)
    proc = memory("redact", "--text-file", str(tmp / "secrets.txt"), "--push", cwd=mem)
    assert proc.returncode == 0, proc.stderr
    assert "[REDACTED]" in git("show", "main:reference/keys.md", cwd=pushed["srv"]).stdout
