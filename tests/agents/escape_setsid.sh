#!/bin/sh
# A dream agent that leaves processes behind that drop the DREAM_ID marker: one in a
# new session, one double-forked into a new session with a scrubbed environment. It
# prints their pids ("LEFT: <pid> <pid>") and exits; the dream must stop them anyway.
# Their command lines carry "leftover-<id>" for a test looking from outside.
tag="leftover-$DREAM_ID"
env -u DREAM_ID setsid sh -c "echo \$\$ > '$TMPDIR/p1'; while :; do sleep 0.05; done" "$tag" </dev/null >/dev/null 2>&1 &
( env -i PATH="$PATH" setsid sh -c "echo \$\$ > '$TMPDIR/p2'; while :; do sleep 0.05; done" "$tag" </dev/null >/dev/null 2>&1 & ) &
while [ ! -s "$TMPDIR/p1" ] || [ ! -s "$TMPDIR/p2" ]; do sleep 0.02; done
echo "LEFT: $(cat "$TMPDIR/p1") $(cat "$TMPDIR/p2")"
