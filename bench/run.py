"""`make bench`: every performance figure of DESIGN §11 as one JSON line, plus a table.

Each bench_*.py module here exposes `FIGURES` (name -> (budget, unit, description))
and `run(workdir, repeat) -> dict[name, value]`. Values are medians of repeated runs.
Run one module with `make bench BENCH_ARGS="edit"`.
"""
from __future__ import annotations

import importlib
import json
import os
import pkgutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [HERE, os.path.join(ROOT, "lib")]

import common  # noqa: E402


def main(argv: list[str]) -> int:
    repeat = int(os.environ.get("BENCH_REPEAT", "9"))
    only = set(argv)
    modules = sorted(m.name for m in pkgutil.iter_modules([HERE]) if m.name.startswith("bench_"))
    figures: dict[str, float] = {}
    table = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="gitmemfs-bench-") as tmp:
        common.hermetic_env(tmp)
        for name in modules:
            if only and name[len("bench_"):] not in only:
                continue
            mod = importlib.import_module(name)
            workdir = os.path.join(tmp, name)
            os.makedirs(workdir)
            values = mod.run(workdir, repeat)
            for key, value in values.items():
                budget, unit, what = mod.FIGURES[key]
                figures[key] = round(value, 2 if unit == "x" else 1)
                table.append((key, value, budget, unit, what))
    figures["bench_seconds"] = round(time.monotonic() - started, 1)
    print(json.dumps(figures, sort_keys=True))
    width = max((len(r[0]) for r in table), default=10)
    for key, value, budget, unit, what in table:
        verdict = "ok" if budget is None or value <= budget else "OVER"
        limit = "" if budget is None else f"<= {budget:g} {unit}"
        digits = 2 if unit == "x" else 1
        print(f"  {key:<{width}}  {value:>9.{digits}f} {unit:<3} {limit:<14} {verdict:<4}  {what}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
