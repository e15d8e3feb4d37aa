#!/bin/sh
# A dream agent that commits, then plants things among the dream refs that would make
# git act on the memory's main branch: $1 is symref (its own branch), side-symref,
# folder-link or file-link. It plants them in its own repository (where it may write)
# and tries the memory's dream ref folder too.
git memory create notes/planted.md "Work before planting." -d "Before the plant" -m "Work before planting"
common=$(cd "$MEMORY_DIR/../../.." && pwd -P)
own=$(git rev-parse --path-format=absolute --git-common-dir)
plant() {  # plant DIR
    case $kind in
        symref) printf 'ref: refs/heads/main\n' > "$1/refs/heads/$DREAM_BRANCH" ;;
        side-symref) printf 'ref: refs/heads/main\n' > "$1/refs/heads/dream/side" ;;
        folder-link) ln -s "$common/refs/heads" "$1/refs/heads/dream/evil" ;;
        file-link) ln -s "$common/refs/heads/main" "$1/refs/heads/dream/link" ;;
    esac
}
kind=$1
if plant "$common" 2>/dev/null; then echo "WROTE: memory-dream-refs"; else echo "DENIED: memory-dream-refs"; fi
plant "$own" && echo "PLANTED $kind"
