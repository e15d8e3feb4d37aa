#!/bin/sh
# A dream agent that reports its environment, stdin and process group, and changes nothing.
for name in MEMORY_DIR DREAM_ID DREAM_PROMPT_FILE DREAM_BASE DREAM_BRANCH AGENT_ID AGENT_NAME TMPDIR \
            DREAM_TRANSCRIPT; do
    eval "echo ENV $name=\${$name}"
done
echo "PWD=$(pwd)"
echo "GIT_MEMORY=$(command -v git-memory)"
echo "STDIN=$(cksum | cut -d' ' -f1,2)"
echo "PROMPT=$(cksum < "$DREAM_PROMPT_FILE" | cut -d' ' -f1,2)"
echo "PGID=$(cut -d' ' -f5 /proc/$$/stat) SID=$(cut -d' ' -f6 /proc/$$/stat)"
echo "GC_AUTO=$(git config gc.auto) MAINTENANCE_AUTO=$(git config maintenance.auto)"
