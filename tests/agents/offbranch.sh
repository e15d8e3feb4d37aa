#!/bin/sh
# A dream agent that commits on a detached HEAD instead of its branch.
git checkout -q --detach
printf -- '---\ndescription: Detached work\n---\nMade on a detached HEAD.\n' > notes-detached.md
git add notes-detached.md
git commit -q -m "Commit on a detached HEAD"
