"""The listening socket of a server of ours."""
from __future__ import annotations

import socket

from gitmemfs.core.errors import MemfsError


def bind(host: str, port: int, tool: str) -> socket.socket:
    """A listening TCP socket on host:port (0: any free port; getsockname() says which)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say they are
    # TCP, and without it every kept-alive reply waits ~40 ms (Nagle vs delayed ACK).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise MemfsError(f"{tool}: cannot listen on {host}:{port}: {exc.strerror}; pick another --port") from None
    sock.listen(128)
    return sock
