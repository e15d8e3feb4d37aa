#!/bin/sh
# A dream agent that rewrites its branch's history: a parentless commit in its place.
git memory create notes/a.md "hello" -d "A note" -m "add a note" >/dev/null
tree=$(git rev-parse "HEAD^{tree}")
orphan=$(echo "rewrite history" | git commit-tree "$tree")
git reset -q --hard "$orphan"
