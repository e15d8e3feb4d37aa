"""Placeholders for subcommands whose issues have not landed yet (exit 2)."""
from __future__ import annotations

import argparse
from typing import Any

from ..errors import UsageError


def stub(sub: Any, common: argparse.ArgumentParser, name: str, help_text: str) -> None:
    p = sub.add_parser(name, parents=[common], help=help_text + " (not implemented yet)",
                       description=help_text)
    p.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    p.set_defaults(func=lambda args, ctx: _missing(name))


def _missing(name: str) -> Any:
    raise UsageError(f"git memory {name} is not implemented yet")
