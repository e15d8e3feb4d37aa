#!/bin/sh
# A dream agent for dream.resolve=agent. First pass: record tea, then wait until the
# file $1 exists (the test changes the same line meanwhile). Resolving pass
# ($DREAM_RESOLVE set): check the prompt carries the hunks and both versions, then
# write the reconciled line. $2 = "fail" makes the resolving pass commit and exit 1.
if [ -n "$DREAM_RESOLVE" ]; then
    grep -q '^<<<<<<< ' "$DREAM_PROMPT_FILE" || { echo "no conflict hunks in the prompt"; exit 3; }
    grep -q 'The user drinks coffee.' "$DREAM_PROMPT_FILE" || { echo "no memory version"; exit 3; }
    grep -q 'The user drinks tea.' "$DREAM_PROMPT_FILE" || { echo "no dream version"; exit 3; }
    [ "$DREAM_CONFLICTS" = "system/human.md" ] || { echo "DREAM_CONFLICTS=$DREAM_CONFLICTS"; exit 3; }
    git memory str_replace system/human.md "The user drinks coffee." "The user drinks coffee and tea." \
        -m "Reconcile: coffee and tea"
    [ "$2" = "fail" ] && exit 1
    exit 0
fi
git memory str_replace system/human.md "Nothing recorded yet." "The user drinks tea." \
    -m "Record that the user drinks tea"
while [ ! -e "$1" ]; do sleep 0.02; done
