#!/bin/sh
# A dream agent that commits, then plants something in the dream ref folder that makes
# git act on main: $1 is symref (its own branch), side-symref, folder-link or file-link.
git memory create notes/planted.md "Work before planting." -d "Before the plant" -m "Work before planting"
common=$(git rev-parse --path-format=absolute --git-common-dir)
case $1 in
    symref) printf 'ref: refs/heads/main\n' > "$common/refs/heads/$DREAM_BRANCH" ;;
    side-symref) printf 'ref: refs/heads/main\n' > "$common/refs/heads/dream/side" ;;
    folder-link) ln -s ../../heads "$common/refs/heads/dream/evil" ;;
    file-link) ln -s ../main "$common/refs/heads/dream/link" ;;
esac
echo "PLANTED $1"
