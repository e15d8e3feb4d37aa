"""What an agent or a person reads: projections of a committed tree.

    compile.py    the system-prompt projection (and upstream's, --compat letta)
    tree.py       the one box-drawing tree renderer, with upstream's caps
    tokens.py     the projection's size
    collation.py  the sort order upstream uses (ICU root collation)
    search.py     git memory search: ranked words (BM25F), literal, regex; at a commit or in history
    searchindex.py  the search index: SQLite FTS5 over one tree, under the git directory
    regexbound.py   regular expressions matched in a child process with a deadline
    history.py    git memory log, show and diff
"""
