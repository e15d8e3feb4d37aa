#!/bin/sh
# A dream agent that copies everything it was handed — the prompt and the transcript
# file — into a memory commit, as a careless agent would ("keep the conversation").
mkdir -p notes
{
    printf -- '---\ndescription: what the dream was given\n---\n'
    cat "$DREAM_PROMPT_FILE"
    if [ -n "${DREAM_TRANSCRIPT:-}" ]; then cat "$DREAM_TRANSCRIPT"; fi
} > notes/payload.md
git add notes/payload.md && git commit -q -m "Keep what the dream was given"
