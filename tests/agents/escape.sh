#!/bin/sh
# A dream agent that tries to write where it must not, then commits on its own branch.
# Prints "DENIED: <what>" or "WROTE: <what>" for each attempt.
# Its checkout is <memory>/.git/dream/worktrees/<id>: the memory's git dir is three up.
common=$(cd "$MEMORY_DIR/../../.." && pwd -P)
own=$(git rev-parse --path-format=absolute --git-common-dir)   # the run's private repository
parent=$(dirname "$common")
try() {
    label=$1; shift
    if "$@" >/dev/null 2>&1; then echo "WROTE: $label"; else echo "DENIED: $label"; fi
}
try home sh -c 'echo pwned > "$HOME/escape.txt"'
try main-ref git --git-dir="$common" update-ref refs/heads/main HEAD
try main-ref-file sh -c "git rev-parse HEAD > '$common/refs/heads/main'"
try dream-ref sh -c "git rev-parse HEAD > '$common/refs/heads/dream/planted'"
try objects sh -c "echo x > '$common/objects/planted'"
try config git --git-dir="$common" config core.hooksPath "$HOME/evil-hooks"
try config-file sh -c "echo '[core]' >> '$common/config'"
try own-config sh -c "echo '[core]' >> '$own/config'"
try hook sh -c "mkdir -p '$common/hooks' && printf '#!/bin/sh\necho evil\n' > '$common/hooks/post-commit'"
try parent-tree sh -c "echo evil > '$parent/system/evil.md'"
try packed-refs sh -c "cat '$common/packed-refs' > \"\$TMPDIR/p\" 2>/dev/null; cat \"\$TMPDIR/p\" > '$common/packed-refs'"
try other-branch git branch not-a-dream-branch
try tmp sh -c 'echo x > /tmp/git-dream-escape-$DREAM_ID'
try own-tmpdir sh -c 'echo scratch > "$TMPDIR/scratch"'
echo "GC_AUTO=$(git config gc.auto)"
git memory create notes/sandbox.md "The sandbox held." -d "What the escape test learned" \
    -m "Note that the sandbox held"
