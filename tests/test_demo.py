"""`make demo` runs the main job end to end and leaves nothing behind."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import ROOT


def test_demo_runs_end_to_end_in_a_throwaway_dir(tmp_path: Path, hermetic: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    home_before = sorted(p.name for p in hermetic.iterdir())
    env = {**os.environ, "TMPDIR": str(scratch)}
    proc = subprocess.run([sys.executable, str(ROOT / "examples/demo.py")], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr
    out = proc.stdout
    for step in ("Initialized memory repository", "Memory-Op: create",
                 "missing required field 'description'", "<memory>", "merge(dream):",
                 "+- 2025-03-04: Prefers short answers with the command first."):
        assert step in out, step
    assert list(scratch.iterdir()) == [], "the demo left files in its temp dir"
    assert sorted(p.name for p in hermetic.iterdir()) == home_before, "the demo wrote to HOME"
