"""`git memory compile`: the memory as it is projected into an agent's prompt.

The shape follows upstream's local compiler (reference/upstream-blocks-tree.md
§1.6): a Reminder line, `<self>` with `system/persona.md`, then `<memory>`
holding every other `system/` file as nested elements (projection path,
description, value) and the external projection, a box-drawing tree of the
files outside `system/` and `skills/`. It is built from a commit, never from
the work tree.

Our default output fixes upstream's bugs:
- paths come from `ls-tree -z`, so non-ASCII and quoted names are kept;
- every line of a multi-line value is indented, not only the first;
- each external file shows its description (`name — description`), as the
  prompt promises; non-Markdown files (`profile.png`) are listed too;
- frontmatter is real YAML (`description: "x"` loses its quotes);
- `$MEMORY_DIR` is spelled one way, hidden files (`.gitignore`) are left out,
  and a memory with nothing to show compiles to nothing.
`compat="letta"` reproduces upstream 0.30.25 byte for byte, quirks included.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Iterable, Iterator, Sequence

from gitmemfs.core import layout as layouts
from gitmemfs.core.snapshot import REGULAR_MODES, DescriptionCache, Doc, FileEntry, Snapshot, is_hidden, read_doc
from gitmemfs.view import tree
from gitmemfs.view.collation import sort_key

MEMORY_DIR = "$MEMORY_DIR"
REMINDER = "Reminder: <projection> contains the local path of the memory file projection."
PERSONA = "system/persona"
COMPAT_MODES = ("letta",)
CACHE_MIN_FILES = 1000  # below this, reading every description is quick enough


class Projection:
    """The prompt text as lines, each tagged with the file it comes from (None for
    structure), so `tokens` can say what every file costs."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.owners: list[str | None] = []

    def add(self, line: str, owner: str | None = None) -> None:
        self.lines.append(line)
        self.owners.append(owner)

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


class Memory:
    """What a commit holds for the prompt: blocks (system/*.md, persona included, in
    label order) and external entries (everything else but skills and hidden files,
    in no particular order: the index sorts them as a tree)."""

    def __init__(self, revision: str | None, blocks: list[Doc], external: list[Doc],
                 layout: str = layouts.DEFAULT):
        self.revision = revision
        self.blocks = blocks
        self.external = external
        self.layout = layout

    @property
    def problems(self) -> list[Doc]:
        return [d for d in (*self.blocks, *self.external) if d.problem]


def label_of(path: str) -> str:
    return path[:-3] if path.lower().endswith(".md") else path


def layout_of(snapshot: Snapshot, configured: str | None = None) -> str:
    """The layout a commit is projected in: `memory.layout`, else its root MEMORY.md."""
    return layouts.detect(configured, any(e.path == layouts.INDEX for e in snapshot.files))


def collect(snapshot: Snapshot, layout: str | None = None) -> Memory:
    """Sort a snapshot's files into blocks and external entries, reading every
    Markdown file among them through one `cat-file --batch`."""
    layout = layout or layout_of(snapshot)
    blocks, external, plain = _classify(snapshot, layout)
    return _memory(snapshot, blocks, external, plain, snapshot.read(blocks + external), layout=layout)


def _classify(snapshot: Snapshot, layout: str = layouts.DEFAULT) -> tuple[list[FileEntry], list[FileEntry], list[str]]:
    """(core Markdown files, other Markdown files, other files), leaving out skills
    and hidden files (`.gitignore`, `.github/…`). letta: core = system/; letta-root:
    core = the root *.md files, external = the nested files that count as memory
    (every folder above them indexed), nothing else; plain: every file by path."""
    if layout != layouts.LETTA:
        return _classify_layout(snapshot, layout)
    blocks: list[FileEntry] = []
    external: list[FileEntry] = []
    plain: list[str] = []
    for entry in snapshot.files:
        path = entry.path
        if path.startswith("skills/") or is_hidden(path):
            continue
        if entry.mode in REGULAR_MODES and path.lower().endswith(".md"):
            (blocks if path.startswith("system/") else external).append(entry)
        elif not path.startswith("system/"):
            plain.append(path)
    return blocks, external, plain


