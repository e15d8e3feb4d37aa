#!/bin/sh
# Claude Code as the `git dream` agent.
#
#   git config dream.agent "sh $(git memory help --example agents/claude-code.sh)"
#   git config --add dream.sandbox.allowWrite ~/.claude       # its sessions and settings
#   git config --add dream.sandbox.allowWrite ~/.claude.json  # its state file
#
# What it reads besides its checkout (git dream grants these when it runs this file):
# dream.sandbox.allowRead: ${CLAUDE_CONFIG_DIR:-~/.claude} ~/.claude.json
# dream.sandbox.programs: claude
#
# The dream prompt arrives on stdin, which `claude -p` reads. git dream's Landlock
# sandbox is the boundary here: Claude Code's own bubblewrap sandbox cannot start
# inside a Landlock domain, so leave it off for this run. Bash is allowed because
# the agent edits memory with `git memory …` commands (our scripts are on PATH).
set -eu
exec claude -p --output-format text \
    --permission-mode acceptEdits \
    --allowedTools "Bash,Read,Edit,Write,Glob,Grep"
