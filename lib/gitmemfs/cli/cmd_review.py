"""`git memory review`: the person's page in a browser (needs the [review] extra)."""
from __future__ import annotations

import argparse
from typing import Any

from gitmemfs.cli.common import Report
from gitmemfs.core.errors import EnvironmentProblem

EXTRA = ".[review]"  # from a checkout: git-memfs is not on PyPI yet


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "review", parents=[common], help="review, accept and undo memory changes in a browser",
        description="Serve a local page for the person who owns the memory: the prompt's size against "
                    "its limits, the files, the history with diffs, pending dream runs to accept or "
                    "reject, revert of any commit, search and plots. Listens on 127.0.0.1 and prints a "
                    "URL with a fresh session token; opens the browser where there is one. Needs the "
                    f"optional extra: pip install '{EXTRA}'.")
    p.add_argument("--port", type=int, default=0, help="port (default 0: any free port; the URL says which)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1; any other needs $GIT_MEMORY_REVIEW_TOKEN)")
    p.add_argument("--root", metavar="DIR", help="serve every agent's memory under DIR (DIR/<agent>[/memory])")
    p.add_argument("--no-browser", action="store_true", help="print the URL; do not open a browser")
    p.set_defaults(func=do_review)


def do_review(args: argparse.Namespace, ctx: Any) -> Report:
    try:
        import jinja2  # noqa: F401
        import markdown_it  # noqa: F401
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise EnvironmentProblem(f"review: the page's packages are not installed; pip install '{EXTRA}'") from None
    from gitmemfs.review import serve

    serve.run(ctx.memory_dir, args.root, host=args.host, port=args.port, browser=not args.no_browser,
              as_json=ctx.json)
    return Report("")
