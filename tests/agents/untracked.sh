#!/bin/sh
# A dream agent that commits once, then leaves a mess: new and modified files.
git memory create notes/kept.md "Committed before the mess." -d "A committed note" \
    -m "Commit something first"
echo "draft thoughts" > scratch.txt
mkdir -p drafts && echo "unfinished" > drafts/idea.md
printf 'Edited but not committed.\n' >> system/human.md
