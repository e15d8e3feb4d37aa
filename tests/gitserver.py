"""A real smart-HTTP git server for the tests, on loopback.

git's own `git http-backend` (CGI) does the git work; a small threading HTTP
front on 127.0.0.1 (random port) adds what the tests need:

- it demands an Authorization header: `Basic base64(user:TOKEN)` (any user) or
  `Bearer TOKEN`, and answers 401 otherwise;
- `fail_next(n, status, match)` makes the next n requests (whose path contains
  `match`) fail with that HTTP status (502, 520, ...) before git sees them, or
  drops the connection (`status=None`);
- `delay` slows every response (`delay_next` only the next few), so a test can
  watch a clone while it runs;
- `deny_push` answers 403 to pushes; `requests` records what was asked;
- `after_next(match, fn)` calls `fn()` once a request whose path contains `match`
  has been answered (e.g. to move the remote between a client's fetch and push).

It serves every bare repo under its root (`add_repo`), with pushes enabled.
`with GitServer(root) as srv:` starts it; leaving the block stops it, waits for
every handler thread and CGI child, and closes the port.
"""
from __future__ import annotations

import base64
import os
import socket
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable, Iterator, NamedTuple
from urllib.parse import urlsplit

import pytest

TOKEN = "sk-let-TESTtoken0123456789abcdefXYZ"


class Request(NamedTuple):
    method: str
    path: str
    status: int
    authorized: bool
    scheme: str          # the Authorization scheme sent ("" for none)


class GitServer:
    def __init__(self, root: Path, token: str = TOKEN, *, require_auth: bool = True):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.token = token
        self.require_auth = require_auth
        self.delay = 0.0
        self.deny_push = False
        self.requests: list[Request] = []
        self._faults: list[tuple[int | None, str]] = []
        self._delays: list[float] = []
        self._after: list[tuple[str, Callable[[], None]]] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    # -- lifecycle ------------------------------------------------------------------

    def start(self) -> GitServer:
        handler = type("Handler", (_Handler,), {"server_state": self})
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        httpd.daemon_threads = False   # stop() joins every handler thread
        httpd.block_on_close = True
        self._httpd = httpd
        self.port = httpd.server_address[1]
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"gitserver:{self.port}")
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()   # joins handler threads (block_on_close)
        assert self._thread is not None
        self._thread.join()
        self._httpd = None

    def __enter__(self) -> GitServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def port_closed(self) -> bool:
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
        except OSError:
            return True
        return False

    # -- repositories -----------------------------------------------------------------

    def add_repo(self, name: str = "memory.git") -> Path:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        _git("init", "-q", "--bare", "--initial-branch=main", str(path), cwd=self.root)
        _git("config", "http.receivepack", "true", cwd=path)
        return path

    def url(self, name: str = "memory.git") -> str:
        return f"http://127.0.0.1:{self.port}/{name}"

    # -- faults -------------------------------------------------------------------------

    def fail_next(self, count: int, status: int | None = 520, match: str = "") -> None:
        """The next `count` requests whose path contains `match` fail with `status`
        (None: the connection is dropped without an answer)."""
        with self._lock:
            self._faults += [(status, match)] * count

    def after_next(self, match: str, fn: Callable[[], None]) -> None:
        with self._lock:
            self._after.append((match, fn))

    def _answered(self, path: str) -> None:
        with self._lock:
            due = [(m, fn) for m, fn in self._after if m in path]
            self._after = [(m, fn) for m, fn in self._after if m not in path]
        for _, fn in due:
            fn()

    def delay_next(self, count: int, seconds: float) -> None:
        with self._lock:
            self._delays += [seconds] * count

    def _take(self, path: str) -> tuple[bool, int | None, float]:
        with self._lock:
            fault: tuple[bool, int | None] = (False, None)
            for i, (status, match) in enumerate(self._faults):
                if match in path:
                    del self._faults[i]
                    fault = (True, status)
                    break
            delay = self._delays.pop(0) if self._delays else self.delay
        return fault[0], fault[1], delay

    def _record(self, handler: BaseHTTPRequestHandler, status: int, authorized: bool) -> None:
        scheme = (handler.headers.get("Authorization") or "").partition(" ")[0]
        with self._lock:
            self.requests.append(Request(handler.command, handler.path, status, authorized, scheme))

    def count(self, needle: str) -> int:
        with self._lock:
            return sum(1 for r in self.requests if needle in r.path)

    def authorized(self, header: str | None) -> bool:
        if not self.require_auth:
            return True
        if not header:
            return False
        scheme, _, value = header.partition(" ")
        value = value.strip()
        if scheme.lower() == "bearer":
            return value == self.token
        if scheme.lower() == "basic":
            try:
                _user, _, password = base64.b64decode(value, validate=True).decode().partition(":")
            except (ValueError, UnicodeDecodeError):
                return False
            return password == self.token
        return False


