"""The MCP server: tools, resources, prompts, subscriptions; stdio or streamable HTTP.

Subscriptions are served both ways a client may ask: `subscriptions/listen`
streams (protocol 2026-07-28, through the SDK's subscription bus) and the older
`resources/subscribe` (a set of URIs per session). A watcher polls the ref files
of every repository served, so HEAD moving by any means reaches subscribers.

Over HTTP the server binds to loopback unless told otherwise, checks Host and
Origin (DNS rebinding), and when bound elsewhere requires the bearer token in
$GIT_MEMORY_MCP_TOKEN on every request (a token set on loopback is required too).
With --root, `--tokens FILE` gives each agent its own token: a client sees and
touches only the agents its token names (listings, reads, calls, prompts).
"""
from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import os
import socket
import stat
import sys
from typing import Any, Iterable

import anyio
import anyio.to_thread
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ResourcesListChanged, ResourceUpdated
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    EmptyResult,
    GetPromptRequestParams,
    GetPromptResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
    SubscribeRequestParams,
    SubscriptionsListenRequestParams,
    UnsubscribeRequestParams,
)

from gitmemfs import __version__
from gitmemfs.core import approval
from gitmemfs.core.errors import MemfsError, UsageError
from gitmemfs.core.redact import redact, register_secret
from gitmemfs.mcp import prompts, resources, tools
from gitmemfs.mcp.memories import Memories
from gitmemfs.mcp.pipe import StdioPipe

TOKEN_ENV = "GIT_MEMORY_MCP_TOKEN"
ORIGINS_ENV = "GIT_MEMORY_MCP_ORIGINS"  # extra allowed Origins, comma-separated
POLL_ENV = "GIT_MEMORY_MCP_POLL"  # seconds between looks at the ref files
LOOPBACK_NAMES = ("localhost",)
GRANT_KEY = "gitmemfs.grant"  # where the HTTP gate leaves a request's agents in the ASGI scope
INVALID_PARAMS = -32602
log = logging.getLogger("gitmemfs.mcp")


def grant_of(ctx: Any) -> frozenset[str] | None:
    """The agents this request may use (None: every agent), as the HTTP gate found them."""
    request = getattr(ctx, "request", None)
    scope = getattr(request, "scope", None)
    return scope.get(GRANT_KEY) if isinstance(scope, dict) else None


