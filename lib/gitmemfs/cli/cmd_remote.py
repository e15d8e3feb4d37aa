"""Remotes: `git memory clone`, `sync`, `status` (issue: remotes that never leak or lose)."""
from __future__ import annotations

import argparse
from typing import Any

from .cmd_stub import stub


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    stub(sub, common, "clone", "clone a memory repository")
    stub(sub, common, "sync", "fetch, then pull or push as needed")
    stub(sub, common, "status", "clean/dirty, ahead/behind, hooks and mirror")
