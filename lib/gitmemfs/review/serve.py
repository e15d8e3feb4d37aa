"""`git memory review`: serve the page until stopped.

The session token is made here (web.auth.new_token) and printed once inside the URL.
To open a browser, the URL goes in a file only the person can read (state_dir(),
mode 0600 in a 0700 folder) and the browser is opened on that file, so the token never
reaches a browser's argv; the file is deleted as soon as a browser has logged in (and
never written with --no-browser). No child of ours sees the token in its environment,
and the access log is off (URLs would carry it).
"""
from __future__ import annotations

import html
import json
import os
import signal
import sys
import webbrowser
from typing import Any

from gitmemfs.core.errors import UsageError
from gitmemfs.core.redact import register_secret
from gitmemfs.review.app import build
from gitmemfs.web import auth, listen
from gitmemfs.web.gate import Gate
from gitmemfs.web.hosts import HostPolicy, shown
from gitmemfs.web.keys import KeyStore
from gitmemfs.web.memories import Memories, served

COOKIE = "gitmemfs_review_{port}"  # a cookie is per host, not per port: one name per server
TOKEN_ENV = "GIT_MEMORY_REVIEW_TOKEN"  # needed (and taken from the environment) to bind beyond loopback


def state_dir() -> str:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "git-memfs", "review")


def _login_file(url: str, port: int) -> str:
    """A page that sends the browser to `url`, readable by the person only."""
    folder = state_dir()
    os.makedirs(folder, mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)
    path = os.path.join(folder, f"{port}.html")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(f'<!doctype html><meta http-equiv="refresh" content="0;url={html.escape(url)}">'
                 f'<a href="{html.escape(url)}">git memory review</a>\n')
    return path


def run(memory_dir: str | None, root: str | None, *, host: str = "127.0.0.1", port: int = 0,
        browser: bool = True, as_json: bool = False) -> int:
    import uvicorn

    memories = served(memory_dir, root, "review")  # no approval a shell exported reaches the page's work
    given = os.environ.pop(TOKEN_ENV, None) or None
    auth.check_bind(host, bool(given), "review", f"set {TOKEN_ENV} to a secret of at least {auth.MIN_TOKEN} "
                    "characters (the page's URL then carries it)")
    if given is not None and len(given) < auth.MIN_TOKEN:
        raise UsageError(f"review: {TOKEN_ENV} must be at least {auth.MIN_TOKEN} characters")
    token = given or auth.new_token()
    register_secret(token)
    sock = listen.bind(host, port, "review")
    port = sock.getsockname()[1]
    hosts = HostPolicy(host, port)
    url = f"http://{shown(host)}:{port}/?token={token}"
    login = _login_file(url, port) if browser and _has_browser() else None
    app: Any = Gate(build(memories, token, hosts), {token.encode(): None}, hosts=hosts, cookie=COOKIE.format(port=port),
                    advice="open the URL git memory review printed (it carries the session's token)", text=True,
                    on_login=lambda: _remove(login))
    if as_json:
        sys.stdout.write(json.dumps({"ok": True, "url": url, "port": port, "host": host, "login_file": login}) + "\n")
    else:
        sys.stdout.write(f"git memory review: serving {'every memory under ' + root if root else 'the memory'}\n"
                         f"    {url}\n(open it in a browser; Ctrl-C stops the server)\n")
    sys.stdout.flush()
    if login:
        try:
            webbrowser.open("file://" + login)  # a file path in the browser's argv, never the token
        except webbrowser.Error:
            pass
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off"))
    # uvicorn stops gracefully on SIGTERM, then raises it again: end through `finally` here.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        server.run(sockets=[sock])
    finally:
        _remove(login)
    return 0


PAGE_KINDS = ("person", "operator")


def mounted(memories: Memories, policy: HostPolicy, keys: KeyStore) -> Any:
    """The page for `git memory serve`, on its port: a person's or an operator's key logs
    in (`/?token=<key>` once, then a cookie); it shows the memories the key may read and
    acts only where it may write. An agent's key is refused: an agent reviews nothing."""
    def admit(grant: Any) -> str | None:
        if grant.kind in PAGE_KINDS:
            return None
        return (f"key {grant.id} is an agent's key; the review page takes a person's or an operator's key "
                f"(git memory serve keys add ID --kind person)")

    secret = auth.new_token()  # the form token's root: this process's own, never a key
    port = policy.port or 0
    return Gate(build(memories, secret, policy), lambda v: keys.find(v) or False, hosts=policy,
                cookie=COOKIE.format(port=port), text=True, admit=admit, basic=True,
                advice="open the page as /?token=<key> with a person's or an operator's key "
                       "(git memory serve keys add ID --kind person)")


def _has_browser() -> bool:
    """A graphical browser to open (or $BROWSER): on a console alone, webbrowser would run a
    text browser in the terminal the server prints to."""
    return bool(os.environ.get("BROWSER") or os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
                or sys.platform == "darwin")


def _remove(path: str | None) -> None:
    if path:
        try:
            os.unlink(path)
        except OSError:
            pass
