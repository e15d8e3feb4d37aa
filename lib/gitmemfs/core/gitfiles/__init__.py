"""Reading git's own files without a git process, only where the answer is certain.

Each reader answers exactly what git would, or None ("ask git"), and never writes
any file of git's. Each one saves a git process on a path that runs on every edit
or commit, and tests/ holds each to git's own answer on generated repositories.

    discovery.py finding the work tree and git dir from a folder (rev-parse)
    gitconfig.py the settings git would see (git config --list)
    index.py     entries of the index file (the hook's `:path` look-ups)
    loose.py     loose objects, zlib and hash checked (the hook's cat-file)
"""
