#!/bin/sh
# A dream agent that leaves processes behind that drop the DREAM_ID marker: one in a
# new session, one double-forked into a new session with a scrubbed environment. It
# prints their pids ("LEFT: <pid> <pid>") and exits; the dream must stop them anyway.
env -u DREAM_ID setsid sh -c "echo \$\$ > '$TMPDIR/p1'; exec sleep 30" </dev/null >/dev/null 2>&1 &
( env -i PATH="$PATH" setsid sh -c "echo \$\$ > '$TMPDIR/p2'; exec sleep 30" </dev/null >/dev/null 2>&1 & ) &
while [ ! -s "$TMPDIR/p1" ] || [ ! -s "$TMPDIR/p2" ]; do sleep 0.02; done
echo "LEFT: $(cat "$TMPDIR/p1") $(cat "$TMPDIR/p2")"
