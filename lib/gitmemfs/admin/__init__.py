"""Setting a memory repository up.

    init.py  git memory init: the repository, its seed files, its hooks
    proposals.py  git memory proposals: a person lists, shows, accepts or rejects them
"""
