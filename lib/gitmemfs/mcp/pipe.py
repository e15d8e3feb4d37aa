"""The stdio wire, as the SDK's stdio transport reads and writes it, with three guarantees.

- A request is answered even when the client closes stdin right after writing it
  (`echo REQUEST | git memory mcp`, a client that exits early): end of input waits
  until every request read has been answered (or cancelled by the client).
- A line that is not JSON is answered with JSON-RPC's -32700 parse error, and a
  message with a repeated key with -32600 (which value counts would be a guess):
  web/jsonbody.py's rule, which HTTP's gate applies too.
- The wire is the process's own: fd 0 reads /dev/null and fd 1 writes to stderr while
  serving, so a git hook's output never lands in the protocol stream.

The SDK stays the protocol layer: it gets these as the stdin and stdout it serves.
"""
from __future__ import annotations

import io
import json
import os
import re
from typing import Any, AsyncIterator

import anyio

from gitmemfs.web import jsonbody

DRAIN_LIMIT = 600.0  # seconds end of input waits for answers (a write can queue behind the lock)
# The SDK writes `{"jsonrpc":"2.0","id":ID,"result"|"error":...}`: the id of an answer,
# read without parsing a large result (a compiled memory is ~100 KB).
ANSWER = re.compile(r'\{"jsonrpc":"2\.0","id":("(?:[^"\\]|\\.)*"|-?\d+),"(?:result|error)":')


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


class StdioPipe:
    """Owns fds 0 and 1 while serving; `reader()` and `writer()` are what the SDK reads and writes."""

    def __init__(self) -> None:
        self.pending: set[str] = set()
        self.changed = anyio.Event()
        self.lock = anyio.Lock()

    def __enter__(self) -> StdioPipe:
        self.in_fd, self.out_fd = os.dup(0), os.dup(1)  # not inherited by children (Python's default)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.dup2(2, 1)
        self.stdin = anyio.wrap_file(io.TextIOWrapper(os.fdopen(self.in_fd, "rb", closefd=False),
                                                      encoding="utf-8", errors="replace"))
        self.stdout = anyio.wrap_file(io.TextIOWrapper(os.fdopen(self.out_fd, "wb", closefd=False),
                                                       encoding="utf-8", write_through=True))
        return self

    def __exit__(self, *exc: Any) -> None:
        os.dup2(self.in_fd, 0)
        os.dup2(self.out_fd, 1)
        os.close(self.in_fd)
        os.close(self.out_fd)

    # -- what the SDK reads ---------------------------------------------------------------

    async def reader(self) -> AsyncIterator[str]:
        async for line in self.stdin:
            if not line.strip():
                continue
            message, error = jsonbody.read(line)
            if error is not None:
                await self.send_error(None, error["code"], error["message"])
                continue
            if isinstance(message, dict) and isinstance(message.get("method"), str):
                if "id" in message:
                    self.pending.add(_key(message["id"]))
                elif message["method"] == "notifications/cancelled":
                    params = message.get("params")
                    self.pending.discard(_key(params.get("requestId") if isinstance(params, dict) else None))
                    self.changed.set()
            yield line
        with anyio.move_on_after(DRAIN_LIMIT):  # end of input: answer what was asked first
            while self.pending:
                await self.changed.wait()
                self.changed = anyio.Event()

    # -- what the SDK writes --------------------------------------------------------------

    def writer(self) -> StdioPipe:
        return self

    async def write(self, text: str) -> None:
        async with self.lock:
            await self.stdout.write(text)
        answered = ANSWER.match(text)
        if answered is None and self.pending and text.startswith("{"):
            try:  # another key order: parse it all
                message = json.loads(text)
            except ValueError:
                message = None
            if isinstance(message, dict) and ("result" in message or "error" in message):
                self.pending.discard(_key(message.get("id")))
        elif answered is not None:
            self.pending.discard(_key(json.loads(answered.group(1))))
        self.changed.set()

    async def flush(self) -> None:
        async with self.lock:
            await self.stdout.flush()

    async def send_error(self, request_id: Any, code: int, message: str) -> None:
        line = json.dumps({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})
        async with self.lock:
            await self.stdout.write(line + "\n")
            await self.stdout.flush()
