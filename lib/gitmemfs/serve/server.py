"""The HTTP front of `git memory serve`: checks, then `git http-backend`.

A stdlib ThreadingHTTPServer, not the review page's uvicorn: http-backend is a CGI
child with blocking pipes, and a thread per request streams a pack into it and its
answer out with no event loop to hand bytes across (and no extra to install).

First the Host header (on loopback; DNS rebinding), else 403; then the route:
- git (`/v1/git/...`, `/<name>.git/...`): access.py's checks (URL, key, grant, creation),
  then git http-backend;
- `/mcp`: the MCP endpoint, and every other path: the review page. Both are ASGI apps
  (mcp/, review/) run by web/asgi.py's loop, behind web/gate.py with the same keys, on
  the memories' own work trees (worktrees.py). The front end (cli/cmd_serve.py) hands
  them in as `mounts`: serve does not import the other servers.
"""
from __future__ import annotations

import json
import os
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterator

from gitmemfs.core.errors import MemfsError
from gitmemfs.serve import access, cgi, paths, repos
from gitmemfs.serve.worktrees import ServedMemories
from gitmemfs.web import auth, listen
from gitmemfs.web.asgi import Loop
from gitmemfs.web.hosts import HostPolicy, extra_origins, shown
from gitmemfs.web.keys import Grant, KeyStore
from gitmemfs.web.memories import Memories

# route -> what makes its ASGI app from the served memories, the Host policy and the keys
Mounts = dict[str, Callable[[Memories, HostPolicy, KeyStore], Any]]
MOUNT_HELP = {"mcp": "/mcp needs the [mcp] extra: pip install 'git-memfs[mcp]'",
              "page": "not a memory URL; use /v1/git/<agentId>/state.git or /<name>.git (smart HTTP only); "
                      "the review page here needs the [review] extra: pip install 'git-memfs[review]'"}
ORIGINS_ENV = "GIT_MEMORY_SERVE_ORIGINS"  # the origins browsers see behind a proxy, comma-separated
MAX_APP_BODY = 32 << 20  # an MCP message or a form: a whole memory file fits, a flood does not

MAX_LINE = 65536  # a chunk-size line longer than this is not a git client's
# git http-backend children at once (each push also runs the gate): more wait their turn
# rather than share the cores until every one is slow.
MAX_BACKENDS = 4 * (os.cpu_count() or 1)


class Service:
    """What every request handler shares."""

    def __init__(self, root: str, layout: str, hosts: HostPolicy | None):
        self.root = root
        self.keys = KeyStore(root)
        self.maker = repos.Maker(root, layout)
        self.hosts = hosts
        self.slots = threading.BoundedSemaphore(MAX_BACKENDS)
        self.apps: dict[str, Any] = {}
        self.loop = Loop()

    def mount(self, mounts: Mounts, policy: HostPolicy) -> None:
        memories = ServedMemories(self.maker)
        self.apps = {route: make(memories, policy, self.keys) for route, make in mounts.items()}
        self.loop.start(list(self.apps.values()))


