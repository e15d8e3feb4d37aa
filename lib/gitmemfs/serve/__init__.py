"""`git memory serve`: every memory under --root over git smart HTTP, by `git http-backend`.

    repos.py   where a memory lives (DIR/<name>.git), its receive settings and gate, its creation
    paths.py   which memory and which git service a request's URL names (Letta's and a plain layout)
    cgi.py     one `git http-backend` run per request, bodies streamed both ways
    server.py  the HTTP front: Host check, key check, grant check, then cgi.py

Keys and their grants are web/keys.py (shared with the other servers).
"""
