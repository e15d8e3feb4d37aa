"""A JSON-RPC message read strictly, on every wire: the one rule for stdio and HTTP.

Python's json and the SDK's parser (pydantic-core) take the last of two equal keys:
`{"method": "ping", "method": "tools/call"}` or an `arguments` object naming two paths
would run whichever a parser picks. A message with a key given twice, at any depth,
is answered with JSON-RPC's -32600 and never reaches the SDK; one that is not JSON (by
Python's reading, the stricter of the two) with -32700. stdio applies `read` to each
line (mcp/pipe.py); over HTTP, the gate (web/gate.py) hands every JSON body to `checked`
before the app sees it.
"""
from __future__ import annotations

import json
from typing import Any, Awaitable, Callable, Mapping

from gitmemfs.core.jsoninput import DuplicateKey, JSONInputError, unique_keys

INVALID_REQUEST, PARSE_ERROR = -32600, -32700
BODY_METHODS = ("POST", "PUT", "PATCH")


def read(text: str | bytes) -> tuple[Any, dict[str, Any] | None]:
    """The message in `text` and None, or None and the JSON-RPC error to answer instead."""
    try:
        return unique_keys(text), None
    except DuplicateKey as exc:
        return None, {"code": INVALID_REQUEST, "message": f"Invalid Request: the key {exc.key!r} appears twice"}
    except JSONInputError as exc:
        return None, {"code": PARSE_ERROR, "message": f"Parse error: not JSON ({exc})"}


def is_json(scope: Mapping[str, Any]) -> bool:
    """A request with a body a JSON reader may take: any Content-Type naming json (the
    SDK takes `application/json` among comma-separated types, in any position)."""
    if scope.get("method") not in BODY_METHODS:
        return False
    return any(key == b"content-type" and b"json" in bytes(value).lower() for key, value in scope.get("headers") or ())


async def checked(scope: Mapping[str, Any], receive: Callable[[], Awaitable[dict[str, Any]]],
                  send: Callable[[dict[str, Any]], Awaitable[None]]) -> Callable[[], Awaitable[dict[str, Any]]] | None:
    """For a JSON request: the body read whole and judged by `read`. Returns the receive
    the app gets (the body replayed, then the client's own), or None once the refusal is
    sent (or the client left before its body ended)."""
    if not is_json(scope):
        return receive
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None  # http.disconnect: nobody to answer
        chunks.append(bytes(message.get("body") or b""))
        if not message.get("more_body"):
            break
    body = b"".join(chunks)
    _, error = read(body)
    if error is not None:
        data = json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
        await send({"type": "http.response.start", "status": 400, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
            (b"x-content-type-options", b"nosniff")]})
        await send({"type": "http.response.body", "body": data})
        return None
    replayed = False

    async def replay() -> dict[str, Any]:
        nonlocal replayed
        if replayed:
            return await receive()  # what follows the body: a disconnect
        replayed = True
        return {"type": "http.request", "body": body, "more_body": False}
    return replay