class _Handler(BaseHTTPRequestHandler):
    server_state: GitServer
    protocol_version = "HTTP/1.0"   # one request per connection: simple and enough

    def log_message(self, format: str, *args: object) -> None:
        pass  # quiet tests

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def _serve(self) -> None:
        state = self.server_state
        body = self._read_body()
        parts = urlsplit(self.path)
        faulty, status, delay = state._take(parts.path)
        if delay:
            state._stopping.wait(delay)
        authorized = state.authorized(self.headers.get("Authorization"))
        if faulty:
            state._record(self, status or 0, authorized)
            if status is None:   # the remote end hangs up
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            self._plain(status, f"injected failure {status}\n")
            return
        if not authorized:
            state._record(self, 401, False)
            self._plain(401, "authentication required\n", {"WWW-Authenticate": 'Basic realm="memfs"'})
            return
        if state.deny_push and "git-receive-pack" in self.path:
            state._record(self, 403, True)
            self._plain(403, "pushes are not allowed\n")
            return
        code = self._cgi(parts.path, parts.query, body)
        state._record(self, code, True)
        state._answered(parts.path)

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline().strip():
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _plain(self, status: int, text: str, headers: dict[str, str] | None = None) -> None:
        data = text.encode()
        self.send_response(status, "Injected" if status >= 520 else None)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _cgi(self, path: str, query: str, body: bytes) -> int:
        state = self.server_state
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(state.root),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_PROJECT_ROOT": str(state.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "REMOTE_ADDR": self.client_address[0],
            "REMOTE_USER": "memory",
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "SERVER_PROTOCOL": "HTTP/1.1",
        }
        for header, var in (("Git-Protocol", "GIT_PROTOCOL"), ("Content-Encoding", "HTTP_CONTENT_ENCODING")):
            if self.headers.get(header):
                env[var] = self.headers[header]
        proc = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True,
                              timeout=60)
        head, _, payload = proc.stdout.partition(b"\r\n\r\n")
        if not _:
            head, _, payload = proc.stdout.partition(b"\n\n")
        status, headers = 200, []
        for line in head.decode("latin-1").splitlines():
            key, _, value = line.partition(":")
            if key.lower() == "status":
                status = int(value.strip().split()[0])
            elif key:
                headers.append((key, value.strip()))
        if proc.returncode != 0 and not head:
            status, headers, payload = 500, [("Content-Type", "text/plain")], proc.stderr
        self.send_response(status)
        for key, value in headers:
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)
        return status


def _git(*args: str, cwd: Path) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout


@pytest.fixture(name="server")
def server_fixture(tmp_path: Path) -> Iterator[GitServer]:
    """A running server with one empty bare repo, `memory.git`; stopped and checked after."""
    srv = GitServer(tmp_path / "server")
    with srv:
        srv.add_repo()
        yield srv
    assert srv.port_closed(), "the test git server left its port open"


def seed(srv: GitServer, workdir: Path, name: str = "memory.git") -> Path:
    """A fresh `git memory init` repo pushed (by path, no HTTP) into the server's
    bare repo `name`; returns the seed work tree."""
    from conftest import memory

    bare = srv.root / name
    if not bare.exists():
        srv.add_repo(name)
    work = workdir / f"seed-{name.replace('/', '_')}"
    proc = memory("init", str(work), cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    _git("push", "-q", str(bare), "main", cwd=work)
    return work


def token_env(token: str = TOKEN) -> dict[str, str]:
    return {"GIT_MEMORY_TOKEN": token}


def quick_clone(srv: GitServer, workdir: Path, dest: str, name: str = "memory.git") -> Path:
    """A clone made straight from the server's disk, then pointed at its URL: what
    `git memory clone` leaves, without the HTTP round trips (tests of sync and
    status; `git memory clone` itself is tested end to end)."""
    path = workdir / dest
    _git("clone", "-q", str(srv.root / name), str(path), cwd=workdir)
    _git("remote", "set-url", "origin", srv.url(name), cwd=path)
    _git("config", "memory.repo", "true", cwd=path)
    return path
