"""`git memory personality list | show ID | apply ID -m REASON` and `init --personality`.

A personality is a Markdown file `<id>.md`: YAML frontmatter with `label`,
`description` and the descriptions the persona and human files get (`persona`,
`human`), then a `## persona` and a `## human` section holding their bodies. The
catalogue ships in `admin/personalities/` (our own texts); a team keeps its own in
a folder named by `git config memory.personalityPath` (relative to the memory
repo), whose ids win over the shipped ones.

Apply rewrites the bodies of the persona and human files of the repo's layout,
keeps their frontmatter except the description, refuses a dirty tree, and makes
one commit.
"""
from __future__ import annotations

import os
import re
from typing import Any

from gitmemfs.core import layout as layouts
from gitmemfs.core import memfile
from gitmemfs.core.errors import MemfsError
from gitmemfs.core.outcome import Outcome
from gitmemfs.core.repo import Repo
from gitmemfs.core.writer import Change, WriteSession

CATALOGUE = os.path.join(os.path.dirname(__file__), "personalities")
PATH_KEY = "memory.personalityPath"
DEFAULT = "memo"
_ID = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
_SECTION = re.compile(r"(?m)^## (persona|human)[ \t]*\n")


class Personality:
    def __init__(self, pid: str, label: str, description: str, texts: dict[str, tuple[str, str]], source: str):
        self.id = pid
        self.label = label
        self.description = description
        self.texts = texts  # "persona" / "human" -> (description, body)
        self.source = source

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "label": self.label, "description": self.description, "source": self.source,
                "persona": {"description": self.texts["persona"][0], "body": self.texts["persona"][1]},
                "human": {"description": self.texts["human"][0], "body": self.texts["human"][1]}}


def parse(pid: str, text: str, source: str) -> Personality:
    import yaml

    try:
        fm, body, _ = memfile.split(text)
        meta = yaml.safe_load(fm) or {}
    except (memfile.FrontmatterError, yaml.YAMLError):
        raise MemfsError(f"personality {pid} ({source}): needs a frontmatter block with label and description")
    if not isinstance(meta, dict):
        raise MemfsError(f"personality {pid} ({source}): the frontmatter must be a mapping")
    parts = _SECTION.split(body)
    sections = {parts[i]: parts[i + 1].strip("\n") + "\n" for i in range(1, len(parts) - 1, 2)}
    texts = {}
    for which in ("persona", "human"):
        if which not in sections:
            raise MemfsError(f"personality {pid} ({source}): missing the '## {which}' section")
        desc = str(meta.get(which) or f"The {which} of the {meta.get('label', pid)} personality.")
        texts[which] = (memfile.sanitize_description(desc), sections[which])
    return Personality(pid, str(meta.get("label") or pid), memfile.sanitize_description(
        str(meta.get("description") or "")), texts, source)


def _folders(repo: Repo | None) -> list[tuple[str, str]]:
    """(folder, source name): the team's folder first, then the shipped catalogue."""
    out = []
    configured = repo.cfg(PATH_KEY) if repo is not None else None
    if configured:
        path = os.path.expanduser(configured)
        path = path if os.path.isabs(path) else os.path.join(repo.root, path)  # type: ignore[union-attr]
        if not os.path.isdir(path):
            raise MemfsError(f"memory.personalityPath points at {path}, which is not a folder; fix it with "
                             "git config memory.personalityPath PATH")
        out.append((path, "team"))
    out.append((CATALOGUE, "builtin"))
    return out


def catalogue(repo: Repo | None = None) -> dict[str, Personality]:
    found: dict[str, Personality] = {}
    for folder, source in _folders(repo):
        for name in sorted(os.listdir(folder)):
            pid = name[:-3]
            if not name.endswith(".md") or not _ID.match(pid) or pid in found:
                continue
            with open(os.path.join(folder, name), encoding="utf-8") as fh:
                found[pid] = parse(pid, fh.read(), source)
    return found


def get(pid: str, repo: Repo | None = None) -> Personality:
    known = catalogue(repo)
    if pid not in known:
        raise MemfsError(f"unknown personality {pid!r}; git memory personality list shows the ids "
                         f"({', '.join(sorted(known))})")
    return known[pid]


def targets(repo: Repo, layout: str) -> dict[str, str]:
    """The persona and human files of a repo's layout (the legacy `memory/system/`
    spelling when that is what the repo has)."""
    if layout == layouts.ROOT:
        return {"persona": "persona.md", "human": "human.md"}
    if layout == layouts.PLAIN:
        raise MemfsError("personalities need a Letta layout (letta or letta-root); a plain memory has no "
                         "persona file")
    legacy = os.path.isdir(os.path.join(repo.root, "memory", "system")) and not os.path.isdir(
        os.path.join(repo.root, "system"))
    prefix = "memory/system/" if legacy else "system/"
    return {"persona": prefix + "persona.md", "human": prefix + "human.md"}


def render(layout: str, rel: str, current: bytes | None, description: str, body: str) -> bytes:
    """The file with the personality's body and description; any other frontmatter kept."""
    if current is None:
        return layouts.render_new(layout, rel, description, body).encode()
    try:
        mf = memfile.parse(memfile.decode_strict(current, rel))
    except (memfile.FrontmatterError, memfile.EncodingProblem) as exc:
        raise MemfsError(f"personality apply: {rel} cannot be read ({exc}); fix it first "
                         "(git memory doctor says how)") from None
    body = memfile.from_lf(body, mf.eol == "\r\n")
    return memfile.render_file(mf, description=description, body=body).encode()


def apply(repo: Repo, pid: str, reason: str) -> Outcome:
    chosen = get(pid, repo)
    if not reason or not reason.strip():
        raise MemfsError("personality apply: give a reason with -m")
    with WriteSession(repo, tool="personality apply") as session:  # refuses a dirty tree, untracked too
        layout = layouts.of_repo(repo)[0]
        changes = []
        for which, rel in targets(repo, layout).items():
            description, body = chosen.texts[which]
            changes.append(Change(rel, render(layout, rel, session.read(rel), description, body)))
        sha = session.commit(changes, op="personality", reason=reason,
                             label=f"personality apply {pid}")
    return Outcome(f"Personality {chosen.label} applied ({sha[:7]}).", sha, [c.path for c in changes],
                   extra={"personality": pid})


def seeds(pid: str, layout: str) -> dict[str, str]:
    """`init --personality`: the persona and human seed files in the layout's shape."""
    chosen = get(pid)
    base = "" if layout == layouts.ROOT else "system/"
    return {f"{base}{which}.md": layouts.render_new(layout, f"{base}{which}.md", *chosen.texts[which])
            for which in ("persona", "human")}
