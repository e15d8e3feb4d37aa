#!/bin/sh
# A dream agent that records a fact, then waits until the file $1 exists
# (so a test can change the parent meanwhile).
git memory str_replace system/human.md "Nothing recorded yet." "The user drinks tea." \
    -m "Record that the user drinks tea"
while [ ! -e "$1" ]; do sleep 0.02; done
