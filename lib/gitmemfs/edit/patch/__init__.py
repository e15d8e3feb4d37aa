"""git memory-patch: one apply_patch document as one commit.

    grammar.py  parsing the document into operations
    hunks.py    applying hunks to a file's lines (exact, anchored, unambiguous)
    apply.py    one virtual view of all files, validated, written and committed together
"""
