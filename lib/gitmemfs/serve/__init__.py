"""`git memory serve`: every memory under --root over git smart HTTP, by `git http-backend`.

    repos.py   where a memory lives (DIR/<name>.git), its receive settings and gate, its creation
    land.py    the merge queue: the post-receive hook that lands pushes made to refs/land/
    paths.py   which memory and which git service a request's URL names (Letta's and a plain layout)
    cgi.py     one `git http-backend` run per request, bodies streamed both ways
    access.py  the checks every request passes: URL, key, grant, creation on first use
    server.py  the built-in HTTP front: Host check, then git (access.py, cgi.py), /mcp or the page
    worktrees.py the server's own work tree per memory, for /mcp and the page; changes land by push
    gateway.py the same as a CGI program, for nginx + fcgiwrap (`git memory serve cgi`)

Keys and their grants are web/keys.py (shared with the other servers).
"""
