"""The ASGI wrapper in front of a server's app: nothing reaches the app unless it passes.

In order: the Host header must name the server (hosts.HostPolicy; DNS rebinding), else
403; with `origins`, an Origin header must name it too (HostPolicy.origin_named: not
another site's page), else 403; OAuth discovery paths answer 404 (no server of ours has
an authorization server, and a client that finds none stops looking); with tokens, the request must carry one —
`Authorization: Bearer <token>`, or with `cookie` set, that cookie — else 401. The
agents a token may use travel with the request (scope[GRANT_KEY]).

`tokens` is a table of tokens (web.auth.TokenTable) or a function from a presented
secret to its grant, False when it is none (`git memory serve`'s issued keys, which
only exist as hashes). `admit`, when given, may still refuse a known grant (403, in its
words): the review page on serve's port takes no agent's key.

With `cookie`, a browser logs in once as Jupyter's pages do: `?token=<token>` on any
GET answers 303 to the same path without it and sets the cookie (HttpOnly,
SameSite=Strict, so no other site's page sends it), and the token leaves the address
bar and the history.

Last, a request with a JSON body reaches the app only if the body is JSON with no key
given twice (web/jsonbody.py; else 400 with a JSON-RPC error): one check for every
server behind the gate.
"""
from __future__ import annotations

import json
from typing import Any, Callable, Mapping, Union
from urllib.parse import parse_qsl, urlencode

from gitmemfs.web import jsonbody
from gitmemfs.web.auth import TokenTable, match, presented
from gitmemfs.web.hosts import HostPolicy

GRANT_KEY = "gitmemfs.grant"  # where the gate leaves a request's agents in the ASGI scope
Resolver = Callable[[str], Any]  # a presented secret -> its grant, or False
Tokens = Union[TokenTable, Resolver]


def header(scope: Mapping[str, Any], name: bytes) -> str | None:
    for key, value in scope.get("headers") or ():
        if key == name:
            return bytes(value).decode("latin-1")
    return None


def cookie_value(scope: Mapping[str, Any], name: str) -> str | None:
    for part in (header(scope, b"cookie") or "").split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


class Gate:
    def __init__(self, app: Any, tokens: Tokens, *, hosts: HostPolicy | None = None,
                 cookie: str | None = None, advice: str = "send Authorization: Bearer <token>",
                 realm: str = "git-memory", text: bool = False, on_login: Any = None,
                 admit: Callable[[Any], str | None] | None = None, basic: bool = False,
                 origins: bool = False):
        self.app = app
        self.open = not callable(tokens) and not tokens  # no tokens at all: nothing to check
        table = tokens
        self.find: Resolver = tokens if callable(tokens) else (lambda v: match(table, v.encode()))  # type: ignore[arg-type]
        self.admit = admit
        self.basic = basic  # also Basic with the key as password (git's and Letta Code's way)
        self.hosts = hosts
        self.origins = hosts if origins else None  # the policy Origin is held to
        self.cookie = cookie
        self.advice = advice
        self.realm = realm
        self.text = text  # answers as plain text (a person's browser), not JSON (a client)
        self.on_login = on_login  # called after a browser logged in with ?token=

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.hosts is not None and not self.hosts.host_ok(header(scope, b"host")):
            await self.refuse(send, 403, "forbidden_host", "this server answers only to "
                              + ", ".join(self.hosts.patterns()) + " (a Host header of another name is "
                              "refused: DNS rebinding)")
            return
        if self.origins is not None and not self.origins.origin_named(header(scope, b"origin")):
            await self.refuse(send, 403, "forbidden_origin", "a request from another site's page is refused "
                              "(its Origin header names another server)")
            return
        if str(scope.get("path", "")).startswith("/.well-known/"):
            await self.refuse(send, 404, "not_found", "this server does not use OAuth; " + self.advice)
            return
        if self.open:
            await self._forward(scope, receive, send)
            return
        if self.cookie and scope.get("method") == "GET" and await self._login(scope, send):
            return
        grant = self._grant(scope)
        if grant is False:
            await self.refuse(send, 401, "invalid_token", self.advice, [(b"www-authenticate", (
                f'Bearer realm="{self.realm}", error="invalid_token", error_description="{self.advice}"').encode())])
            return
        refused = self.admit(grant) if self.admit is not None else None
        if refused:
            await self.refuse(send, 403, "insufficient_scope", refused)
            return
        scope = dict(scope)
        scope[GRANT_KEY] = grant
        await self._forward(scope, receive, send)

    async def _forward(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """To the app, a JSON body only once it is read strictly (web/jsonbody.py)."""
        receive = await jsonbody.checked(scope, receive, send)
        if receive is not None:
            await self.app(scope, receive, send)

    def _grant(self, scope: dict[str, Any]) -> Any:
        given = header(scope, b"authorization")
        if given:
            value = presented(given, basic=self.basic)
            return self.find(value) if value else False
        if self.cookie:
            value = cookie_value(scope, self.cookie) or ""
            return self.find(value) if value else False
        return False

    async def _login(self, scope: dict[str, Any], send: Any) -> bool:
        query = parse_qsl(bytes(scope.get("query_string") or b"").decode("latin-1"), keep_blank_values=True)
        given = [v for k, v in query if k == "token"]
        if not given:
            return False
        grant = self.find(given[-1])
        if grant is False:
            await self.refuse(send, 401, "invalid_token", self.advice)
            return True
        refused = self.admit(grant) if self.admit is not None else None
        if refused:
            await self.refuse(send, 403, "insufficient_scope", refused)
            return True
        rest = urlencode([(k, v) for k, v in query if k != "token"])
        location = str(scope.get("path") or "/") + (f"?{rest}" if rest else "")
        cookie = f"{self.cookie}={given[-1]}; Path=/; HttpOnly; SameSite=Strict"
        if self.on_login is not None:  # before the answer: whoever gets it sees the effect
            self.on_login()
        await send({"type": "http.response.start", "status": 303, "headers": [
            (b"location", location.encode()), (b"set-cookie", cookie.encode()), (b"cache-control", b"no-store"),
            (b"referrer-policy", b"no-referrer"), (b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})
        return True

    async def refuse(self, send: Any, status: int, error: str, description: str,
                     headers: list[tuple[bytes, bytes]] | None = None) -> None:
        await answer(send, status, {"error": error, "error_description": description}, headers, text=self.text)


async def answer(send: Any, status: int, body: dict[str, str], headers: list[tuple[bytes, bytes]] | None = None,
                 *, text: bool = False) -> None:
    """A refusal: JSON for a client, one plain line for a person's browser."""
    if text:
        line = f"error: {body.get('error_description') or body.get('error')}\n"
        data, kind = line.encode(), b"text/plain; charset=utf-8"
    else:
        data, kind = json.dumps(body).encode(), b"application/json"
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", kind), (b"content-length", str(len(data)).encode()),
                            (b"x-content-type-options", b"nosniff"), *(headers or [])]})
    await send({"type": "http.response.body", "body": data})
