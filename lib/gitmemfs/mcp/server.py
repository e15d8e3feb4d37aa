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

import logging
import os
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
from gitmemfs.core.errors import MemfsError, UsageError
from gitmemfs.core.redact import redact, register_secret
from gitmemfs.mcp import prompts, resources, tools
from gitmemfs.mcp.pipe import StdioPipe
from gitmemfs.web import auth, listen
from gitmemfs.web.auth import TokenTable
from gitmemfs.web.gate import GRANT_KEY, Gate, Tokens
from gitmemfs.web.hosts import HostPolicy, extra_origins, shown
from gitmemfs.web.keys import KeyStore
from gitmemfs.web.memories import Memories, served

TOKEN_ENV = "GIT_MEMORY_MCP_TOKEN"
ORIGINS_ENV = "GIT_MEMORY_MCP_ORIGINS"  # extra allowed Origins, comma-separated
POLL_ENV = "GIT_MEMORY_MCP_POLL"  # seconds between looks at the ref files
INVALID_PARAMS = -32602
log = logging.getLogger("gitmemfs.mcp")


def grant_of(ctx: Any) -> frozenset[str] | None:
    """The agents this request may use (None: every agent), as the HTTP gate found them."""
    request = getattr(ctx, "request", None)
    scope = getattr(request, "scope", None)
    return scope.get(GRANT_KEY) if isinstance(scope, dict) else None


class CountedBus(InMemorySubscriptionBus):
    """The SDK's bus, knowing whether anyone listens (the watcher diffs only then)."""

    listeners = 0

    def subscribe(self, listener: Any) -> Any:
        unsubscribe = super().subscribe(listener)
        self.listeners += 1
        done = False

        def once() -> None:
            nonlocal done
            if not done:
                done = True
                self.listeners -= 1
            unsubscribe()
        return once


class MemoryServer:
    """The SDK's low-level server with our tools, resources and prompts: schemas written
    out, one error shape, and what each client may see decided per request. (The SDK's
    MCPServer would derive schemas with pydantic and import rich for its log handler:
    start-up a client waits for, for nothing we use.)"""

    def __init__(self, memories: Memories, *, adopt: bool = False):
        self.memories = memories
        self.adopt = adopt  # commit files changed beside the server before a write (tools/outside.py)
        self.bus = CountedBus()
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
        result = await anyio.to_thread.run_sync(self._run_tool, spec, params.arguments, grant_of(ctx))
        return CallToolResult.model_validate(result)

    def _run_tool(self, spec: tools.Spec, arguments: Any, grant: Any) -> dict[str, Any]:
        def run(opener: Any) -> dict[str, Any]:
            return tools.call(spec, arguments, self.memories.multi, opener, self.adopt)

        try:
            return self.memories.act(grant, not spec.read_only, run, lambda result: not result.get("isError"))
        except MemfsError as exc:  # the change did not land (serve: the gate refused it)
            return tools.failed(exc)

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
                listening = self.bus.listeners > 0 or any(self.legacy.values())
                uris, listed = await anyio.to_thread.run_sync(self.watcher.poll, listening)
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

    def http_app(self, host: str, policy: HostPolicy, tokens: Tokens, advice: str, *,
                 owner: Any = None, **gate: Any) -> Any:
        """The streamable HTTP endpoint /mcp behind our gate (also mounted by `git memory serve`).
        `owner`: the principal of a request's grant; a session then answers only to it."""
        # Host, Origin and the token are checked by our gate (web/), as for every server of
        # ours; the SDK's own Host and Origin check is off, so it is not made twice.
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
        app = self.low.streamable_http_app(host=host, transport_security=security)
        return Gate(app if owner is None else Owned(app, owner), tokens, hosts=policy, origins=True, advice=advice,
                    **gate)

    async def serve_http(self, host: str, port: int, tokens: TokenTable, origins: list[str]) -> None:
        import uvicorn

        sock = listen.bind(host, port, "mcp")
        port = sock.getsockname()[1]
        advice = (f"send Authorization: Bearer <token> with the token the server was given "
                  f"(${TOKEN_ENV} or a line of its --tokens file)")
        app = self.http_app(host, HostPolicy(host, None, origins), tokens, advice)
        config = uvicorn.Config(app, log_level="warning", lifespan="on")
        server = uvicorn.Server(config)
        sys.stderr.write(f"git memory mcp: serving http://{shown(host)}:{port}/mcp\n")
        sys.stderr.flush()
        async with anyio.create_task_group() as tg:
            tg.start_soon(self.watch, poll_interval())
            await server.serve(sockets=[sock])
            tg.cancel_scope.cancel()


