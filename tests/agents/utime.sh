#!/bin/sh
# A dream agent that back-dates the parent's files (Landlock has no right for
# timestamps). Prints "DENIED: <what>" or "WROTE: <what>".
common=$(cd "$MEMORY_DIR/../../.." && pwd -P)   # the memory's git dir (the checkout is in it)
parent=$(dirname "$common")
try() {
    label=$1; shift
    if "$@" >/dev/null 2>&1; then echo "WROTE: $label"; else echo "DENIED: $label"; fi
}
try touch-config touch -d 2001-01-01 "$common/config"
try touch-memory touch -d 2001-01-01 "$parent/system/human.md"
try touch-own-dated touch -d 2001-01-01 system/human.md
try python-utime python3 -c "import os; os.utime('$common/config', (0, 0))"
try touch-own-now touch notes-new-file
rm -f notes-new-file