class MemoryServer:
    """The SDK's low-level server with our tools, resources and prompts: schemas written
    out, one error shape, and what each client may see decided per request. (The SDK's
    MCPServer would derive schemas with pydantic and import rich for its log handler:
    start-up a client waits for, for nothing we use.)"""

    def __init__(self, memories: Memories, *, adopt: bool = False):
        self.memories = memories
        self.adopt = adopt  # commit files changed beside the server before a write (tools/outside.py)
        self.bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus)
        self.tool_list = tools.listing(memories.multi)
        # Built once: the typed results carry each protocol version's envelope.
        self.tools_result = ListToolsResult.model_validate({"tools": self.tool_list})
        self.prompts_result = ListPromptsResult.model_validate({"prompts": prompts.listing(memories.multi)})
        self.watcher = resources.HeadWatcher(memories)
        # Sessions on the older protocol that asked for resources/subscribe, with their URIs.
        self.legacy: dict[Any, set[str]] = {}
        self.low = low = Server("git-memory", title="git memory", version=__version__,
                                instructions=prompts.INSTRUCTIONS, get_tool_input_schema=self._input_schema)
        handlers: list[tuple[str, Any, Any]] = [
                ("tools/list", PaginatedRequestParams, self._list_tools),
                ("tools/call", CallToolRequestParams, self._call_tool),
                ("prompts/list", PaginatedRequestParams, self._list_prompts),
                ("prompts/get", GetPromptRequestParams, self._get_prompt),
                ("resources/list", PaginatedRequestParams, self._list_resources),
                ("resources/templates/list", PaginatedRequestParams, self._list_templates),
                ("resources/read", ReadResourceRequestParams, self._read_resource),
                ("resources/subscribe", SubscribeRequestParams, self._subscribe),
                ("resources/unsubscribe", UnsubscribeRequestParams, self._unsubscribe),
                ("subscriptions/listen", SubscriptionsListenRequestParams, self._listen_granted)]
        for method, params, handler in handlers:
            low.add_request_handler(method, params, handler)

    # -- tools and prompts ----------------------------------------------------------------

    def _input_schema(self, name: str) -> dict[str, Any] | None:
        return next((t["inputSchema"] for t in self.tool_list if t["name"] == name), None)

    async def _list_tools(self, ctx: Any, params: Any) -> ListToolsResult:
        return self.tools_result

    async def _call_tool(self, ctx: Any, params: CallToolRequestParams) -> CallToolResult:
        spec = tools.BY_NAME.get(params.name)
        if spec is None:
            raise MCPError(code=INVALID_PARAMS, message=f"unknown tool {params.name!r}; tools: "
                                                        f"{', '.join(tools.BY_NAME)}")
        grant = grant_of(ctx)
        result = await anyio.to_thread.run_sync(tools.call, spec, params.arguments, self.memories.multi,
                                                lambda agent: self.memories.open(agent, grant), self.adopt)
        return CallToolResult.model_validate(result)

    async def _list_prompts(self, ctx: Any, params: Any) -> ListPromptsResult:
        return self.prompts_result

    async def _get_prompt(self, ctx: Any, params: GetPromptRequestParams) -> GetPromptResult:
        try:
            return GetPromptResult.model_validate(await anyio.to_thread.run_sync(
                prompts.render, self.memories, params.name, params.arguments, grant_of(ctx)))
        except MemfsError as exc:
            raise MCPError(code=INVALID_PARAMS, message=redact(exc.message)) from None

    # -- resources ------------------------------------------------------------------------

    async def _list_resources(self, ctx: Any, params: Any) -> ListResourcesResult:
        try:
            found = await anyio.to_thread.run_sync(resources.entries, self.memories, grant_of(ctx))
        except MemfsError as exc:
            raise MCPError(code=INVALID_PARAMS, message=redact(exc.message)) from None
        return ListResourcesResult.model_validate({"resources": [
            {"uri": e.uri, "name": e.name, "description": e.description, "mimeType": e.mime} for e in found]})

    async def _list_templates(self, ctx: Any, params: Any) -> ListResourceTemplatesResult:
        agent = "{agent}/" if self.memories.multi else ""
        return ListResourceTemplatesResult.model_validate({"resourceTemplates": [
            {"uriTemplate": uri.replace(resources.SCHEME, resources.SCHEME + agent), "name": name,
             "description": text, "mimeType": resources.MARKDOWN} for uri, name, text in resources.TEMPLATES]})

    async def _read_resource(self, ctx: Any, params: ReadResourceRequestParams) -> ReadResourceResult:
        try:
            text, mime = await anyio.to_thread.run_sync(resources.read, self.memories, params.uri, grant_of(ctx))
        except MemfsError as exc:
            raise MCPError(code=INVALID_PARAMS, message=redact(exc.message), data={"uri": params.uri}) from None
        except Exception as exc:  # noqa: BLE001 - one line, never a traceback per call
            raise MCPError(code=-32603, message=f"internal error: {type(exc).__name__}: {exc} "
                                                "(please report this bug)") from None
        return ReadResourceResult.model_validate({"contents": [{"uri": params.uri, "mimeType": mime, "text": text}]})

    # -- subscriptions --------------------------------------------------------------------

    def _check_uris(self, ctx: Any, uris: Iterable[str]) -> None:
        """Refuse (-32602) a subscription to another agent's resources than this client's."""
        grant = grant_of(ctx)
        if grant is None or not self.memories.multi:
            return
        for uri in uris:
            agent = str(uri).removeprefix(resources.SCHEME).partition("/")[0]
            try:
                self.memories.location(agent, grant)
            except MemfsError as exc:
                raise MCPError(code=INVALID_PARAMS, message=redact(exc.message)) from None

    async def _listen_granted(self, ctx: Any, params: Any) -> Any:
        notifications = getattr(params, "notifications", None)
        self._check_uris(ctx, getattr(notifications, "resource_subscriptions", None) or ())
        return await self.listen(ctx, params)  # the SDK's stream

    async def _subscribe(self, ctx: Any, params: SubscribeRequestParams) -> EmptyResult:
        self._check_uris(ctx, [str(params.uri)])
        self.legacy.setdefault(ctx.session, set()).add(str(params.uri))
        return EmptyResult()

    async def _unsubscribe(self, ctx: Any, params: UnsubscribeRequestParams) -> EmptyResult:
        self.legacy.get(ctx.session, set()).discard(str(params.uri))
        return EmptyResult()

    async def notify(self, uris: list[str], listed: bool) -> None:
        for uri in uris:
            await self.bus.publish(ResourceUpdated(uri=uri))
        if listed:
            await self.bus.publish(ResourcesListChanged())
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
        low = self.low
        with StdioPipe() as pipe:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self.watch, poll_interval())
                # Duck-typed: the transport only iterates stdin's lines and awaits write/flush.
                async with stdio_server(stdin=pipe.reader(), stdout=pipe.writer()) as (  # type: ignore[arg-type]
                        read, write):
                    await low.run(read, write, low.create_initialization_options())
                tg.cancel_scope.cancel()

    async def serve_http(self, host: str, port: int, tokens: dict[bytes, frozenset[str] | None],
                         origins: list[str]) -> None:
        import uvicorn

        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say they are
        # TCP, and without it every kept-alive reply waits ~40 ms (Nagle vs delayed ACK).
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
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
        app: Any = Gate(self.low.streamable_http_app(host=host, transport_security=security), tokens)
        config = uvicorn.Config(app, log_level="warning", lifespan="on")
        server = uvicorn.Server(config)
        sys.stderr.write(f"git memory mcp: serving http://{shown}:{port}/mcp\n")
        sys.stderr.flush()
        async with anyio.create_task_group() as tg:
            tg.start_soon(self.watch, poll_interval())
            await server.serve(sockets=[sock])
            tg.cancel_scope.cancel()


