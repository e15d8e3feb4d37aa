"""Validation and hooks: `git memory check`, `hooks`, `mirror` (issue: one validator at every gate)."""
from __future__ import annotations

import argparse
from typing import Any

from .cmd_stub import stub


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    stub(sub, common, "check", "validate memory files: staged, the whole tree, or a commit range")
    stub(sub, common, "hooks", "install or inspect the git hooks")
    stub(sub, common, "mirror", "configure the post-commit mirror push")
