"""`git dream`: reflection and tidying in a sandboxed worktree (DESIGN §9).

    lifecycle.py  the pass: lock, prepare, worktree, payload, agent, finalize, merge/keep
    state.py      where a dream keeps its files; ids, run records, the source cursors
    worktree.py   the worktree on branch dream/<id>: create, inspect safely, remove
    sources.py    --from transcript:/openhands: sources, normalised, sliced at the cursor
    sources_agents.py  Claude Code and Codex session files read into transcript rows; auto discovery
    payload.py    the prompt: our instructions, the memory snapshot, the transcript
    masking.py    secrets masked in every source's payload and the -i text
    environment.py  the agent's environment by allow-list (plus dream.passEnv)
    runner.py     running the agent command: process group, log, timeout
    pidns.py      the agent in its own PID and mount namespace (other environs, sockets hidden)
    progress.py   the live line and the heartbeat while the agent runs
    sandbox.py    Landlock (files, TCP ports; a seccomp filter against chmod) by a launcher
    quarantine.py the agent's own object folder; importing its objects verified
    recovery.py   collecting what a run left (refs disarmed, objects in); leftovers
    finalize.py   deciding the outcome, validating, merging or keeping the work
    rebase.py     replaying a dream's commits onto a memory that moved (merged_after_rebase)
    resolve.py    dream.resolve=agent: the conflicts and the prompt of a resolving run
    manage.py     list / show / finish / drop
    trigger.py    --auto and --background; `maybe_launch` for the post-commit hook
    builtin.py    the offline agents builtin:tidy and builtin:notes

This package file stays empty on purpose: the post-commit hook imports
`gitmemfs.dream.trigger`, and the launcher runs `sandbox.py` as a plain script.
"""
