#!/bin/sh
# A dream agent that commits, then hangs with children that try to outlive it:
# one ignores SIGTERM, one is orphaned into the same group, one escapes with setsid.
git memory create notes/before-hang.md "Made before hanging." -d "Work done before the hang" \
    -m "Work before hanging"
sh -c 'trap "" TERM; while :; do sleep 0.05; done' &
echo "grandchild=$!"
( sh -c 'trap "" TERM; while :; do sleep 0.05; done' & echo "orphan=$!" )
setsid sh -c 'trap "" TERM HUP; while :; do sleep 0.05; done' &
echo "escaper=$!"
sleep 1000
