"""The dream prompt: our instructions, a snapshot of the memory, the transcript slice,
the user's extra instruction and the `--to` directive.

The snapshot follows reference/upstream-reflection.md §3.7: a capped tree of
every memory file (descriptions shown outside `system/`), then each `system/`
file in walk order, whole while the 40,000-character budget allows, else
truncated, else replaced by a notice naming the full file, else counted in a
closing "omitted" notice; room is kept for a pointer to every later file.
Paths are written as `$MEMORY_DIR/…`, never absolute. It is read from git
objects of the base commit, which the agent's checkout equals, with the same
readers as `git memory tree` (`snapshot`, `tree`): the same order, caps and
description parsing.
"""
from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from gitmemfs.core import snapshot as snap
from gitmemfs.view import tree
from gitmemfs.view.collation import sort_key

SNAPSHOT_BUDGET = 40_000
TRANSCRIPT_INLINE = 60_000

INSTRUCTIONS = """\
# Dream pass: reflect and tidy long-term memory

You are a background maintenance pass over an AI agent's long-term memory. You are not
that agent and you are not in its conversation: do not answer anyone, do not ask
questions, and do not wait for input. Work on your own, decide, and finish with a short
report.

## The memory

The memory is a git repository of Markdown files with YAML frontmatter:

- `system/*.md` is pinned into the agent's prompt on every turn. Keep it small and
  current: identity, the user's standing preferences, conventions, active context.
- Any other `*.md` file is external memory: the agent sees its path and description and
  reads the content when it needs it. Detail and history belong here.
- `skills/<name>/SKILL.md` holds a reusable procedure. Add or change a skill only for a
  durable, multi-step workflow that really recurred; most passes touch no skill.

Every memory file starts with frontmatter holding a one-line `description` (required),
optionally `read_only: true` (then the file must not be changed, moved or deleted) and
nothing else. The description is what the agent uses to decide whether to open a file,
so keep it accurate when the content changes.

## Where you work

Your current directory, `$MEMORY_DIR`, is a private checkout of the memory on its own
branch (`$DREAM_BRANCH`, started from commit `$DREAM_BASE`). Nothing you do reaches the
real memory until you finish: your commits are then validated with the same rules as
every memory commit and merged, or kept aside for review. A sandbox lets you write only
inside `$MEMORY_DIR`, your branch and `$TMPDIR`.

Make changes with the `git memory` commands; each one is a single validated commit and
`-m` is its reason, written for a reader of `git log`:

    git memory view PATH
    git memory create PATH "BODY" -d "DESCRIPTION" -m "REASON"     (BODY '-' reads stdin)
    git memory str_replace PATH "OLD" "NEW" -m "REASON"            (OLD must match once)
    git memory insert PATH LINE "TEXT" -m "REASON"
    git memory delete PATH -m "REASON"
    git memory rename OLD_PATH NEW_PATH -m "REASON"
    git memory update_description PATH "DESCRIPTION" -m "REASON"
    git memory-patch -m "REASON" PATCH_FILE                        (many files, one commit)

Plain `git add` and `git commit -m "REASON"` in `$MEMORY_DIR` work too. Commit every
change before you finish: files left uncommitted make the pass count as failed (they
are kept for a person to look at, not merged). Do not change git configuration, hooks
or other branches, and do not reset, rebase, merge or push; if a commit is refused, read
the message, fix the content and commit again.

## How to work

1. Look. Start from the snapshot below (the file tree with descriptions, and the full
   text of `system/`). Open other files when their description suggests they matter.
2. Pick what is worth keeping, most important first: corrections of mistakes the agent
   made; the user's stated preferences and habits; new durable facts about the user,
   their projects and tools; things that contradict what memory says; procedures that
   were worked out and will be needed again. Leave out what only mattered for that one
   task: line numbers, exact error text, temporary paths, ports, intermediate values.
   Write dates in full (2025-03-04, never "yesterday" or "last week"). Skip what memory
   already says.
3. Change memory surgically. Put each fact in the tier it belongs to and in one place.
   Prefer editing an existing file over creating a new one. When something is no longer
   true, fix it where it is written instead of adding a second version. Remove what the
   user asked to forget. Never copy secrets, credentials or raw logs into memory.
4. Check your work: descriptions still match their files, no duplicates, `system/` no
   longer than it needs to be, nothing left uncommitted (`git status`).

Doing nothing is a good outcome when nothing durable was learned: then make no commit.

Finish with a short report: a two-sentence summary, the changes you committed, and
what you chose to skip and why.
"""