class Gate:
    """ASGI wrapper in front of the SDK's app. With tokens, every request must carry
    `Authorization: Bearer <token>`, and the agents that token may use travel with the
    request (scope[GRANT_KEY]). OAuth discovery paths answer 404: this server has no
    authorization server, and a client that finds none stops looking for one."""

    def __init__(self, app: Any, tokens: dict[bytes, frozenset[str] | None]):
        self.app = app
        self.tokens = tokens

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            if str(scope.get("path", "")).startswith("/.well-known/"):
                await _answer(send, 404, {"error": "not_found", "error_description": "this server does not use "
                                          "OAuth; send Authorization: Bearer <token> (see git memory mcp --help)"})
                return
            if self.tokens:
                given = dict(scope.get("headers") or ()).get(b"authorization", b"")
                scheme, _, value = given.partition(b" ")
                grant = _match(self.tokens, value.strip()) if scheme.lower() == b"bearer" else False
                if grant is False:
                    why = ("no bearer token sent" if not given else "the bearer token is not one this server knows")
                    advice = (f"{why}; send Authorization: Bearer <token> with the token the server was given "
                              f"(${TOKEN_ENV} or a line of its --tokens file)")
                    await _answer(send, 401, {"error": "invalid_token", "error_description": advice},
                                  [(b"www-authenticate", ('Bearer realm="git-memory", error="invalid_token", '
                                                          f'error_description="{advice}"').encode())])
                    return
                scope = dict(scope)
                scope[GRANT_KEY] = grant
        await self.app(scope, receive, send)