def _classify_layout(snapshot: Snapshot, layout: str) -> tuple[list[FileEntry], list[FileEntry], list[str]]:
    regular = [e for e in snapshot.files if e.mode in REGULAR_MODES]
    if layout == layouts.PLAIN:
        return [], [], [e.path for e in regular if layouts.is_memory(e.path, layout)]
    paths = {e.path for e in regular}

    def indexed(folder: str) -> bool:
        return f"{folder}/{layouts.INDEX}" in paths

    blocks: list[FileEntry] = []
    external: list[FileEntry] = []
    for entry in regular:
        if layouts.is_memory(entry.path, layout, indexed):
            (blocks if layouts.is_core(entry.path, layout) else external).append(entry)
    return blocks, external, []


def _memory(snapshot: Snapshot, blocks: list[FileEntry], external: list[FileEntry], plain: list[str],
            blobs: dict[str, bytes | None], known: dict[str, str] | None = None,
            layout: str = layouts.DEFAULT) -> Memory:
    block_docs = [read_doc(e.path, blobs.get(e.oid)) for e in blocks]
    block_docs.sort(key=lambda d: sort_key(label_of(d.path)))
    # External files show only their description: no need to clean up their bodies.
    known = known or {}
    external_docs = [Doc(e.path, known[e.oid], "") if e.oid in known
                     else read_doc(e.path, blobs.get(e.oid), with_value=False) for e in external]
    return Memory(snapshot.revision, block_docs, external_docs + [Doc(p, "", "") for p in plain], layout)


# --- our projection -------------------------------------------------------------------

def render(memory: Memory, *, root: str = MEMORY_DIR, layout: list[tuple[str, int]] | None = None,
           store: dict[str, str] | None = None) -> Projection:
    """Our projection. `layout` is `box_tree` of the external paths, if already built;
    `store`, a hosted store's name and description (remote/store.py), is shown first."""
    out = Projection()
    if store and store.get("description"):
        _store_block(out, store)
    letta = memory.layout == layouts.LETTA
    persona_label = PERSONA if letta else "persona"  # the root-index layout keeps persona.md at the root
    persona = next((d for d in memory.blocks if label_of(d.path) == persona_label), None)
    system = [d for d in memory.blocks if d is not persona]
    if persona is None and not system and not memory.external:
        return out
    if out.lines:
        out.add("")
    out.add(REMINDER)
    if persona is not None:
        out.add("")
        out.add("<self>", persona.path)
        out.add(f"<projection>{root}/{persona.path}</projection>", persona.path)
        for line in persona.value.split("\n") if persona.value else ():
            out.add(line, persona.path)
        out.add("</self>", persona.path)
    if system or memory.external:
        out.add("")
        out.add("<memory>")
        _system_tree(out, [(label_of(d.path)[len("system/"):] if letta else label_of(d.path), d)
                           for d in system],
                     lambda d, pad: _payload(d, pad, root))
        if memory.external:
            if layout is None:
                layout = box_tree([d.path for d in memory.external])
            _external_tree(out, layout, memory.external, root + "/", _describe)
        out.add("</memory>")
    return out


_UNPRINTABLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u2028\u2029]")


def _store_block(out: Projection, store: dict[str, str]) -> None:
    """The store's description, as the hosted service gives it to an agent that
    mounts the store: what the memory is for, written for the model."""
    name = _UNPRINTABLE.sub("", store.get("name") or "").replace('"', "'")
    out.add(f'<memory_store name="{name}">')
    for line in _UNPRINTABLE.sub("", store["description"].replace("\r\n", "\n")).strip("\n").split("\n"):
        out.add(line)
    out.add("</memory_store>")


def _payload(doc: Doc, pad: str, root: str) -> Iterable[str]:
    yield f"{pad}  <projection>{root}/{doc.path}</projection>"
    if doc.description:
        yield f"{pad}  <description>{doc.description}</description>"
    for line in doc.value.split("\n") if doc.value else ():
        yield f"{pad}  {line}" if line.strip() else ""


def _describe(doc: Doc, line: str) -> str:
    return f"{line} — {doc.description}" if doc.description else line


class _TreeNode:
    __slots__ = ("children", "payload")

    def __init__(self) -> None:
        self.children: dict[str, _TreeNode] = {}
        self.payload: Doc | None = None


