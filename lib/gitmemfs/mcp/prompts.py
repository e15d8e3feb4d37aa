"""What the server tells a model: its instructions, and three prompts.

    remember     capture one fact, with the reason it is worth keeping
    reflect      start a dream (git dream) over the current transcript
    load_memory  the compiled memory, for clients that do not inject resources
"""
from __future__ import annotations

from typing import Any

from gitmemfs.core.errors import MemfsError
from gitmemfs.web.memories import Memories

INSTRUCTIONS = """\
This server is your long-term memory: a git repository of Markdown files. Every change \
is a commit, checked against the memory's rules, and can be seen in history and undone.

When to read: at the start of a task read memory://compiled (or the load_memory prompt); \
before you answer something memory may hold (people, preferences, project facts, past \
decisions), view the file or search; before you edit a file, view it.

When to write: when you learn something that should outlive this conversation, or find \
that a memory is wrong. system/*.md files are pinned in the prompt: keep them short. Put \
detail in other files (reference/..., notes/...) with a one-line description.

Every write needs a `reason`: one line saying why, which becomes the commit subject. \
A refused write (read_only file, broken rule, someone else's uncommitted change) leaves \
memory unchanged; read the error, fix the call, and try again."""

REFLECT = """\
Reflect on this conversation and tidy memory. Run a dream over the transcript below: \
in a shell, save it as JSON lines to FILE.jsonl and run \
`git dream --from transcript:FILE.jsonl`, or, if you cannot run commands, do it \
yourself with the memory tools: add what was learned, correct what turned out wrong, \
merge duplicates, and keep system/ short. Give every change a reason.

Transcript:
{transcript}"""


class PromptError(MemfsError):
    """A prompts/get the protocol refuses (JSON-RPC -32602)."""


# name: (description, [(argument, description, required)])
PROMPTS: dict[str, tuple[str, list[tuple[str, str, bool]]]] = {
    "remember": ("Capture one fact in memory, with the reason it matters",
                 [("fact", "What to remember", True), ("why", "Why it is worth remembering", False)]),
    "reflect": ("Start a dream: tidy memory from the current transcript",
                [("transcript", "The conversation so far", False)]),
    "load_memory": ("The compiled memory, to put in context", []),
}


def listing(multi: bool) -> list[dict[str, Any]]:
    out = []
    for name, (description, args) in PROMPTS.items():
        if name == "load_memory" and multi:
            args = [("agent", "The agent whose memory to load", True)]
        out.append({"name": name, "description": description,
                    "arguments": [{"name": a, "description": d, "required": r} for a, d, r in args]})
    return out


def render(memories: Memories, name: str, arguments: dict[str, str] | None,
           grant: frozenset[str] | None = None) -> dict[str, Any]:
    """prompts/get as a wire dict; PromptError for what the caller got wrong."""
    if name not in PROMPTS:
        raise PromptError(f"unknown prompt {name!r}; prompts: {', '.join(PROMPTS)}")
    listed = next(p for p in listing(memories.multi) if p["name"] == name)
    known = {a["name"]: a["required"] for a in listed["arguments"]}
    given = {k: v for k, v in (arguments or {}).items() if v is not None}
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise PromptError(f"prompt {name}: unknown argument {unknown[0]!r}; it takes "
                          f"{', '.join(known) or 'no arguments'}")
    missing = [a for a, required in known.items() if required and not str(given.get(a, "")).strip()]
    if missing and not (name == "load_memory" and memories.implied(grant) is not None):
        raise PromptError(f"prompt {name}: missing required argument {missing[0]!r}")
    if name == "remember":
        why = given.get("why", "")
        because = f" Reason: {why.strip().rstrip('.')}." if why.strip() else " Give a one-line reason."
        text = (f"Remember this: {given['fact']}\n\nFind where it belongs: view memory://tree, then view the "
                "likeliest file. If a file already covers it, update it with str_replace or insert; "
                "otherwise create a file with a one-line description (system/ only if it must be in "
                f"every prompt).{because} Use that reason as the `reason` of the write.")
    elif name == "reflect":
        text = REFLECT.format(transcript=given.get("transcript") or "(not given: use the conversation so far)")
    else:
        from gitmemfs.mcp.tools import compiled

        body, revision = compiled(memories.open(given.get("agent"), grant), "HEAD")
        text = (f"Your memory at {revision[:7] if revision else 'an empty repository'} "
                f"(use the memory tools to change it):\n\n{body}")
    return {"description": PROMPTS[name][0],
            "messages": [{"role": "user", "content": {"type": "text", "text": text}}]}
