#!/bin/sh
# A dream agent that tries to change modes, owners and flags of the parent's files
# (Landlock does not cover chmod). Prints "DENIED: <what>" or "WROTE: <what>".
common=$(cd "$MEMORY_DIR/../../.." && pwd -P)   # the memory's git dir (the checkout is in it)
parent=$(dirname "$common")
try() {
    label=$1; shift
    if "$@" >/dev/null 2>&1; then echo "WROTE: $label"; else echo "DENIED: $label"; fi
}
try chmod-system chmod 000 "$parent/system"
try chmod-refs chmod 000 "$common/refs/heads"
try chmod-config chmod 666 "$common/config"
try chown-config chown "$(id -u):$(id -g)" "$common/config"
try chmod-own chmod 600 system/human.md
try python-chmod python3 -c "import os; os.chmod('$parent/system/human.md', 0o600)"
