"""The HTTP plumbing every server of ours shares (`git memory mcp --http`, `review`, `serve`).

    auth.py      tokens and keys: generation, constant-time matching, hashes for stored keys,
                 a --tokens file, where a loopback-only server may bind
    keys.py      issued keys (`git memory serve keys`): stored as hashes, with their grants
    hosts.py     the Host and Origin a request may carry (DNS rebinding, cross-site requests)
    gate.py      the ASGI wrapper that answers 401 / 403 / 404 before the app sees a request
    listen.py    the listening socket (loopback unless told, any free port with 0)
    memories.py  which memory repository a request names (one, or one per agent under --root)
    asgi.py      the ASGI apps (MCP, the page) behind serve's stdlib handler, on one event loop

One copy of each: a server adds its own routes, never its own checks.
"""
