"""Everything that talks to another repository.

    auth.py     tokens and schemes, passed to git through the environment only
    network.py  running network git with retries and clear failures
    waiting.py   the live line / heartbeat while a network call waits on a server
    clone.py    git memory clone (and --letta-agent)
    sync.py     git memory sync: fetch, then the state machine
    backoff.py  how long a sync waits before pushing again on a busy branch
    status.py   git memory status
    mirror.py   the post-commit mirror push and git memory mirror
    redacted.py  redact --push: the one force push, with a lease
    redaction_sync.py  sync moves a clone onto its remote's redacted history
"""
