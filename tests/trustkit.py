"""Helpers the trust tests share: a person's ssh signing key listed as an allowed
signer, a memory with one committed file, and an agent's hand-made redaction."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import git, memfile, memory, write


def planted(tmp: Path, name: str, then: str = "exit 1") -> tuple[Path, Path]:
    """A script an agent left that notes it ran (`then` decides what it does next)."""
    marker = tmp / f"ran-{name}"
    script = tmp / f"{name}.sh"
    script.write_text(f"#!/bin/sh\ntouch '{marker}'\n{then}\n")
    script.chmod(0o755)
    return script, marker


def keypair(folder: Path, name: str) -> Path:
    key = folder / name
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], check=True)
    return key


def allow(signers: Path, email: str, key: Path) -> Path:
    """`signers` (an allowed-signers file) listing `key` for `email`."""
    signers.write_text(f'{email} namespaces="git" {Path(f"{key}.pub").read_text()}')
    return signers


def memory_with(path: Path, rel: str, text: str, message: str) -> Path:
    """A new memory at `path` whose one commit adds `rel`."""
    assert memory("init", "-q", str(path), cwd=path.parent).returncode == 0
    write(path, rel, memfile(rel.rsplit("/", 1)[-1].split(".")[0].title(), text))
    git("add", "-A", cwd=path)
    git("commit", "-q", "-m", message, cwd=path)
    return path


def hand_redaction(repo: Path, rules: str, message: str) -> None:
    """git-filter-repo run by hand in `repo`, then a record commit nobody signed."""
    spec = repo.parent / f"{repo.name}-rules.txt"
    spec.write_text(rules)
    env = {**os.environ, "PATH": f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}"}
    subprocess.run(["git", "filter-repo", "--force", "--quiet", "--replace-text", str(spec)], cwd=repo, env=env,
                   check=True, capture_output=True)
    git("commit", "-q", "--allow-empty", "--no-verify", "-m", message, cwd=repo)
