"""`git memory mcp`: the memory as a Model Context Protocol server (needs the [mcp] extra).

    tools.py     the tools: one per operation, results as {ok, commit, paths, message}
    resources.py memory:// resources, and the HEAD watcher behind subscriptions
    prompts.py   the server instructions and the remember / reflect / load_memory prompts
    server.py    the server itself, over stdio or streamable HTTP
    install.py   writing a client's configuration (Claude Code, Codex, plain JSON)

Which repository a call works on, the tokens and the Host checks are gitmemfs.web's
(shared with `git memory review`). A front end like cli/: it calls the same operations in process, through the same
writer lock and write path, and keeps no state the repository does not.
"""
