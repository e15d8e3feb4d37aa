"""Setting a memory repository up.

    init.py  git memory init: the repository, its seed files, its hooks
"""