DEFRAG = """\
## This pass

There is no new conversation to reflect on. Tidy the memory itself: merge duplicate or
overlapping facts, resolve contradictions in favour of the most recent information,
split files that mix unrelated topics, move detail that does not need to be in every
prompt out of `system/`, and fix descriptions that no longer fit.
"""

TRANSCRIPT_HEADER = """\
## The conversation to reflect on

Below is the part of a conversation that no earlier pass has seen ({messages} messages
from `{source}`), as a JSON array: `user` is the person, `assistant` the agent, `tool`
the results of its tool calls. The same array is in the file `$DREAM_TRANSCRIPT`.
"""


# -- reading the memory ------------------------------------------------------------------

def _walk_key(path: str) -> tuple[tuple[int, Any], ...]:
    """Folders before files at every level, then by name: the tree's order."""
    parts = path.split("/")
    return tuple((0, sort_key(p)) for p in parts[:-1]) + ((1, sort_key(parts[-1])),)


def memory_files(files: snap.Snapshot) -> list[tuple[str, bytes]]:
    """(path, content) of every `.md` file of a commit, in walk order, hidden names skipped."""
    wanted = sorted((e for e in files.files if e.path.endswith(".md") and e.mode in snap.REGULAR_MODES
                     and not snap.is_hidden(e.path)), key=lambda e: _walk_key(e.path))
    blobs = files.read(wanted)
    return [(e.path, blobs.get(e.oid) or b"") for e in wanted]


def description_of(path: str, data: bytes) -> str:
    return snap.read_doc(path, data, with_value=False).description


def render_tree(files: Sequence[tuple[str, str | None]], caps: Mapping[str, int] | None = None,
                env: Mapping[str, str] | None = None) -> str:
    """The `/memory/` tree of (path, description) pairs, as `git memory tree` draws it,
    with each description outside `system/` after its file's name."""
    root = tree.from_paths(path for path, _ in files)
    for path, desc in files:
        if desc and not path.startswith("system/"):
            node = root
            for part in path.split("/"):
                node = node.children[part]
            node.note = desc
    return tree.render(root, **tree.limits(caps, env)).text


# -- the snapshot ------------------------------------------------------------------------

def _notice(rel: str, what: str, budget: int = SNAPSHOT_BUDGET) -> str:
    return (f"[Memory preview {what}: the snapshot in this prompt is capped at {budget:,} characters. "
            f"The full file is $MEMORY_DIR/{rel}; read it directly if you need it.]")


