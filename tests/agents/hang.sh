#!/bin/sh
# A dream agent that commits, then hangs with children that try to outlive it:
# one ignores SIGTERM, one is orphaned into the same group, one escapes with setsid.
# Each carries "leftover-$DREAM_ID" in its command line, so a test can look for it from
# outside the agent's PID namespace (the pids it prints are the namespace's own).
git memory create notes/before-hang.md "Made before hanging." -d "Work done before the hang" \
    -m "Work before hanging"
sh -c 'trap "" TERM; while :; do sleep 0.05; done' "leftover-$DREAM_ID" &
echo "grandchild=$!"
( sh -c 'trap "" TERM; while :; do sleep 0.05; done' "leftover-$DREAM_ID" & echo "orphan=$!" )
setsid sh -c 'trap "" TERM HUP; while :; do sleep 0.05; done' "leftover-$DREAM_ID" &
echo "escaper=$!"
sleep 1000
