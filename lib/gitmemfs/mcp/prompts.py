"""What the server tells a model: its instructions, and three prompts.

    remember     capture one fact, with the reason it is worth keeping
    reflect      start a dream (git dream) over the current transcript
    load_memory  the compiled memory, for clients that do not inject resources
"""
from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from gitmemfs.mcp.memories import Memories

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


def register(server: Any, memories: Memories) -> None:
    @server.prompt(name="remember", description="Capture one fact in memory, with the reason it matters")
    def remember(fact: Annotated[str, Field(description="What to remember")],
                 why: Annotated[str, Field(description="Why it is worth remembering")] = "") -> str:
        because = f" Reason: {why}" if why.strip() else " Give a one-line reason."
        return (f"Remember this: {fact}\n\nFind where it belongs: view memory://tree, then view the "
                "likeliest file. If a file already covers it, update it with str_replace or insert; "
                "otherwise create a file with a one-line description (system/ only if it must be in "
                f"every prompt).{because} Use that reason as the `reason` of the write.")

    @server.prompt(name="reflect", description="Start a dream: tidy memory from the current transcript")
    def reflect(transcript: Annotated[str, Field(description="The conversation so far")] = "") -> str:
        return REFLECT.format(transcript=transcript or "(not given: use the conversation so far)")

    @server.prompt(name="load_memory", description="The compiled memory, to put in context")
    def load_memory(agent: Annotated[str | None, Field(description="Agent (with --root)")] = None) -> str:
        from gitmemfs.mcp.tools import compiled

        text, revision = compiled(memories.open(agent), "HEAD")
        return (f"Your memory at {revision[:7] if revision else 'an empty repository'} "
                f"(use the memory tools to change it):\n\n{text}")
