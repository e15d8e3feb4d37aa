"""Generate the man pages in man/ from the real argparse parsers.

The pages to build are listed in pyproject.toml's [tool.build_manpages] (the
argparse-manpage spec format). What the parsers do not say (EXAMPLES, ENVIRONMENT,
FILES, EXIT STATUS, SEE ALSO) comes from man/<page>.include, argparse-manpage's
include format (`[SECTION]` then roff), added for every page that has one. Output is
reproducible: fixed width, and the date of the release in gitmemfs.__date__.
`--check` exits 1 when a committed page is stale.
"""
from __future__ import annotations

import datetime
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "lib"))


def _spec() -> str:
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as fh:
        return "\n".join(tomllib.load(fh)["tool"]["build_manpages"]["manpages"])


def pages() -> dict[str, str]:
    """{relative path: page text} for every configured page."""
    import gitmemfs

    day = datetime.datetime.strptime(gitmemfs.__date__, "%Y-%m-%d").replace(tzinfo=datetime.timezone.utc)
    saved = {k: os.environ.get(k) for k in ("COLUMNS", "SOURCE_DATE_EPOCH")}
    os.environ.update(COLUMNS="80", SOURCE_DATE_EPOCH=str(int(day.timestamp())))
    try:
        return _render()
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _render() -> dict[str, str]:
    from argparse_manpage.manpage import Manpage
    from argparse_manpage.tooling import get_parser
    from build_manpages.build_manpages import parse_manpages_spec

    import gitmemfs

    out = {}
    for path, data in parse_manpages_spec(_spec()).items():
        parser = get_parser(data.pop("import_type"), data.pop("import_from"), data.pop("objname"),
                            data.pop("objtype"), data.get("prog"))
        include = os.path.join(ROOT, os.path.splitext(path)[0] + ".include")
        if os.path.exists(include):
            data.setdefault("include", include)
        data.setdefault("project_name", "git-memfs")
        data.setdefault("version", gitmemfs.__version__)
        page = str(Manpage(parser, _data=data, format=data.get("format", "pretty")))
        # The title is the page's name (GIT-DREAM), not the prog with its space.
        title = os.path.splitext(os.path.basename(path))[0].upper().replace("-", "\\-")
        first, _, rest = page.partition("\n")
        out[path] = f'.TH {title} "1"' + first.split('"1"', 1)[1] + "\n" + rest
    return out


def main(argv: list[str]) -> int:
    stale = []
    for rel, text in pages().items():
        target = os.path.join(ROOT, rel)
        current = open(target, encoding="utf-8").read() if os.path.exists(target) else None
        if current == text:
            continue
        if "--check" in argv:
            stale.append(rel)
        else:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "w", encoding="utf-8") as fh:
                fh.write(text)
            print(f"wrote {rel}")
    if stale:
        print(f"stale man pages: {', '.join(stale)}; run make man", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
