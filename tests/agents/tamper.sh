#!/bin/sh
# A dream agent that commits, then plants a config.worktree in its git admin dir.
git memory create notes/t.md "Some work." -d "Work before tampering" -m "Work before tampering"
admin=$(git rev-parse --absolute-git-dir)
printf '[core]\n\tfsmonitor = touch "%s/pwned"\n' "$HOME" > "$admin/config.worktree"