def _system_tree(out: Projection, items: Sequence[tuple[str, Doc]],
                 payload: Callable[[Doc, str], Iterable[str]]) -> None:
    """Nested elements, one per path segment, sorted alphabetically (folders and
    files mixed); a node may be a file and a folder at once."""
    root = _TreeNode()
    for label, item in items:
        node = root
        for part in label.split("/"):
            if part:
                node = node.children.setdefault(part, _TreeNode())
        if node is not root:
            node.payload = item

    # Iterative (a stack of open elements): a tree of any depth cannot exhaust the stack.
    def level(node: _TreeNode) -> Iterator[str]:
        return iter(sorted(node.children, key=sort_key))

    stack: list[tuple[_TreeNode, Iterator[str], str | None, str | None]] = [(root, level(root), None, None)]
    while stack:
        node, keys, closing, closing_owner = stack[-1]
        key = next(keys, None)
        if key is None:
            stack.pop()
            if closing is not None:
                out.add(closing, closing_owner)
            continue
        pad = "  " * (len(stack) - 1)
        child = node.children[key]
        owner = None if child.payload is None else child.payload.path
        out.add(f"{pad}<{key}>", owner)
        if child.payload is not None:
            for line in payload(child.payload, pad):
                out.add(line, owner)
        stack.append((child, level(child), f"{pad}</{key}>", owner))


def box_tree(paths: Sequence[str]) -> list[tuple[str, int]]:
    """The lines of the box-drawing tree of `paths` (tree.draw, uncapped): (text, i)
    where i is the index in `paths` of the file shown, -1 for a folder."""
    # (Uncapped, draw gives no "more entries" line, so a node is always there.)
    return [(line, -1 if node is None else node.payload) for line, node in tree.draw(tree.from_paths(paths))]


def _external_tree(out: Projection, layout: list[tuple[str, int]], docs: Sequence[Doc], top: str,
                   leaf: Callable[[Doc, str], str]) -> None:
    """`<external_projection>`: the box-drawing tree, each file's line from `leaf`."""
    out.add("<external_projection>")
    out.add(top)
    for text, index in layout:
        if index < 0:
            out.add(text)
        else:
            doc = docs[index]
            out.add(leaf(doc, text), doc.path)
    out.add("</external_projection>")


# --- upstream parity (--compat letta) ---------------------------------------------------

_JS_SPACE = "\t\n\x0b\x0c\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008" \
            "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_LETTA_FRONTMATTER = re.compile(r"\A---\n([\s\S]*?)\n---(?:\n([\s\S]*))?\Z")


def js_trim(text: str) -> str:
    return text.strip(_JS_SPACE)


def letta_frontmatter(content: str) -> tuple[dict[str, Any], str]:
    """Upstream's general frontmatter parser (§1.1): line-based, quotes kept,
    `- item` lines after an empty value make a list."""
    if content.startswith("\ufeff"):
        content = content[1:]
    content = content.replace("\r\n", "\n").replace("\r", "\n")
    m = _LETTA_FRONTMATTER.match(content)
    if not m:
        return {}, content
    fields: dict[str, Any] = {}
    pending: str | None = None
    items: list[str] = []
    for line in m.group(1).split("\n"):
        if pending is not None and js_trim(line).startswith("-"):
            items.append(js_trim(js_trim(line)[1:]))
            continue
        if pending is not None:
            fields[pending] = items if items else ""
            pending, items = None, []
        colon = line.find(":")
        if colon > 0:
            key, value = js_trim(line[:colon]), js_trim(line[colon + 1:])
            if value:
                fields[key] = value
            else:
                pending, items = key, []
    if pending is not None:
        fields[pending] = items if items else ""
    return fields, js_trim(m.group(2) or "")


def _git_quotes(path: str, quote_path: bool) -> bool:
    """Whether `git ls-tree` without -z would print this path quoted."""
    return any(c < " " or c in '"\\\x7f' or (quote_path and c > "\x7f") for c in path)


