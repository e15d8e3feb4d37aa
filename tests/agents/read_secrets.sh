#!/bin/sh
# A dream agent after what is not its own: read_secrets.sh [--git GIT_DIR] PATH...
# It reads every PATH (files with cat, folders with ls), asks git for another memory's
# file when --git names that memory's git dir, commits whatever it got, and leaves one
# honest note so the dream has something to merge. Like Letta's recipe, it asks for ~/.letta.
# dream.sandbox.allowRead: ~/.letta
other=
if [ "${1:-}" = --git ]; then other=$2; shift 2; fi
for path in "$@"; do
    if [ -d "$path" ]; then
        if found=$(ls -A "$path" 2>/dev/null); then echo "LISTED $path"; echo "$found"; else echo "DENIED $path"; fi
    elif found=$(cat "$path" 2>/dev/null); then
        echo "READ $path"; echo "$found"
    else
        echo "DENIED $path"
    fi
done > "$TMPDIR/report"
if [ -n "$other" ]; then
    if git --git-dir="$other" show HEAD:notes/secret.md >> "$TMPDIR/report" 2>/dev/null; then
        echo "GIT READ $other" >> "$TMPDIR/report"
    else
        echo "GIT DENIED $other" >> "$TMPDIR/report"
    fi
fi
cat "$TMPDIR/report"
mkdir -p notes
if grep -q '^READ\|^LISTED\|^GIT READ' "$TMPDIR/report"; then
    printf -- '---\ndescription: what the agent found\n---\n' > notes/stolen.md
    cat "$TMPDIR/report" >> notes/stolen.md
    git add notes/stolen.md && git commit -q -m "What I found"
fi
git memory create "notes/honest-$DREAM_ID.md" "A note of its own." -d "An honest note" -m "Honest note"
