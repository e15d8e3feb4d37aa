"""What the agent sees: `git memory compile`, `tree`, `tokens`."""
from __future__ import annotations

import argparse
from typing import Any

from .cmd_stub import stub


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    stub(sub, common, "compile", "print the system-prompt projection of the memory")
    stub(sub, common, "tree", "print the memory tree with its caps")
    stub(sub, common, "tokens", "estimate the prompt tokens of the memory")