def snapshot(files: Sequence[tuple[str, bytes]], budget: int = SNAPSHOT_BUDGET,
             caps: Mapping[str, int] | None = None) -> str:
    budget = max(1000, budget)
    described = [(path, description_of(path, data)) for path, data in files]
    lines = ["<parent_memory>", "<memory_filesystem>", render_tree(described, caps), "</memory_filesystem>"]
    if not files:
        lines.append("(no memory markdown files found)")
    closing = "</parent_memory>"

    def fits(extra: list[str], reserve: int = 0) -> bool:
        return len("\n".join(lines + extra + [closing])) + reserve <= budget

    system = [(rel, data) for rel, data in files if rel.startswith("system/")]
    # Unlike upstream's purely greedy walk (reference §8, 14), an early large file may
    # not starve the rest out of sight: room stays reserved for a pointer to every later
    # system file (up to half the budget), so each one is at least named.
    pointers = [len("\n".join(["<memory>", f"<path>$MEMORY_DIR/{rel}</path>", _notice(rel, "omitted", budget),
                                "</memory>"])) + 1 for rel, _ in system]
    omitted = 0
    for index, (rel, data) in enumerate(system):
        reserve = min(sum(pointers[index + 1:]), budget // 2)
        text = data.decode("utf-8", "replace")
        head = ["<memory>", f"<path>$MEMORY_DIR/{rel}</path>"]
        if fits(head + [text, "</memory>"], reserve):
            lines += head + [text, "</memory>"]
            continue
        notice = _notice(rel, "truncated", budget)
        room = budget - reserve - len("\n".join(lines + head + ["", notice, "</memory>", closing]))
        cut = text[:room].rstrip() if room > 0 else ""
        if cut and fits(head + [cut, notice, "</memory>"], reserve):
            lines += head + [cut, notice, "</memory>"]
            continue
        entry = head + [_notice(rel, "omitted", budget), "</memory>"]
        if fits(entry):
            lines += entry
        else:
            omitted += 1
    if omitted:
        note = (f"[Memory preview omitted {omitted} more system file(s): the snapshot budget was used up. "
                "Read them directly under $MEMORY_DIR.]")
        if fits([note]):
            lines.append(note)
    return "\n".join(lines + [closing])


# -- the whole prompt ---------------------------------------------------------------------

def transcript_section(records: list[dict[str, Any]], source: str, messages: int) -> str:
    body = "[\n" + ",\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n]"
    if len(body) > TRANSCRIPT_INLINE:
        body = body[:TRANSCRIPT_INLINE] + ("\n… [the transcript continues; it is too long to inline here. "
                                           "Read the rest from $DREAM_TRANSCRIPT, in parts.]")
    return TRANSCRIPT_HEADER.format(messages=messages, source=source) + "\n```json\n" + body + "\n```\n"


def to_directive(name: str, agents_md: bool, exists: bool) -> str:
    rel = f"system/{name}"
    if agents_md:
        what = (f"`{rel}` is an AGENTS.md-style guide for coding agents working in a repository: "
                "durable, repo-level guidance such as the commands to build, test and set up "
                "(near the top), code style, testing habits, security notes and commit rules. Plain "
                "Markdown, short scannable bullets, no copy of the human README, written timelessly "
                "(no \"currently\", \"for now\" or \"no longer\").")
    else:
        what = (f"`{rel}` is a document distilled from the conversations: durable, forward-looking "
                "guidance only.")
    if exists:
        state = ("It exists: revise it in place where the new experience calls for it (often it does "
                 "not), merge into existing sections rather than appending, drop guidance that has been "
                 "contradicted, and keep its frontmatter, changing only the body.")
    else:
        state = ("It does not exist yet: create it only if there is durable guidance to put in it, with "
                 "frontmatter holding a short description. Otherwise leave it absent; never write a "
                 "placeholder.")
    return (f"## Document to maintain\n\nBesides memory, keep the document `$MEMORY_DIR/{rel}` up to date. "
            f"{what} {state} It is copied out to its target after the pass. Commit when done.\n")


def build(files: Sequence[tuple[str, bytes]], *, transcript: str | None = None, instruction: str | None = None,
          directive: str | None = None) -> str:
    parts = [INSTRUCTIONS]
    parts.append(transcript if transcript else DEFRAG)
    if instruction and instruction.strip():
        parts.append("## Additional instruction from the user\n\n" + instruction.strip() +
                     "\n\nFollow it, and still keep only what is durable.\n")
    if directive:
        parts.append(directive)
    parts.append("## Snapshot of the memory at the start of this pass\n\n" + snapshot(files) + "\n")
    return "\n".join(parts)
