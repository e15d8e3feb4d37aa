"""Every write operation an agent or a person asks for.

    editor.py  the six memory commands (create, str_replace, insert, delete, rename,
               update_description) and view, through core.writer
    patch/     git memory-patch: the apply_patch grammar, the hunk engine, applying it
    undo.py    git memory undo and restore, through core.writer
"""
