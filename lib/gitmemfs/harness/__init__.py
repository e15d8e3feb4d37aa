"""The memory in a coding agent's own loop: Claude Code's hooks, Codex's notify program.

    events.py      what each hook event does: compile for SessionStart, count a step, start a
                   dream (steps, compaction), start a sync (SessionEnd); Codex's notify
    claude_code.py `git memory install claude-code`: hooks in Claude Code's settings, the MCP entry
    codex.py       `git memory install codex`: the MCP entry, notify, the AGENTS.md block
    installer.py   install and uninstall for both: plan the files, write them, keep the record
    record.py      what an install wrote, so uninstall puts each file back byte for byte

A front end beside mcp/: it reaches the memory only through the operations below.
"""