def _match(tokens: dict[bytes, frozenset[str] | None], value: bytes) -> frozenset[str] | None | bool:
    """The grant of the token `value` (compared in constant time against each), False if none."""
    found: frozenset[str] | None | bool = False
    for token, grant in tokens.items():
        if hmac.compare_digest(value, token):
            found = grant
    return found


async def _answer(send: Any, status: int, body: dict[str, str],
                  headers: list[tuple[bytes, bytes]] | None = None) -> None:
    data = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
                            *(headers or [])]})
    await send({"type": "http.response.body", "body": data})


def load_tokens(path: str) -> dict[bytes, frozenset[str] | None]:
    """A --tokens file: lines `AGENT TOKEN` (`*` for every agent); a token on several
    lines serves each of those agents. It must be readable by its owner only."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as exc:
        raise UsageError(f"mcp: cannot read --tokens {path}: {exc.strerror}") from None
    with os.fdopen(fd) as fh:
        if os.fstat(fh.fileno()).st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise UsageError(f"mcp: --tokens {path} can be read by others; chmod 600 {path}")
        text = fh.read()
    table: dict[bytes, set[str] | None] = {}
    for number, line in enumerate(text.splitlines(), 1):
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        if len(words) != 2 or len(words[1]) < 16:
            raise UsageError(f"mcp: --tokens {path} line {number}: expected AGENT TOKEN (a token of at least "
                             "16 characters; * as AGENT for every agent)")
        agent, token = words
        register_secret(token)
        key = token.encode()
        if agent == "*" or table.get(key, set()) is None:
            table[key] = None
        else:
            table.setdefault(key, set()).add(agent)  # type: ignore[union-attr]
    if not table:
        raise UsageError(f"mcp: --tokens {path} holds no AGENT TOKEN line")
    return {k: (None if v is None else frozenset(v)) for k, v in table.items()}


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
        port: int = 8765, tokens_file: str | None = None, adopt: bool = False) -> int:
    """Serve until the client goes away (stdio) or the process is stopped (HTTP)."""
    for var in approval.VARS:  # an agent's call approves nothing, whoever started the server
        os.environ.pop(var, None)
    memories = Memories(memory_dir, root)
    if root is None:
        memories.open()  # a wrong --memory-dir fails now, with the CLI's message, not on the first call
    elif not os.path.isdir(memories.root or ""):
        raise UsageError(f"mcp: --root {root} is not a directory")
    if tokens_file and not (http and root):
        raise UsageError("mcp: --tokens gives each agent its own token: it needs --http and --root DIR")
    tokens = load_tokens(tokens_file) if tokens_file else {}
    # Taken out of the environment: git hooks, a dream the post-commit hook starts, and
    # anything else this server runs never see it (a dream agent could call us with it).
    token = os.environ.pop(TOKEN_ENV, None) or None
    if token:
        register_secret(token)
        tokens[token.encode()] = None  # the server's own token: every agent
    if http and not is_loopback(host) and not tokens:
        raise UsageError(f"mcp: serving on {host} (not loopback) needs a bearer token: set {TOKEN_ENV} "
                         "(or --tokens FILE with --root), and give it to clients as Authorization: Bearer <token>")
    # One plain line per message on stderr (the SDK logs only what is worth a warning).
    logging.basicConfig(level=logging.WARNING, format="%(message)s", stream=sys.stderr)
    server = MemoryServer(memories, adopt=adopt)
    server.watcher.poll()  # the baseline: changes from here on are notified
    if http:
        origins = [o.strip() for o in (os.environ.get(ORIGINS_ENV) or "").split(",") if o.strip()]
        anyio.run(server.serve_http, host, port, tokens, origins)
    else:
        anyio.run(server.serve_stdio)
    return 0