def collect_letta(snapshot: Snapshot, *, quote_path: bool = True) -> list[Doc]:
    """Upstream's file list: `.md` paths as `ls-tree --name-only` prints them (quoted
    names end in `.md"` and are dropped), parsed with upstream's parser, in label order."""
    entries = [e for e in snapshot.files
               if e.path.endswith(".md") and js_trim(e.path) == e.path
               and not _git_quotes(e.path, quote_path)]
    blobs = snapshot.read(entries)
    docs = []
    for e in entries:
        data = blobs.get(e.oid)
        if data is None:
            continue
        fields, body = letta_frontmatter(data.decode("utf-8", "replace"))
        description = fields.get("description")
        docs.append(Doc(e.path, js_trim(description) if isinstance(description, str) else "", body))
    docs.sort(key=lambda d: sort_key(d.path[:-3]))
    return docs


def render_letta(docs: list[Doc]) -> Projection:
    out = Projection()
    if not docs:
        return out
    out.add(REMINDER)
    persona = next((d for d in docs if d.path == PERSONA + ".md"), None)
    if persona is not None:
        out.add("")
        out.add("<self>", persona.path)
        out.add(f"<projection>{MEMORY_DIR}/system/persona.md</projection>", persona.path)
        out.add(persona.value.rstrip(_JS_SPACE), persona.path)
        out.add("</self>", persona.path)
    system = [d for d in docs if d.path.startswith("system/") and d is not persona]
    external = [d for d in docs if not d.path.startswith(("system/", "skills/"))]
    if system or external:
        out.add("")
        out.add("<memory>")
        _system_tree(out, [(d.path[len("system/"):-3], d) for d in system], _letta_payload)
        if external:
            _external_tree(out, box_tree([d.path for d in external]), external, "${MEMORY_DIR}/",
                           lambda d, line: line)
        out.add("</memory>")
    return out


def _letta_payload(doc: Doc, pad: str) -> Iterable[str]:
    # Upstream rebuilds the path from the tree's segments.
    yield f"{pad}  <projection>{MEMORY_DIR}/{doc.path}</projection>"
    if doc.description:
        yield f"{pad}  <description>{doc.description}</description>"
    value = doc.value.rstrip(_JS_SPACE)
    if value:
        yield f"{pad}  {value}"  # only the first line is indented (upstream quirk)


# --- entry points -----------------------------------------------------------------------

def hosted_store(cfg: Callable[[str], str | None]) -> dict[str, str] | None:
    """A hosted store's name and description, as its last sync left them in the memory's
    config (`cfg`, Repo.cfg; remote/store.py writes them): the store does not version
    them, so neither does a commit. None for a memory of another kind."""
    url = cfg("memory.store")
    if not url:
        return None
    return {"id": url.split(":", 1)[-1], "name": cfg("memory.storeName") or "",
            "description": cfg("memory.storeDescription") or ""}


def project(snapshot: Snapshot, *, compat: str | None = None, quote_path: bool = True,
            root: str = MEMORY_DIR, cache: str | None = None,
            layout: str | None = None, hosted: dict[str, str] | None = None) -> tuple[Projection, Memory | None]:
    """The projection of a snapshot, and (outside compat mode) the memory it shows.
    `cache` is a file for `DescriptionCache`, used when there are many external files.
    `layout` defaults to what the snapshot shows (a root MEMORY.md: letta-root)."""
    if compat == "letta":
        return render_letta(collect_letta(snapshot, quote_path=quote_path)), None
    layout = layout or layout_of(snapshot)
    blocks, external, plain = _classify(snapshot, layout)
    store = DescriptionCache(cache) if cache and len(external) >= CACHE_MIN_FILES else None
    known = store.known if store else {}
    pending = snapshot.start_read(blocks + [e for e in external if e.oid not in known])
    # Lay out the external index while git reads the blobs (two processes, two cores).
    index = box_tree([e.path for e in external] + plain)
    memory = _memory(snapshot, blocks, external, plain, pending.result(), known, layout)
    if store is not None:
        store.save({e.oid: d.description for e, d in zip(external, memory.external) if d.problem is None})
    return render(memory, root=root, layout=index, store=hosted), memory


def as_json(memory: Memory) -> dict[str, Any]:
    return {
        "revision": memory.revision,
        "blocks": [{"label": label_of(d.path), "path": d.path, "description": d.description,
                    "value": d.value, "read_only": d.read_only} for d in memory.blocks],
        "external": [{"path": d.path, "description": d.description}
                     for d in sorted(memory.external, key=lambda d: sort_key(d.path))],
        "problems": [{"path": d.path, "message": d.problem} for d in memory.problems],
    }
