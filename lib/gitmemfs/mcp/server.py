"""The MCP server: tools, resources, prompts, subscriptions; stdio or streamable HTTP.

Subscriptions are served both ways a client may ask: `subscriptions/listen`
streams (protocol 2026-07-28, through the SDK's subscription bus) and the older
`resources/subscribe` (a set of URIs per session). A watcher polls the ref files
of every repository served, so HEAD moving by any means reaches subscribers.

Over HTTP the server binds to loopback unless told otherwise, checks Host and
Origin (DNS rebinding), and when bound elsewhere requires the bearer token in
$GIT_MEMORY_MCP_TOKEN on every request (a token set on loopback is required too).
"""
from __future__ import annotations

import hmac
import ipaddress
import logging
import os
import socket
import sys
from typing import Any, Iterable

import anyio
import anyio.to_thread
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError
from mcp.server.mcpserver.resources.resource_manager import ResourceNotFoundError
from mcp.server.subscriptions import ResourcesListChanged, ResourceUpdated
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import EmptyResult, Resource, ResourceTemplate, SubscribeRequestParams, UnsubscribeRequestParams

from gitmemfs import __version__
from gitmemfs.core import approval
from gitmemfs.core.errors import MemfsError, UsageError
from gitmemfs.core.redact import redact
from gitmemfs.mcp import prompts, resources
from gitmemfs.mcp.memories import Memories
from gitmemfs.mcp.tools import Tools

TOKEN_ENV = "GIT_MEMORY_MCP_TOKEN"
ORIGINS_ENV = "GIT_MEMORY_MCP_ORIGINS"  # extra allowed Origins, comma-separated
POLL_ENV = "GIT_MEMORY_MCP_POLL"  # seconds between looks at the ref files
LOOPBACK_NAMES = ("localhost",)
log = logging.getLogger("gitmemfs.mcp")


class MemoryServer(MCPServer):
    """An MCPServer whose resources are read from the repository at each call."""

    def __init__(self, memories: Memories):
        super().__init__("git-memory", title="git memory", version=__version__,
                         instructions=prompts.INSTRUCTIONS, log_level="WARNING")
        self.memories = memories
        self.tools = Tools(memories)
        self.tools.register(self)
        prompts.register(self, memories)
        self.watcher = resources.HeadWatcher(memories)
        # Sessions on the older protocol that asked for resources/subscribe, with their URIs.
        self.legacy: dict[Any, set[str]] = {}
        low = self._lowlevel_server
        low.add_request_handler("resources/subscribe", SubscribeRequestParams, self._subscribe)
        low.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, self._unsubscribe)

    # -- resources ------------------------------------------------------------------------

    async def list_resources(self) -> list[Resource]:
        try:
            found = await anyio.to_thread.run_sync(resources.entries, self.memories)
        except MemfsError as exc:
            raise ResourceError(redact(exc.message)) from None
        return [Resource(uri=e.uri, name=e.name, description=e.description, mime_type=e.mime) for e in found]

    async def list_resource_templates(self) -> list[ResourceTemplate]:
        return [ResourceTemplate(uri_template=uri, name=name, description=text, mime_type=resources.MARKDOWN)
                for uri, name, text in resources.TEMPLATES]

    async def read_resource(self, uri: Any, context: Any = None) -> Iterable[ReadResourceContents]:
        try:
            text, mime = await anyio.to_thread.run_sync(resources.read, self.memories, str(uri))
        except resources.NotFound as exc:
            raise ResourceNotFoundError(redact(exc.message)) from None
        except MemfsError as exc:
            raise ResourceError(redact(exc.message)) from None
        return [ReadResourceContents(content=text, mime_type=mime)]

    # -- subscriptions --------------------------------------------------------------------

    async def _subscribe(self, ctx: Any, params: SubscribeRequestParams) -> EmptyResult:
        self.legacy.setdefault(ctx.session, set()).add(str(params.uri))
        return EmptyResult()

    async def _unsubscribe(self, ctx: Any, params: UnsubscribeRequestParams) -> EmptyResult:
        self.legacy.get(ctx.session, set()).discard(str(params.uri))
        return EmptyResult()

    async def notify(self, uris: list[str], listed: bool) -> None:
        for uri in uris:
            await self._subscriptions.publish(ResourceUpdated(uri=uri))
        if listed:
            await self._subscriptions.publish(ResourcesListChanged())
        for session, wanted in list(self.legacy.items()):
            for uri in uris:
                if uri in wanted:
                    try:
                        await session.send_resource_updated(uri)
                    except Exception:  # noqa: BLE001 - a closed session: forget it
                        self.legacy.pop(session, None)
                        break

    async def watch(self, interval: float) -> None:
        """Poll the ref files forever; tell subscribers what moved."""
        while True:
            await anyio.sleep(interval)
            try:
                uris, listed = await anyio.to_thread.run_sync(self.watcher.poll)
            except Exception as exc:  # noqa: BLE001 - keep watching; say why on stderr
                log.warning("git memory mcp: watching HEAD failed: %s", exc)
                continue
            if uris:
                await self.notify(uris, listed)

    # -- running --------------------------------------------------------------------------

    async def serve_stdio(self) -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(self.watch, poll_interval())
            await self.run_stdio_async()
            tg.cancel_scope.cancel()

    async def serve_http(self, host: str, port: int, token: str | None, origins: list[str]) -> None:
        import uvicorn

        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            raise MemfsError(f"mcp: cannot listen on {host}:{port}: {exc.strerror}; pick another --port") from None
        sock.listen(128)
        port = sock.getsockname()[1]
        shown = f"[{host}]" if ":" in host else host
        hosts = [f"{h}:*" for h in ("127.0.0.1", "localhost", "[::1]", shown)]
        allowed = [f"http://{h}:*" for h in ("127.0.0.1", "localhost", "[::1]", shown)] + origins
        security = TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                             allowed_origins=allowed)
        app: Any = self.streamable_http_app(host=host, transport_security=security)
        if token:
            app = BearerGate(app, token)
        config = uvicorn.Config(app, log_level="warning", lifespan="on")
        server = uvicorn.Server(config)
        sys.stderr.write(f"git memory mcp: serving http://{shown}:{port}/mcp\n")
        sys.stderr.flush()
        async with anyio.create_task_group() as tg:
            tg.start_soon(self.watch, poll_interval())
            await server.serve(sockets=[sock])
            tg.cancel_scope.cancel()


