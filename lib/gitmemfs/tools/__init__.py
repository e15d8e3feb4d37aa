"""The agent-facing tool schemas: a tool call as JSON in, one JSON answer out.

    toolcall.py  Letta's memory / memory_apply_patch tools and Anthropic's memory tool
    history_calls.py  search, log, show, diff, undo, restore as Letta-schema commands
    anthropic_memory.py  Anthropic's memory tool (memory_20250818) as the SDK's reference runs it
    outside.py  files changed beside the tools, committed as an "outside change" before a write

It sits above the operation packages because a tool schema spans several of them.
"""