def route(path: str) -> str:
    """Which part of the server a path is for: git, mcp or page."""
    if path == "/mcp" or path.startswith("/mcp/"):
        return "mcp"
    if path.startswith("/v1/") or ".git/" in path or path.endswith(".git"):
        return "git"
    return "page"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # git sends large pushes chunked, which HTTP/1.0 has not
    server_version = "git-memory-serve"
    sys_version = ""

    def version_string(self) -> str:
        return self.server_version
    timeout = 600  # a stalled client frees its thread
    service: Service

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def do_DELETE(self) -> None:
        self._handle()  # MCP ends a session with DELETE; git has no use for it

    def log_message(self, format: str, *args: Any) -> None:
        pass  # no access log: nothing a client sent is written anywhere

    def _handle(self) -> None:
        self.close_connection = True  # one request per connection: a body we did not read never confuses the next
        svc = self.service
        path, _, query = self.path.partition("?")
        if svc.hosts is not None and not svc.hosts.host_ok(self.headers.get("Host")):
            return self._refuse(403, "this server answers only to " + ", ".join(svc.hosts.patterns()))
        where = route(path)
        if where != "git":
            return self._app(where, path, query)
        if self.command not in ("GET", "POST"):
            return self._refuse(405, f"git's smart HTTP has no {self.command}", [("Allow", "GET, POST")])
        try:
            target, grant = access.admit(svc.keys, svc.maker, path, query, self.headers.get("Authorization"))
        except access.Refusal as no:
            return self._refuse(no.status, no.message, list(no.headers))
        self._backend(target, grant)

    def _app(self, where: str, path: str, query: str) -> None:
        app = self.service.apps.get(where)
        if app is None:
            return self._refuse(404, MOUNT_HELP[where])
        length = self.headers.get("Content-Length")
        if length is not None and not length.strip().isdigit():
            return self._refuse(400, "Content-Length is not a number")
        chunked = "chunked" in (self.headers.get("Transfer-Encoding") or "").lower()
        size, parts = 0, []
        for data in self._chunks() if chunked else self._body(int(length or 0)):
            size += len(data)
            if size > MAX_APP_BODY:
                return self._refuse(413, f"a request body here is at most {MAX_APP_BODY >> 20} MiB")
            parts.append(data)
        self.service.loop.serve(app, self, path, query, b"".join(parts))

    def _backend(self, target: paths.Target, grant: Grant) -> None:
        method = self.command
        length = self.headers.get("Content-Length")
        if length is not None and not length.strip().isdigit():
            return self._refuse(400, "Content-Length is not a number")
        chunked = "chunked" in (self.headers.get("Transfer-Encoding") or "").lower()
        body = self._chunks() if chunked else self._body(int(length or 0)) if method == "POST" else None
        env = cgi.environment(self.service.root, f"/{target.name}.git{target.rest}", method=method,
                              query=self.path.partition("?")[2], user=grant.id,
                              remote_addr=self.client_address[0], content_type=self.headers.get("Content-Type"),
                              content_length=None if chunked else length,
                              encoding=self.headers.get("Content-Encoding"),
                              protocol=self.headers.get("Git-Protocol"))
        with self.service.slots:
            self._answer(cgi.run(env, body))

    def _answer(self, answer: cgi.Answer) -> None:
        try:
            self.send_response(answer.status, answer.reason)
            for name, value in answer.headers:
                self.send_header(name, value)
            self.send_header("Connection", "close")
            self.end_headers()
            for data in answer.body():
                self.wfile.write(data)
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            answer.close()

    def _body(self, length: int) -> Iterator[bytes]:
        while length > 0:
            data = self.rfile.read(min(length, cgi.CHUNK))
            if not data:
                return
            length -= len(data)
            yield data

    def _chunks(self) -> Iterator[bytes]:
        """A chunked request body, decoded (RFC 9112 §7.1)."""
        while True:
            line = self.rfile.readline(MAX_LINE)
            try:
                size = int(line.split(b";")[0].strip() or b"0", 16)
            except ValueError:
                return  # not chunked encoding: the body ends here, and git refuses what it got
            if size == 0:
                while self.rfile.readline(MAX_LINE) not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return
            yield from self._body(size)
            self.rfile.readline(MAX_LINE)

    def _refuse(self, status: int, message: str, headers: list[tuple[str, str]] | None = None) -> None:
        data = f"error: {message}\n".encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.send_header("X-Content-Type-Options", "nosniff")
        for name, value in headers or ():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128


def prepare(root: str, layout: str) -> list[str]:
    """The gate and receive settings on every memory already under `root`."""
    if not os.path.isdir(root):
        raise MemfsError(f"serve: --root {root} is not a directory; mkdir -p {root}")
    names = repos.existing(root)
    for name in names:
        repos.configure(repos.path(root, name))
    return names


def run(root: str, *, host: str = "127.0.0.1", port: int = 0, layout: str = "letta", as_json: bool = False,
        mounts: Mounts | None = None) -> int:
    root = os.path.abspath(os.path.expanduser(root))
    names = prepare(root, layout)
    sock = listen.bind(host, port, "serve")
    port = sock.getsockname()[1]
    hosts = HostPolicy(host, port) if auth.is_loopback(host) else None
    service = Service(root, layout, hosts)
    # A proxy in front (TLS) keeps the Host it reached us by; the pages' own origin is added here.
    service.mount(mounts or {}, HostPolicy(host, port, extra_origins(ORIGINS_ENV)))
    handler = type("BoundHandler", (Handler,), {"service": service})
    server = Server((host.strip("[]"), port), handler, bind_and_activate=False)
    server.socket.close()
    server.socket = sock
    url = f"http://{shown(host)}:{port}"
    if as_json:
        sys.stdout.write(json.dumps({"ok": True, "url": url, "host": host, "port": port, "root": root,
                                     "memories": names, "letta_base_url": url,
                                     "mcp": f"{url}/mcp" if "mcp" in service.apps else None,
                                     "review": f"{url}/" if "page" in service.apps else None}) + "\n")
    else:
        sys.stdout.write(f"{url}\ngit memory serve: {len(names)} memories under {root}; clone "
                         f"{url}/<name>.git or, for Letta Code, LETTA_MEMFS_BASE_URL={url} (Ctrl-C stops)\n")
    sys.stdout.flush()
    if hosts is None:
        sys.stderr.write(f"git memory serve: listening on {host} over plain HTTP; keys cross the network in the "
                         "clear unless TLS is in front (docs/serving.md, behind a real web server)\n")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        server.serve_forever(poll_interval=0.5)
    except KeyboardInterrupt:
        pass
    finally:
        service.loop.stop()
        server.server_close()
    return 0
