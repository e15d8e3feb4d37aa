"""Which Host and Origin a request may carry.

DNS rebinding: a page on evil.example re-points its name at 127.0.0.1 and talks to a
loopback server as "same origin"; its requests still say `Host: evil.example`, so only
the names the server is reached by pass. Cross-site requests: a browser names the page
that sent a request in `Origin`; a state change is taken only from the server's own
origin (or one the person added, $GIT_MEMORY_MCP_ORIGINS for mcp).
"""
from __future__ import annotations

import os

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")


def shown(host: str) -> str:
    """A host as it appears in a URL or a Host header (IPv6 in brackets)."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def extra_origins(var: str) -> list[str]:
    """Comma-separated extra allowed origins from the environment variable `var`."""
    return [o.strip().rstrip("/") for o in (os.environ.get(var) or "").split(",") if o.strip()]


class HostPolicy:
    """The names a server bound to `host` answers to: the loopback names and the bound
    address, on `port` (None: any port, for a server that learns its port later)."""

    def __init__(self, host: str, port: int | None = None, origins: list[str] | None = None):
        self.names = tuple(dict.fromkeys((*LOOPBACK_HOSTS, shown(host))))
        self.port = port
        self.origins = [o.rstrip("/") for o in (origins or [])]

    def patterns(self) -> list[str]:
        """`name:port` patterns (`name:*` for any port), as the MCP SDK's settings take them."""
        port = "*" if self.port is None else str(self.port)
        return [f"{n}:{port}" for n in self.names]

    def host_ok(self, value: str | None) -> bool:
        if not value:
            return False
        name, sep, port = value.rpartition(":")
        if not sep or (":" in name and not name.endswith("]")):  # IPv6 only in brackets
            return False
        if name.lower() not in self.names:
            return False
        return self.port is None or port == str(self.port)

    def origin_named(self, value: str | None) -> bool:
        """An Origin naming this server (one of its names, on its port; any port when it
        has none), or one added; none at all (not a browser) passes. What an API endpoint
        takes, where a page served on another loopback port may be the client."""
        if value is None:
            return True
        value = value.rstrip("/")
        return value in self.origins or value.lower().startswith("http://") and self.host_ok(value[len("http://"):])

    def origin_ok(self, value: str | None, host: str | None) -> bool:
        """A same-origin request: Origin is http://<the Host it was sent to>, or one added."""
        if not value or value == "null":
            return False
        value = value.rstrip("/")
        if value in self.origins:
            return True
        return bool(host) and self.host_ok(host) and value.lower() == f"http://{host}".lower()
