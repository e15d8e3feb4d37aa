"""The base every other package stands on; it imports nothing above it.

    errors.py    the exception types and their exit codes
    redact.py    masking secrets in every message, log line and JSON object
    visible.py   control characters in agent text shown as escapes on a terminal
    git.py       the local git runner (posix_spawn, cat-file --batch), argv, env, GitError
    gitnet.py    the network git runner (clone, fetch, push, ls-remote) through sh
    detach.py    starting a process fully detached (mirror push, background dreams)
    paths.py     memory-path normalisation and the jail
    memfile.py   frontmatter parse and render
    layout.py    the three layouts (letta, letta-root, plain): detection, core and memory files
    rules.py     the validator: pure functions over file bytes
    layoutmoves.py  what a write does to the layout (the write path's view of rules.layout_moves)
    snapshot.py  reading a committed tree (ls-tree + cat-file) for the gate and the views
    repo.py      finding and opening a memory repository, locks, identity
    gitfiles/    reading git's own files without a git process, when certain: discovery,
                 gitconfig, index, loose (each exact or "ask git"; never writing)
    writer.py    the write path: lock, clean check, validate, write, commit, restore
    hookless.py  committing a validated change without re-running our own hooks
    proposal.py  a change only a person may make, kept as refs/memory/proposals/ID
    ownconfig.py the programs git runs in a person's command: the person's own, never the memory's
    durable.py   fsync settings for git, and fsyncing what a writer changed before it answers
    integrity.py a new memory told from a damaged one (missing objects, refs naming nothing)
    outcome.py   what an operation returns
    revision.py  naming commits and past files, with errors that say where to look
    memdiff.py   body-aware diffs (frontmatter keys apart from the body)
    jsoninput.py JSON from people and agents, read strictly (duplicate keys, depth, numbers)
    cachedir.py  where the caches are kept: the person's cache folder, never the git dir
    purge.py     forgetting a rewritten history: the caches, reflogs, unreachable objects
"""
