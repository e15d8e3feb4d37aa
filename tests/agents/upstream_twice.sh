#!/bin/sh
# A dream agent whose first commit main will also have (same patch), then a commit of
# its own elsewhere; waits for the file $1 between them and the end.
git memory str_replace system/human.md "Nothing recorded yet." "The user drinks tea." \
    -m "Record that the user drinks tea"
git memory create notes/dream.md "Written by the dream." -d "Dream note" -m "Dream note"
while [ ! -e "$1" ]; do sleep 0.02; done