class BearerGate:
    """ASGI wrapper: every HTTP request must carry `Authorization: Bearer <token>`."""

    def __init__(self, app: Any, token: str):
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or ()).get(b"authorization", b"")
            scheme, _, value = given.partition(b" ")
            if scheme.lower() != b"bearer" or not hmac.compare_digest(value.strip(), self.token):
                body = b'{"error": "missing or wrong bearer token (GIT_MEMORY_MCP_TOKEN)"}'
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"www-authenticate", b"Bearer")]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def poll_interval() -> float:
    try:
        return max(0.01, float(os.environ.get(POLL_ENV) or 0.1))
    except ValueError:
        return 0.1


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def run(memory_dir: str | None, root: str | None, *, http: bool = False, host: str = "127.0.0.1",
        port: int = 8765) -> int:
    """Serve until the client goes away (stdio) or the process is stopped (HTTP)."""
    for var in approval.VARS:  # an agent's call approves nothing, whoever started the server
        os.environ.pop(var, None)
    memories = Memories(memory_dir, root)
    if root is None:
        memories.open()  # a wrong --memory-dir fails now, with the CLI's message, not on the first call
    elif not os.path.isdir(memories.root or ""):
        raise UsageError(f"mcp: --root {root} is not a directory")
    token = os.environ.get(TOKEN_ENV) or None
    if http and not is_loopback(host) and not token:
        raise UsageError(f"mcp: serving on {host} (not loopback) needs a bearer token: set {TOKEN_ENV}, "
                         "and give it to clients as Authorization: Bearer <token>")
    server = MemoryServer(memories)
    server.watcher.poll()  # the baseline: changes from here on are notified
    if http:
        origins = [o.strip() for o in (os.environ.get(ORIGINS_ENV) or "").split(",") if o.strip()]
        anyio.run(server.serve_http, host, port, token, origins)
    else:
        anyio.run(server.serve_stdio)
    return 0
