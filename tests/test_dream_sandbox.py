"""The dream sandbox: an agent that tries to escape is denied everywhere but its own
branch, worktree and TMPDIR; no Landlock means refusal unless the user opts out."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from conftest import git, head, snapshot
from dreamkit import (
    agent,
    assert_cleaned_up,
    common_dir,
    dream,
    dream_json,
    landlock,
    log_of,
    no_runs,
    refs,
    tree_files,
)
from gitmemfs.dream import sandbox

pytestmark = landlock

ESCAPES = ("home", "main-ref", "main-ref-file", "dream-ref", "objects", "config", "config-file", "own-config",
           "hook", "parent-tree", "packed-refs", "other-branch", "tmp")


def admin_state(repo: Path) -> dict[str, object]:
    gitdir = common_dir(repo)
    hooks = gitdir / "hooks"
    return {"config": (gitdir / "config").read_bytes(),
            "hooks": sorted(p.name for p in hooks.iterdir()) if hooks.exists() else [],
            "packed": (gitdir / "packed-refs").read_bytes() if (gitdir / "packed-refs").exists() else None,
            "heads": sorted(r for r in refs(repo, "refs/heads/") if not r.startswith("refs/heads/dream/"))}


def test_escaping_agent_is_denied_everywhere_but_commits_on_its_branch(repo: Path, hermetic: Path) -> None:
    (common_dir(repo) / "hooks").mkdir(exist_ok=True)
    (common_dir(repo) / "hooks" / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    before = admin_state(repo)
    base = head(repo)
    out = dream_json(repo, "--agent", agent("escape.sh"), code=0)
    log = log_of(out)
    for what in ESCAPES:
        assert f"DENIED: {what}\n" in log, f"{what} was not denied:\n{log}"
    assert "WROTE: own-tmpdir" in log
    assert "GC_AUTO=0" in log
    assert out["status"] == "merged" and out["commits"] == 1
    assert git("rev-parse", "HEAD^1", cwd=repo).stdout.strip() == base, "main moved only by our merge"
    assert "notes/sandbox.md" in tree_files(repo, "HEAD")
    assert admin_state(repo) == before
    assert not (hermetic / "escape.txt").exists()
    assert not (repo / "system/evil.md").exists()
    assert not Path(f"/tmp/git-dream-escape-{out['id']}").exists()
    assert_cleaned_up(repo)


def test_without_the_sandbox_the_same_agent_escapes(repo: Path, hermetic: Path) -> None:
    """Proves the test above can fail: unconfined, every one of those writes lands."""
    out = dream_json(repo, "--agent", agent("escape.sh"), "--no-sandbox", code=3)
    log = log_of(out)
    for what in ("home", "config", "hook", "parent-tree", "other-branch"):
        assert f"WROTE: {what}\n" in log
    assert (hermetic / "escape.txt").exists()
    assert out["status"] == "parent_dirty" and "system/evil.md" in out["message"]
    Path(f"/tmp/git-dream-escape-{out['id']}").unlink(missing_ok=True)


def test_no_landlock_refuses_with_exit_4_and_creates_nothing(repo: Path) -> None:
    before = snapshot(repo)
    for abi in ("0", "1"):
        out = dream_json(repo, "--agent", "true", env={"GIT_DREAM_LANDLOCK_ABI": abi}, code=4)
        assert out["status"] == "sandbox_unavailable"
        assert "--no-sandbox" in out["message"] and "GIT_DREAM_SANDBOX=0" in out["message"]
    text = dream(repo, "--agent", "true", env={"GIT_DREAM_LANDLOCK_ABI": "0"})
    assert text.returncode == 4 and text.stderr.splitlines()[-1].startswith("error: Landlock is switched off")
    assert snapshot(repo) == before
    assert no_runs(repo)
    assert_cleaned_up(repo)


@pytest.mark.parametrize("opt_out", [("--no-sandbox",), ()])
def test_explicit_opt_out_runs_unconfined_and_says_so(repo: Path, opt_out: tuple[str, ...]) -> None:
    env = {"GIT_DREAM_LANDLOCK_ABI": "0"} | ({} if opt_out else {"GIT_DREAM_SANDBOX": "0"})
    cmd = 'git memory create notes/u.md "Unconfined." -d "Made without a sandbox" -m "Note made unconfined"'
    out = dream_json(repo, "--agent", cmd, *opt_out, env=env, code=0)
    assert out["status"] == "merged"
    assert "NOT sandboxed" in log_of(out)
    assert "Dream-Sandbox: off" in git("log", "-1", "--format=%B", cwd=repo).stdout


def test_launcher_self_test_refuses_when_the_probe_stays_writable(repo: Path) -> None:
    """Granting the whole git dir through allowWrite would expose config: the probe catches it."""
    git("config", "dream.sandbox.allowWrite", str(common_dir(repo)), cwd=repo)
    before = snapshot(repo)
    out = dream_json(repo, "--agent", "echo should-not-$((1 + 1))-run", code=4)
    assert out["status"] == "sandbox_unavailable"
    assert "still writable after confinement" in out["message"] and "allowWrite" in out["message"]
    assert "should-not-2-run" not in log_of(out)
    assert snapshot(repo) == before
    assert_cleaned_up(repo)


def test_allow_write_grants_extra_paths(repo: Path, tmp_path: Path) -> None:
    extra = tmp_path / "agent-state"
    extra.mkdir()
    single = tmp_path / "agent.json"
    single.write_text("{}")
    git("config", "--add", "dream.sandbox.allowWrite", str(extra), cwd=repo)
    git("config", "--add", "dream.sandbox.allowWrite", str(single), cwd=repo)
    git("config", "--add", "dream.sandbox.allowWrite", str(tmp_path / "missing"), cwd=repo)
    cmd = f"echo state > {extra}/session && echo '{{\"n\": 1}}' > {single} && echo x > {tmp_path}/outside"
    out = dream_json(repo, "--agent", cmd, code=1)
    assert (extra / "session").read_text() == "state\n"
    assert single.read_text() == '{"n": 1}\n'
    assert "exited with status" in out["message"]
    assert not (tmp_path / "outside").exists()
    assert "missing does not exist; not granted" in log_of(out)


def test_reftable_repositories_are_refused(repo: Path) -> None:
    git("config", "extensions.refStorage", "reftable", cwd=repo)
    out = dream_json(repo, "--agent", "true", code=4)
    assert out["status"] == "sandbox_unavailable" and "reftable" in out["message"]


@pytest.mark.skipif(sandbox.probe_abi()[0] < 6, reason="signal scoping needs Landlock ABI 6")
def test_agent_cannot_signal_the_dream_process(repo: Path) -> None:
    cmd = ("pid=$(sed -n 's/^pid \\([0-9]*\\).*/\\1/p' \"$MEMORY_DIR/../../lock\"); "
           "echo dream-pid=$pid; kill -TERM $pid && echo KILLED || echo KILL-DENIED")
    # The agent may not read the lock file that names the pid (reads are confined): grant
    # it, so that only the signal rule stands in the way.
    git("config", "dream.sandbox.allowRead", str(common_dir(repo) / "dream" / "lock"), cwd=repo)
    out = dream_json(repo, "--agent", cmd, code=0)
    log = log_of(out)
    assert re.search(r"dream-pid=\d+", log) and "KILL-DENIED" in log, log
    assert out["status"] == "no_changes"


def test_probe_abi_and_launcher_refusal_directly(tmp_path: Path) -> None:
    abi, reason = sandbox.probe_abi()
    assert abi >= sandbox.MIN_ABI and reason == ""
    r, w = os.pipe()
    probe = tmp_path / "probe"
    probe.write_text("")
    argv = sandbox.launcher_argv("python3", [str(tmp_path)], probe=str(probe), status_fd=w,
                                 command=["/bin/true"])
    import subprocess
    proc = subprocess.run(argv, pass_fds=(w,), capture_output=True)
    os.close(w)
    status = os.read(r, 4096).decode()
    os.close(r)
    assert proc.returncode == 125 and "still writable" in status


def test_launcher_proves_reads_are_confined_before_exec(tmp_path: Path) -> None:
    """The read probe: readable after confinement, the launcher refuses; out of reach, it
    runs the command, which then cannot read a file outside its grants either."""
    import subprocess
    import sys

    own, outside = tmp_path / "own", tmp_path / "outside"
    for folder in (own, outside):
        folder.mkdir()
    (outside / "HEAD").write_text("ref: refs/heads/main\n")
    (outside / "secret").write_text("outside-secret\n")
    system = [p for p in ("/usr", "/bin", "/lib", "/lib64", "/etc", "/proc") if os.path.exists(p)]

    def launch(read_dirs: list[str], probe: Path) -> tuple[int, str, str]:
        r, w = os.pipe()
        argv = sandbox.launcher_argv(sys.executable, [str(own)], probe="", status_fd=w,
                                     command=["/bin/sh", "-c", f"cat {outside / 'secret'} || echo DENIED"],
                                     read_dirs=read_dirs, read_probe=str(probe))
        proc = subprocess.run(argv, pass_fds=(w,), capture_output=True, text=True)
        os.close(w)
        status = os.read(r, 4096).decode()
        os.close(r)
        return proc.returncode, status, proc.stdout

    code, status, _ = launch([*system, str(outside)], outside / "HEAD")
    assert code == 125 and "still readable after confinement" in status, status
    code, status, said = launch(system, outside / "HEAD")
    assert code == 0 and status.strip() == "ok" and "DENIED" in said and "outside-secret" not in said, said


def run_filter(program: list[tuple[int, int, int, int]], arch: int, nr: int, request: int = 0) -> int:
    """Run the classic-BPF program the way the kernel would for one system call."""
    data = {0: nr, 4: arch, 24: request & 0xFFFFFFFF}
    acc, pc = 0, 0
    for _ in range(len(program)):
        code, jt, jf, k = program[pc]
        assert 0 <= jt < 256 and 0 <= jf < 256
        if code == 0x20:        # ld [k]
            acc, pc = data[k], pc + 1
        elif code == 0x15:      # jeq #k
            pc += 1 + (jt if acc == k else jf)
        elif code == 0x35:      # jge #k
            pc += 1 + (jt if acc >= k else jf)
        elif code == 0x06:      # ret #k
            return k
        else:
            raise AssertionError(f"unexpected instruction {code:#x}")
    raise AssertionError("the program did not return")


@pytest.mark.parametrize("machine,arch,denied,allowed,ioctl", [
    ("x86_64", 0xC000003E, {"chmod": 90, "fchmodat": 268, "fchmodat2": 452, "lchown": 94, "fsetxattr": 190},
     {"read": 0, "openat": 257, "rename": 82, "execve": 59}, 16),
    ("aarch64", 0xC00000B7, {"fchmod": 52, "fchmodat": 53, "fchownat": 54, "setxattr": 5, "removexattrat": 466},
     {"read": 63, "openat": 56, "renameat2": 276, "execve": 221}, 29),
])
def test_chmod_filter_decisions(machine: str, arch: int, denied: dict[str, int], allowed: dict[str, int],
                                ioctl: int) -> None:
    """The filter for both architectures, run through a BPF interpreter (only one of them
    can be installed on this machine)."""
    import errno
    program = sandbox.chmod_filter(machine)
    eperm, enosys, allow, kill = 0x00050000 | errno.EPERM, 0x00050000 | errno.ENOSYS, 0x7FFF0000, 0x80000000
    for name, nr in denied.items():
        assert run_filter(program, arch, nr) == eperm, name
    for name, nr in allowed.items():
        assert run_filter(program, arch, nr) == allow, name
    assert run_filter(program, arch, ioctl, 0x40086602) == eperm, "chattr (FS_IOC_SETFLAGS)"
    assert run_filter(program, arch, ioctl, 0x401C5820) == eperm, "FS_IOC_FSSETXATTR"
    assert run_filter(program, arch, ioctl, 0x5401) == allow, "TCGETS"
    assert run_filter(program, arch, 425) == enosys, "io_uring_setup"
    assert run_filter(program, 0x40000003, 15) == kill, "an i386 process"
    if machine == "x86_64":
        assert run_filter(program, arch, 0x40000000 | 90) == enosys, "x32 chmod"
    assert sandbox.chmod_filter_supported(machine) and not sandbox.chmod_filter_supported("riscv64")
