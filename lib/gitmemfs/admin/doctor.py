"""`git memory doctor`: a deterministic audit of a memory's HEAD for people and CI.

It runs every gate rule over the whole tree (layout, frontmatter, `.memfs.config.json`
limits, via `gate.check.tree`) and adds what no single commit can be blamed for: a
file and a folder of one name, paths that differ only in case, broken `[[path]]`
links, folders without their `MEMORY.md` (letta-root), skills outside
`skills/<name>/SKILL.md`, a missing persona. Each finding says how to fix it; the
order is fixed (by kind, then path), so CI output diffs cleanly.
"""
from __future__ import annotations

import re
from typing import Any

from gitmemfs.core import layout as layouts
from gitmemfs.core.repo import Repo
from gitmemfs.core.snapshot import REGULAR_MODES, load
from gitmemfs.gate import check

_LINK = re.compile(r"\[\[([^\[\]\n|#]+)(?:[#|][^\[\]\n]*)?\]\]")
_FENCE = re.compile(r"(?ms)^```.*?^```[ \t]*$|`[^`\n]*`")


class Finding:
    __slots__ = ("kind", "path", "problem", "fix")

    def __init__(self, kind: str, path: str, problem: str, fix: str):
        self.kind = kind
        self.path = path
        self.problem = problem
        self.fix = fix

    def as_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "path": self.path, "problem": self.problem, "fix": self.fix}

    def line(self) -> str:
        return f"{self.path}: {self.problem}\n  fix: {self.fix}"


class Diagnosis:
    def __init__(self, layout: str, revision: str | None, files: int, findings: list[Finding]):
        self.layout = layout
        self.revision = revision
        self.files = files
        self.findings = findings
        # Damage git itself finds is the environment's (exit 4), like every command's.
        self.code = 4 if any(f.kind == "git" for f in findings) else 1 if findings else 0

    @property
    def message(self) -> str:
        rev = self.revision[:7] if self.revision else "no commits"
        if not self.findings:
            return f"No problems: {self.files} files, {self.layout} layout ({rev})."
        count = len(self.findings)
        return "\n".join([f.line() for f in self.findings]
                         + [f"{count} problem{'s' if count != 1 else ''} ({self.layout} layout, {rev})."])

    def as_dict(self) -> dict[str, Any]:
        return {"ok": not self.findings, "layout": self.layout, "revision": self.revision, "files": self.files,
                "problems": [f.as_dict() for f in self.findings]}


def diagnose(repo: Repo, rev: str = "HEAD") -> Diagnosis:
    storage = _storage(repo)
    if any(f.kind == "git" for f in storage):  # git's own check first: what follows would only fail
        named = repo.git("rev-parse", "-q", "--verify", "HEAD", check=False).out.strip() or None
        return Diagnosis(layouts.detect(repo.cfg(layouts.CONFIG_KEY), False), named, 0, storage)
    snap = load(repo.root, rev)
    files = [e for e in snap.files]
    paths = {e.path for e in files}
    layout = layouts.detect(repo.cfg(layouts.CONFIG_KEY), layouts.INDEX in paths)
    findings: list[Finding] = storage
    if snap.revision is None:
        return Diagnosis(layout, None, 0, findings)
    for p in check.tree(repo.root, rev).problems:
        findings.append(Finding("rule", p.path, p.message, _rule_fix(p.path, p.message)))
    findings += _shadowed(paths)
    findings += _case_clashes(paths)
    texts = snap.read([e for e in files if e.mode in REGULAR_MODES and layouts.is_markdown(e.path)])
    findings += _links(files, texts, paths)
    if layout == layouts.ROOT:
        findings += _unindexed(paths)
    if layout != layouts.PLAIN:
        findings += _skills(paths)
        findings += _persona(paths, layout)
    kinds = ("git", "durable", "rule", "shadow", "case", "link", "index", "skill", "persona")
    order = {k: i for i, k in enumerate(kinds)}
    findings.sort(key=lambda f: (order[f.kind], f.path, f.problem))
    return Diagnosis(layout, snap.revision, len(files), findings)


def _storage(repo: Repo) -> list[Finding]:
    """What git's own check finds (objects a ref or commit names that are missing or
    unreadable: `fsck --connectivity-only`, which reads commits and trees, not every
    blob's contents), and a memory whose answers of "committed" are not fsynced."""
    found = []
    res = repo.git("fsck", "--connectivity-only", "--no-dangling", "--no-progress", check=False, timeout=300)
    lines = [ln.strip() for ln in (res.err + res.out).splitlines() if ln.strip()]
    if res.code != 0 or any(ln.startswith(("error", "missing", "broken", "fatal")) for ln in lines):
        shown = "; ".join(lines[:5]) + (f"; and {len(lines) - 5} more" if len(lines) > 5 else "")
        found.append(Finding("git", ".git", f"git fsck found damage: {shown or f'exit {res.code}'}",
                             "run git fsck --full to see all of it; restore the memory from a clone of its "
                             "server (git memory clone URL) or its mirror"))
    if not repo.durable:
        found.append(Finding("durable", ".git/config", "memory.durable is false: an answer of committed may "
                             "not survive a power cut", "git config --unset memory.durable, unless this "
                             "memory is a throwaway one"))
    return found


