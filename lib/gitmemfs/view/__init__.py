"""What an agent or a person reads: projections of a committed tree.

    compile.py    the system-prompt projection (and upstream's, --compat letta)
    tree.py       the one box-drawing tree renderer, with upstream's caps
    tokens.py     the projection's size
    collation.py  the sort order upstream uses (ICU root collation)
    search.py     git memory search: git grep at a commit or over every past version, BM25
    history.py    git memory log, show and diff
"""
