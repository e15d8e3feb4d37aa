#!/bin/sh
# A dream agent that commits content breaking the memory rules, bypassing hooks.
printf 'no frontmatter here\n' > system/broken.md
git add system/broken.md
git commit -q --no-verify -m "Add a file without frontmatter"
