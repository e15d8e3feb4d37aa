"""`--to PATH`: keep a document (e.g. AGENTS.md) in memory as `system/<name>` and copy
it back out after a consuming dream (reference/upstream-reflection.md §5.5).

Differences from upstream, after its weaknesses (§8, 17): a failed sync restores
the committed version instead of deleting the file (the write path does that);
the target is written only when its content changes; frontmatter keys other than
`description` in the source document are dropped with the rest of its
frontmatter rather than breaking the memory rules.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from gitmemfs.core import memfile
from gitmemfs.core.errors import MemfsError, UsageError
from gitmemfs.core.repo import Repo
from gitmemfs.core.writer import Change, WriteSession

MANAGED = {True: "Repository guidance for coding agents, maintained by git dream.",
           False: "Document distilled by git dream."}


@dataclass
class Target:
    spec: str
    path: str        # absolute, resolved against the cwd of the invocation
    name: str

    @property
    def rel(self) -> str:
        return f"system/{self.name}"

    @property
    def agents_md(self) -> bool:
        return self.name.lower() in ("agents.md", "agent.md")


def resolve(spec: str) -> Target:
    name = os.path.basename(spec.rstrip("/\\"))
    if not spec.strip() or not name or name in (".", ".."):
        raise UsageError(f'invalid --to "{spec}": expected a file path')
    if os.path.isdir(os.path.expanduser(spec)):
        raise UsageError(f'invalid --to "{spec}": it is a folder; name the document in it, e.g. '
                         f'{os.path.join(spec, "AGENTS.md")}')
    return Target(spec, os.path.abspath(os.path.expanduser(spec)), name)


def body_of(text: str) -> str:
    """The document without frontmatter: BOM dropped, line endings LF, trimmed."""
    text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    try:
        _, body, _ = memfile.split(text)
    except memfile.FrontmatterError:
        body = text
    return body.strip()


def _description(text: str) -> str | None:
    try:
        fm, _, _ = memfile.split(text.lstrip("\ufeff"))
        for entry in memfile.parse_entries(fm):
            if entry.key == "description" and entry.value and entry.value.strip():
                return memfile.sanitize_description(entry.value)
    except memfile.FrontmatterError:
        return None
    return None


def committed(repo: Repo, target: Target) -> str | None:
    res = repo.git("cat-file", "blob", f"HEAD:{target.rel}", check=False)
    return res.out if res.code == 0 else None


def sync(repo: Repo, target: Target) -> str | None:
    """Commit the on-disk document into memory when its body differs from HEAD's.
    Returns the commit sha, or None when there was nothing to sync."""
    try:
        with open(target.path, "rb") as fh:
            text = memfile.decode_strict(fh.read(), target.spec)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise MemfsError(f"git dream: cannot read --to {target.spec}: {exc.strerror}") from None
    except memfile.EncodingProblem as exc:
        raise MemfsError(f"git dream: cannot read --to {target.spec}: {exc}") from None
    current = committed(repo, target)
    if current is not None and body_of(current) == body_of(text):
        return None
    description = _description(text) or (current and _description(current)) or MANAGED[target.agents_md]
    content = memfile.render(description, body_of(text) + "\n").encode()
    with WriteSession(repo, tool="git dream --to") as session:
        return session.commit([Change(target.rel, content)], op="dream_sync",
                              reason=f"dream: sync {target.name} from {target.path}")


def write_back(repo: Repo, target: Target) -> bool:
    """Copy `system/<name>` from HEAD to the target; True if the file changed."""
    current = committed(repo, target)
    if current is None:
        return False
    body = body_of(current)
    text = body + "\n" if body else ""
    try:
        with open(target.path, encoding="utf-8") as fh:
            if fh.read() == text:
                return False
    except (OSError, UnicodeDecodeError):
        pass
    folder = os.path.dirname(target.path)
    os.makedirs(folder, exist_ok=True)
    tmp = f"{target.path}.git-dream-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, target.path)
    return True