def mounted(memories: Memories, policy: HostPolicy, keys: KeyStore) -> Any:
    """/mcp for `git memory serve`: its memories, its keys (Bearer, or Basic as git sends
    them); each key reaches the memories its grant names, and writes only where it may."""
    advice = ("send Authorization: Bearer <key> with a key from git memory serve keys add "
              "(the same key the agent's git uses)")
    server = MemoryServer(memories)
    app = server.http_app(policy.names[-1], policy, lambda v: keys.find(v) or False, advice,
                          basic=True, realm="git-memory", owner=lambda grant: grant.id)
    return Watching(app, server)


class Owned:
    """Names the request's principal as the SDK's auth would (scope["user"]), so a session
    opened with one key answers 404 to another key that presents its id."""

    def __init__(self, app: Any, owner: Any):
        self.app, self.owner = app, owner

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        grant = scope.get(GRANT_KEY)
        if scope["type"] == "http" and grant is not None:
            from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
            from mcp.server.auth.provider import AccessToken

            # The token field is the SDK's; the key itself never goes there.
            scope = {**scope, "user": AuthenticatedUser(AccessToken(token="-", client_id=str(self.owner(grant)),
                                                                    scopes=[]))}
        await self.app(scope, receive, send)


class Watching:
    """An app whose lifespan also runs the server's watcher (subscriptions hear of every
    memory that moves, by a push or by another call), as serve_http's task group does."""

    def __init__(self, app: Any, server: MemoryServer):
        self.app, self.server = app, server

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "lifespan":
            await self.app(scope, receive, send)
            return
        await anyio.to_thread.run_sync(self.server.watcher.poll)  # the baseline, before the first request
        async with anyio.create_task_group() as tg:
            tg.start_soon(self.server.watch, poll_interval())
            await self.app(scope, receive, send)
            tg.cancel_scope.cancel()


def poll_interval() -> float:
    try:
        return max(0.01, float(os.environ.get(POLL_ENV) or 0.1))
    except ValueError:
        return 0.1


def run(memory_dir: str | None, root: str | None, *, http: bool = False, host: str = "127.0.0.1",
        port: int = 8765, tokens_file: str | None = None, adopt: bool = False) -> int:
    """Serve until the client goes away (stdio) or the process is stopped (HTTP)."""
    memories = served(memory_dir, root, "mcp")  # an agent's call approves nothing
    if tokens_file and not (http and root):
        raise UsageError("mcp: --tokens gives each agent its own token: it needs --http and --root DIR")
    tokens = auth.load_tokens(tokens_file, "mcp") if tokens_file else {}
    # Taken out of the environment: git hooks, a dream the post-commit hook starts, and
    # anything else this server runs never see it (a dream agent could call us with it).
    token = os.environ.pop(TOKEN_ENV, None) or None
    if token:
        register_secret(token)
        tokens[token.encode()] = None  # the server's own token: every agent
    if http:
        auth.check_bind(host, bool(tokens), "mcp", f"set {TOKEN_ENV} (or --tokens FILE with --root), and give "
                        "it to clients as Authorization: Bearer <token>")
    # One plain line per message on stderr (the SDK logs only what is worth a warning).
    logging.basicConfig(level=logging.WARNING, format="%(message)s", stream=sys.stderr)
    server = MemoryServer(memories, adopt=adopt)
    server.watcher.poll()  # the baseline: changes from here on are notified
    if http:
        anyio.run(server.serve_http, host, port, tokens, extra_origins(ORIGINS_ENV))
    else:
        anyio.run(server.serve_stdio)
    return 0
