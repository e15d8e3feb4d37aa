"""The validator at every gate, and the hooks that run it.

    check.py   the engine: staged changes, a tree, a commit range, a push (one cat-file)
    approved.py  which commits carry a person's approval (signed, where signers are set)
    hooks.py   installing the hook scripts where git looks, and telling whether they run
    redaction.py  telling a redaction from any other history rewrite (pairing old and new)

The hook entry point itself is `gitmemfs.hookmain`, at the top: it is a front end.
"""
