"""Cutting the power under one operation (tests/powercut.py is the filesystem).

    cut = PowerCut(tmp_path)              # a backing folder, a mount point, a control folder
    cut.prepare(template)                 # the disk before the operation: a copy of `template`
    total = cut.run(argv, cwd="mem").count            # a whole run, no cut: how many changes
    outcome = cut.run(argv, cwd="mem", at=17)         # the power cut at the 17th change
    outcome.image / "mem"                 # the disk as it comes back

Points: `points(total)` spreads GIT_MEMFS_POWERCUT_POINTS cut points (default 6; `make
powercut` asks for 60) over every change the operation makes, the first and the last
included; the run without a cut stands for a cut right after the answer.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
FS = HERE / "powercut.py"


def missing() -> str | None:
    """Why the power-cut tests cannot run here, or None."""
    if not os.path.exists("/dev/fuse"):
        return "no /dev/fuse on this machine"
    if shutil.which("fusermount3") is None and shutil.which("fusermount") is None:
        return "fusermount3 is not installed (apt-get install fuse3; .ci/run does)"
    try:
        import mfusepy  # noqa: F401
    except (ImportError, OSError) as exc:
        return f"mfusepy cannot load libfuse ({exc}); pip install '.[dev]' and apt-get install fuse3"
    return None


def points(total: int) -> list[int]:
    wanted = int(os.environ.get("GIT_MEMFS_POWERCUT_POINTS") or 6)
    if total <= wanted:
        return list(range(1, total + 1))
    step = (total - 1) / (wanted - 1)
    return sorted({1 + round(i * step) for i in range(wanted)})


class Outcome:
    def __init__(self, proc: subprocess.CompletedProcess[str] | None, cut: bool, count: int, image: Path):
        self.proc = proc
        self.cut = cut
        self.count = count
        self.image = image

    @property
    def answered(self) -> str:
        return (self.proc.stdout + self.proc.stderr) if self.proc is not None else ""


class PowerCut:
    def __init__(self, where: Path):
        self.where = where
        self.backing = where / "disk"
        self.mnt = where / "mnt"
        self.control = where / "control"
        self.mnt.mkdir(parents=True, exist_ok=True)

    def prepare(self, template: Path) -> None:
        shutil.rmtree(self.backing, ignore_errors=True)
        shutil.copytree(template, self.backing, symlinks=True)

    def _unmount(self) -> None:
        tool = shutil.which("fusermount3") or "fusermount"
        for flags in (["-u"], ["-u", "-z"]):
            for _ in range(50):
                if not os.path.ismount(self.mnt):
                    return
                if subprocess.run([tool, *flags, str(self.mnt)], capture_output=True).returncode == 0:
                    return
                time.sleep(0.1)

    def run(self, argv: list[str], *, cwd: str, at: int | None = None, env: dict[str, str] | None = None,
            timeout: float = 300) -> Outcome:
        """Mount the disk, run `argv` in mnt/`cwd`, cut the power at change `at` (or after
        it ran), unmount; the disk as it comes back is `outcome.image`."""
        shutil.rmtree(self.control, ignore_errors=True)
        self.control.mkdir()
        fs_argv = [sys.executable, str(FS), str(self.backing), str(self.mnt), str(self.control)]
        if at is not None:
            fs_argv += ["--cut-at", str(at)]
        log = open(self.where / "fs.log", "ab")
        fs = subprocess.Popen(fs_argv, stdout=log, stderr=log, start_new_session=True)
        try:
            deadline = time.monotonic() + 60
            while not os.path.ismount(self.mnt):
                if fs.poll() is not None or time.monotonic() > deadline:
                    log_text = (self.where / "fs.log").read_text()
                    raise AssertionError(f"the power-cut filesystem did not mount: {log_text}")
                time.sleep(0.02)
            proc = self._operation(argv, cwd, env, timeout)
        finally:
            (self.control / "release").touch()
            self._unmount()
            try:
                fs.wait(60)
            except subprocess.TimeoutExpired:
                fs.kill()
                fs.wait()
            log.close()
        count = int((self.control / "count").read_text() or 0) if (self.control / "count").exists() else -1
        cut = (self.control / "cut").exists()
        if not (self.control / "image").is_dir():
            raise AssertionError(f"no image written: {(self.where / 'fs.log').read_text()[-3000:]}")
        return Outcome(proc, cut, count, self.control / "image")

    def _operation(self, argv: list[str], cwd: str, env: dict[str, str] | None,
                   timeout: float) -> subprocess.CompletedProcess[str]:
        out, err = self.where / "op.out", self.where / "op.err"
        with open(out, "w") as fo, open(err, "w") as fe:
            child = subprocess.Popen(argv, cwd=self.mnt / cwd, stdout=fo, stderr=fe, stdin=subprocess.DEVNULL,
                                     env={**os.environ, **(env or {})}, start_new_session=True)
            deadline = time.monotonic() + timeout
            while child.poll() is None:
                if (self.control / "cut").exists():
                    os.killpg(child.pid, signal.SIGKILL)  # the power is gone: so is every process
                    child.wait()
                    break
                if time.monotonic() > deadline:
                    os.killpg(child.pid, signal.SIGKILL)
                    child.wait()
                    raise AssertionError(f"{argv} did not finish in {timeout}s")
                time.sleep(0.01)
            else:
                try:  # its helpers (git children) are gone with it
                    os.killpg(child.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        return subprocess.CompletedProcess(argv, child.returncode, out.read_text(), err.read_text())
