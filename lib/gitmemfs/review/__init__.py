"""`git memory review`: the person's page in a browser (needs the [review] extra).

    serve.py     the command: the session token, the socket, the URL, the browser
    app.py       the routes: GET views, POST actions (form token + Origin), the CSP
    views.py     what each view shows, read through the operations
    pending.py   what waits for the person: one list of items, one Source per kind
    render.py    agent text made safe (Markdown, HTML off), word-level diffs, SVG charts
    templates/   Jinja2 pages (autoescaped); static/ the stylesheet

A front end like cli/ and mcp/: it calls the same operations in process, and the
HTTP checks are gitmemfs.web's.
"""