def _rule_fix(path: str, message: str) -> str:
    if "over maxCoreMemoryCharacters" in message:
        return "move detail from the core files into files in indexed folders (external memory)"
    if "characters, over" in message:
        return f"shorten {path}, or split it into smaller files"
    if "folders deep" in message:
        return f"move {path} to a shallower folder"
    if "frontmatter" in message or "required field" in message or "must" in message:
        return f"edit the frontmatter of {path} as the message says, and commit"
    if "skill" in message:
        return "move it to skills/<name>/SKILL.md"
    return f"correct {path} as the message says, and commit"


def _shadowed(paths: set[str]) -> list[Finding]:
    folders = {"/".join(p.split("/")[:i]) for p in paths for i in range(1, p.count("/") + 1)}
    out = []
    for p in sorted(paths):
        if layouts.is_markdown(p) and p[:-3] in folders:
            out.append(Finding("shadow", p, f"a file and a folder share the name {p[:-3]!r} ({p} and {p[:-3]}/)",
                               f"rename one of them, e.g. git mv {p} {p[:-3]}/overview.md"))
    return out


def _case_clashes(paths: set[str]) -> list[Finding]:
    """Folders and files spelt two ways that differ only in case or Unicode
    normalisation (core/paths.py): one of them is lost on macOS and Windows."""
    from gitmemfs.core.paths import case_twins

    out = []
    for same in case_twins(paths):
        out.append(Finding("case", same[0], f"paths differ only in case or Unicode normalisation: "
                           f"{', '.join(ascii(p)[1:-1] if not p.isascii() else p for p in same)} (they collide "
                           "on macOS and Windows)", f"merge them into one, or rename {same[-1]}"))
    return out


def _links(files: list[Any], texts: dict[str, bytes | None], paths: set[str]) -> list[Finding]:
    out = []
    for e in sorted(files, key=lambda e: e.path):
        data = texts.get(e.oid)
        if not data or not layouts.is_markdown(e.path):
            continue
        text = _FENCE.sub("", data.decode("utf-8", "replace"))
        for target in dict.fromkeys(m.group(1).strip() for m in _LINK.finditer(text)):
            clean = target.lstrip("/")
            if clean in paths or clean + ".md" in paths or clean.startswith(("http:", "https:")):
                continue
            out.append(Finding("link", e.path, f"broken link [[{target}]]: no file {clean} or {clean}.md",
                               f"point the link at an existing file, or create {clean}.md"))
    return out


def _unindexed(paths: set[str]) -> list[Finding]:
    missing: dict[str, list[str]] = {}
    for p in paths:
        if not layouts.is_markdown(p) or "/" not in p or layouts.is_hidden(p) or p.startswith("skills/"):
            continue
        for folder in layouts.folders_above(p):
            if f"{folder}/{layouts.INDEX}" not in paths:
                missing.setdefault(folder, []).append(p)
                break
    return [Finding("index", f"{folder}/", f"folder has no {layouts.INDEX}, so the {len(files)} Markdown file"
                    f"{'s' if len(files) != 1 else ''} under it ({', '.join(sorted(files)[:3])}) break the "
                    "root-index layout's rules, ours and Letta's, and block every commit",
                    f"add {folder}/{layouts.INDEX} listing its files, e.g. git memory-patch with an Add File")
            for folder, files in sorted(missing.items())]


def _skills(paths: set[str]) -> list[Finding]:
    out = []
    folders: set[str] = set()
    for p in paths:
        rel = layouts.strip_legacy(p)
        parts = rel.split("/")
        if parts[0] == "skills" and len(parts) >= 2:
            if len(parts) == 2:
                out.append(Finding("skill", p, "a skill must be a folder", f"move it to skills/"
                                   f"{parts[1].rsplit('.', 1)[0]}/SKILL.md"))
            else:
                folders.add("/".join(p.split("/")[: p.split("/").index("skills") + 2]))
        elif parts[-1] == "SKILL.md":
            out.append(Finding("skill", p, "SKILL.md outside skills/ is not loaded as a skill",
                               f"move it to skills/{parts[-2] if len(parts) > 1 else 'name'}/SKILL.md"))
    for folder in sorted(folders):
        if f"{folder}/SKILL.md" not in paths:
            out.append(Finding("skill", f"{folder}/", "skill folder without SKILL.md",
                               f"add {folder}/SKILL.md (name and description frontmatter, then the steps)"))
    return out


def _persona(paths: set[str], layout: str) -> list[Finding]:
    if layout == layouts.ROOT:
        if "persona.md" in paths:
            return []
        where = "persona.md"
    else:
        if "system/persona.md" in paths or "memory/system/persona.md" in paths:
            return []
        where = "system/persona.md"
    return [Finding("persona", where, "the memory has no persona file",
                    f"create {where} (git memory personality apply memo -m REASON writes one)")]
