"""ASGI apps (the MCP endpoint, the review page) behind a stdlib HTTP handler.

`git memory serve` answers git from a thread per request (a CGI child with blocking
pipes); the MCP SDK's streamable HTTP app and the review page are ASGI apps. Rather
than a second server on a second port, the handler's thread hands the request to
`Loop`, one event loop in a thread of its own that runs the apps' lifespans and their
requests, and writes the answer as it comes: a body the app streams (MCP's server-sent
events) goes out in chunks, one `write` per message, with the connection closed after.

The request body is read whole before the app runs (an MCP message or a form: small,
and capped by the caller); the app sees `http.disconnect` once the client has gone,
which for an idle stream is noticed within IDLE seconds.
"""
from __future__ import annotations

import asyncio
import queue
import select
import socket
import threading
from typing import Any
from urllib.parse import unquote

IDLE = 1.0  # seconds between looks at an idle stream's socket: has its client gone?
_DONE = object()


class Loop:
    """One event loop thread for every app mounted; `start` runs their lifespans."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="asgi", daemon=True)
        self._stops: list[asyncio.Event] = []

    def start(self, apps: list[Any]) -> None:
        self.thread.start()
        for app in apps:
            asyncio.run_coroutine_threadsafe(self._startup(app), self.loop).result(timeout=60)

    async def _startup(self, app: Any) -> None:
        started: asyncio.Future[None] = self.loop.create_future()
        stop = asyncio.Event()
        self._stops.append(stop)
        sent = False

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "lifespan.startup"}
            await stop.wait()
            return {"type": "lifespan.shutdown"}

        async def send(message: dict[str, Any]) -> None:
            kind = message["type"]
            if kind == "lifespan.startup.complete" and not started.done():
                started.set_result(None)
            elif kind == "lifespan.startup.failed" and not started.done():
                started.set_exception(RuntimeError(message.get("message") or "an app failed to start"))

        async def run() -> None:
            try:
                await app({"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}, receive, send)
            except Exception as exc:  # noqa: BLE001 - an app without a lifespan is started already
                if not started.done():
                    started.set_exception(exc)
            if not started.done():
                started.set_result(None)

        self.loop.create_task(run())
        await started

    def stop(self) -> None:
        for stop in self._stops:
            self.loop.call_soon_threadsafe(stop.set)

    def serve(self, app: Any, handler: Any, path: str, query: str, body: bytes) -> None:
        """Answer the request `handler` (a BaseHTTPRequestHandler) holds with `app`; `body`
        is the request's body, read whole (an MCP message or a form: small, and capped)."""
        out: queue.Queue[Any] = queue.Queue()
        gone = asyncio.Event()  # set on the loop once the client has gone
        pending = [body]
        host, port = handler.server.server_address[:2]
        scope = {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": "1.1",
                 "method": handler.command, "scheme": "http", "path": unquote(path), "raw_path": path.encode(),
                 "query_string": query.encode("latin-1"), "root_path": "",
                 "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in handler.headers.items()],
                 "client": tuple(handler.client_address[:2]), "server": (host, port), "state": {}}

        async def receive() -> dict[str, Any]:
            if pending:
                return {"type": "http.request", "body": pending.pop(), "more_body": False}
            await gone.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            if gone.is_set():
                raise OSError("the client went away")
            out.put(message)

        async def call() -> None:
            try:
                await app(scope, receive, send)
            finally:
                out.put(_DONE)

        # Never cancelled: an app may still work after its answer is out (the MCP SDK
        # keeps a session only once the answer to its opening request is "sent"); from
        # here on it hears http.disconnect, as from any ASGI server.
        asyncio.run_coroutine_threadsafe(call(), self.loop)
        try:
            self._write(handler, out)
        finally:
            self.loop.call_soon_threadsafe(gone.set)

    @staticmethod
    def _write(handler: Any, out: queue.Queue[Any]) -> None:
        chunked = False
        started = False
        try:
            while True:
                try:
                    message = out.get(timeout=IDLE)
                except queue.Empty:
                    if _closed(handler.connection):
                        return  # an idle stream (MCP's GET) whose client left
                    continue
                if message is _DONE:
                    break
                if message["type"] == "http.response.start":
                    started = True
                    handler.send_response(message["status"])
                    names = set()
                    for key, value in message.get("headers") or ():
                        name = bytes(key).decode("latin-1")
                        names.add(name.lower())
                        if name.lower() not in ("connection", "transfer-encoding"):
                            handler.send_header(name, bytes(value).decode("latin-1"))
                    # HTTP/1.0 (nginx's default to a proxied server) has no chunks: the
                    # body then ends where the connection does.
                    chunked = "content-length" not in names and handler.request_version != "HTTP/1.0"
                    if chunked:
                        handler.send_header("Transfer-Encoding", "chunked")
                    handler.send_header("Connection", "close")
                    handler.end_headers()
                    handler.wfile.flush()
                elif message["type"] == "http.response.body":
                    data = bytes(message.get("body") or b"")
                    if data:
                        handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data) if chunked else data)
                    if not message.get("more_body", False):
                        break
                    handler.wfile.flush()
            if not started:
                handler.send_error(500, "the app gave no answer")
                return
            if chunked:
                handler.wfile.write(b"0\r\n\r\n")
            handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass


def _closed(sock: socket.socket) -> bool:
    """Whether the peer closed `sock` (readable, and a peek reads nothing)."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        return bool(readable) and not sock.recv(1, socket.MSG_PEEK)
    except OSError:
        return True
