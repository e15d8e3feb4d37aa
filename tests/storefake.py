"""A fake of Anthropic's memory stores API (`client.beta.memory_stores`), on loopback.

Written from the API as the `anthropic` SDK (2.16, 2.17) exposes it: its resources
under anthropic/resources/beta/memory_stores/ and types under
anthropic/types/beta/memory_stores/, and the memory guide's rules. The SDK's sdist
ships a fake of its own (tests/lib/tools/memory_sync/_fake_anthropic.py, read in the
2.17.0 sdist), and it does not fit: it is an `AsyncAnthropic`-shaped namespace built
in the test's own process (no HTTP, so `git memory`, a subprocess, can't reach it);
it has `memories` only (no `memory_versions`, no store retrieve or update), derives
each id from the path (`mem:<path>`, so a rename can't be told from delete + create)
and its update takes no `path`; it records no versions, actors or times and has no
redaction. Those are what the mapping to commits is made of.

What it implements, over real HTTP on 127.0.0.1 (random port):

- memory stores: retrieve (its name and description);
- memories: create (409 when the path is taken), retrieve, update (content and/or
  path, `precondition.content_sha256`, 409 when it moved), delete
  (`expected_content_sha256`, 409 when it moved), list (`path_prefix`, `view`, cursor
  pages);
- memory versions: list (`memory_id`, `created_at_gte`, cursor pages, oldest first),
  retrieve, redact (content, path, sha and size become null, `redacted_at` set);
- the limits: 100 KB (102,400 bytes) per memory and the path rules, answered 400;
- the key (`Authorization: Bearer`, or `x-api-key`) must be one of `keys`; its actor is `api_actor` with
  `api_key_id` named after the key's position (never the key itself).

- memory stores: update (`name`, `description`);
- redaction as the API documents it: a version that is the head of a live memory
  can't be redacted (400 here: the docs say it is refused, not with which status), a
  version already redacted answers 409 (as two vendors' copies of the API document).

`before_next(method, match, fn)` moves the store between a client's read and its
write. `lose_next_response(match)` applies the next matching write and then drops the
connection without answering (a lost response). `fail_next(match, status, applied=)`
answers the next matching write with that status (a 5xx), after applying it or not.
`requests` records (method, path) of every request, `writes` the writes applied.
`with StoreServer() as srv:` starts it.
"""
from __future__ import annotations

import hashlib
import json
import threading
import unicodedata
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

KEY = "sk-ant-api03-TESTstorekey0123456789abcdefXYZ"
OTHER_KEY = "sk-ant-api03-OTHERpersonkey9876543210zyxwvu"
MAX_BYTES = 102_400
T0 = datetime(2026, 1, 5, 9, 0, 0, tzinfo=timezone.utc)


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _stamp(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def path_error(path: Any) -> str | None:
    if not isinstance(path, str) or not path.startswith("/"):
        return "path must start with /"
    segs = path[1:].split("/")
    if not 1 <= len(segs) <= 20 or any(s in ("", ".", "..") for s in segs):
        return "path must have 1 to 20 non-empty segments, none . or .."
    if len(path.encode("utf-8")) > 1024 or unicodedata.normalize("NFC", path) != path:
        return "path must be NFC and at most 1024 bytes"
    if any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in path):
        return "path must not contain control or format characters"
    return None


class Store:
    def __init__(self, store_id: str, name: str, description: str) -> None:
        self.id, self.name, self.description = store_id, name, description
        self.memories: dict[str, dict[str, Any]] = {}   # id -> current memory
        self.versions: list[dict[str, Any]] = []        # oldest first


class StoreServer:
    def __init__(self, keys: tuple[str, ...] = (KEY, OTHER_KEY)) -> None:
        self.keys = keys
        self.stores: dict[str, Store] = {}
        self.requests: list[tuple[str, str]] = []
        self.statuses: list[int] = []
        self.lock = threading.Lock()
        self._n = 0
        self._lose: list[str] = []
        self._before: list[tuple[str, str, Any]] = []
        self._fail: list[tuple[str, int, bool]] = []
        self.writes: list[tuple[str, str]] = []
        self.httpd: ThreadingHTTPServer | None = None

    # -- arranging ---------------------------------------------------------
    def add_store(self, store_id: str = "memstore_01TEST", *, name: str = "notes",
                  description: str = "") -> Store:
        self.stores[store_id] = Store(store_id, name, description)
        return self.stores[store_id]

    def before_next(self, method: str, match: str, fn: Any) -> None:
        """Call fn() once, just before the next `method` request whose path contains
        `match` is handled (outside the server's lock, so fn may call the API)."""
        self._before.append((method, match, fn))

    def lose_next_response(self, match: str) -> None:
        self._lose.append(match)

    def fail_next(self, match: str, status: int = 503, *, applied: bool = False) -> None:
        """Answer the next write whose path contains `match` with `status`; with
        `applied`, the write is made first (a server that failed after committing)."""
        self._fail.append((match, status, applied))

    @property
    def base_url(self) -> str:
        assert self.httpd is not None
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> StoreServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: Any) -> None:
                pass

            def do_GET(self) -> None:
                server._handle(self, "GET")

            def do_POST(self) -> None:
                server._handle(self, "POST")

            def do_DELETE(self) -> None:
                server._handle(self, "DELETE")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *_: Any) -> None:
        assert self.httpd is not None
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join()

    # -- the API -------------------------------------------------------------
    def _next(self, prefix: str) -> tuple[str, datetime]:
        self._n += 1
        return f"{prefix}_{self._n:06d}", T0 + timedelta(minutes=self._n)

    def _memory_json(self, m: dict[str, Any], view: str) -> dict[str, Any]:
        out = dict(m)
        if view != "full":
            out["content"] = None
        return out

    def _version_json(self, v: dict[str, Any], view: str) -> dict[str, Any]:
        out = dict(v)
        if view != "full":
            out["content"] = None
        return out

    def _write_version(self, store: Store, memory: dict[str, Any], op: str, actor: dict[str, str]) -> None:
        vid, when = self._next("memver")
        deleted = op == "deleted"
        store.versions.append({
            "type": "memory_version", "id": vid, "memory_id": memory["id"], "memory_store_id": store.id,
            "created_at": _stamp(when), "operation": op, "created_by": actor,
            "content": None if deleted else memory["content"], "path": memory["path"],
            "content_sha256": None if deleted else memory["content_sha256"],
            "content_size_bytes": None if deleted else memory["content_size_bytes"],
            "redacted_at": None, "redacted_by": None})
        memory["memory_version_id"] = vid
        memory["updated_at"] = _stamp(when)

    def _handle(self, h: BaseHTTPRequestHandler, method: str) -> None:
        parts = urlsplit(h.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        length = int(h.headers.get("content-length") or 0)
        body = json.loads(h.rfile.read(length) or b"{}") if length else {}
        hook = next((b for b in self._before if b[0] == method and b[1] in parts.path), None)
        if hook:
            self._before.remove(hook)
            hook[2]()
        with self.lock:
            self.requests.append((method, parts.path))
            # SDK 2.16 sends the key as `Authorization: Bearer`; older ones as x-api-key.
            bearer = h.headers.get("authorization") or ""
            key = bearer[7:] if bearer.startswith("Bearer ") else h.headers.get("x-api-key")
            if key not in self.keys:
                return _answer(h, 401, {"type": "error", "error": {"type": "authentication_error",
                                                                   "message": "invalid x-api-key"}})
            actor = {"type": "api_actor", "api_key_id": f"apikey_{self.keys.index(key) + 1:02d}"}
            fail = next((f for f in self._fail if method != "GET" and f[0] in parts.path), None)
            if fail:
                self._fail.remove(fail)
            if fail and not fail[2]:
                status, out = fail[1], {"type": "error", "error": {"type": "api_error", "message": "injected"}}
            else:
                status, out = self._route(method, parts.path.strip("/").split("/"), query, body, actor)
                if method != "GET" and status < 300:
                    self.writes.append((method, parts.path))
                if fail:
                    status, out = fail[1], {"type": "error", "error": {"type": "api_error", "message": "injected"}}
            self.statuses.append(status)
            lose = status < 300 and method != "GET" and any(m in parts.path for m in self._lose)
            if lose:
                self._lose = [m for m in self._lose if m not in parts.path]
        if lose:
            h.close_connection = True
            h.connection.shutdown(2)
            return
        _answer(h, status, out)

    def _route(self, method: str, seg: list[str], query: dict[str, str], body: dict[str, Any],
               actor: dict[str, str]) -> tuple[int, dict[str, Any]]:
        if len(seg) < 3 or seg[:2] != ["v1", "memory_stores"] or seg[2] not in self.stores:
            return _error(404, "not_found_error", "no such memory store")
        store, rest = self.stores[seg[2]], seg[3:]
        view = query.get("view", "basic")
        if not rest and method in ("GET", "POST"):
            if method == "POST":
                store.name = body.get("name") or store.name
                if body.get("description") is not None:
                    store.description = body["description"]
            return 200, {"type": "memory_store", "id": store.id, "name": store.name,
                         "description": store.description, "metadata": {}, "archived_at": None,
                         "created_at": _stamp(T0), "updated_at": _stamp(T0)}
        if rest == ["memories"] and method == "GET":
            prefix = query.get("path_prefix", "/")
            items = [self._memory_json(m, view) for m in sorted(store.memories.values(), key=lambda m: m["path"])
                     if m["path"].startswith(prefix)]
            return _page(items, query)
        if rest == ["memories"] and method == "POST":
            return self._create(store, body, actor, view)
        if len(rest) == 2 and rest[0] == "memories":
            memory = store.memories.get(rest[1])
            if memory is None:
                return _error(404, "not_found_error", "no such memory")
            if method == "GET":
                return 200, self._memory_json(memory, query.get("view", "full"))
            if method == "POST":
                return self._update(store, memory, body, actor, view)
            if method == "DELETE":
                expected = query.get("expected_content_sha256")
                if expected and expected != memory["content_sha256"]:
                    return _error(409, "conflict_error", "content_sha256 precondition failed")
                self._write_version(store, memory, "deleted", actor)
                del store.memories[memory["id"]]
                return 200, {"type": "memory_deleted", "id": memory["id"]}
        if rest == ["memory_versions"] and method == "GET":
            found = [v for v in store.versions
                     if query.get("memory_id") in (None, v["memory_id"])
                     and query.get("operation") in (None, v["operation"])
                     and v["created_at"] >= query.get("created_at_gte", "")]
            return _page([self._version_json(v, view) for v in found], query)
        if len(rest) >= 2 and rest[0] == "memory_versions":
            version = next((v for v in store.versions if v["id"] == rest[1]), None)
            if version is None:
                return _error(404, "not_found_error", "no such memory version")
            if len(rest) == 3 and rest[2] == "redact" and method == "POST":
                if version["redacted_at"] is not None:
                    return _error(409, "invalid_request_error", "this version is already redacted")
                live = store.memories.get(version["memory_id"])
                if live is not None and live["memory_version_id"] == version["id"]:
                    return _error(400, "invalid_request_error",
                                  "a version that is the current head of a live memory cannot be redacted")
                _, when = self._next("redaction")
                version.update(content=None, path=None, content_sha256=None, content_size_bytes=None,
                               redacted_at=_stamp(when), redacted_by=actor)
                return 200, self._version_json(version, "full")
            if len(rest) == 2 and method == "GET":
                return 200, self._version_json(version, query.get("view", "full"))
        return _error(404, "not_found_error", f"no route {method} /{'/'.join(seg)}")

    def _checked(self, store: Store, body: dict[str, Any], path: str) -> tuple[int, dict[str, Any]] | None:
        content = body.get("content")
        if content is not None and len(content.encode("utf-8")) > MAX_BYTES:
            return _error(400, "invalid_request_error", "content exceeds 102400 bytes")
        problem = path_error(path)
        if problem:
            return _error(400, "invalid_request_error", problem)
        return None

    def _create(self, store: Store, body: dict[str, Any], actor: dict[str, str],
                view: str) -> tuple[int, dict[str, Any]]:
        path, content = body.get("path"), body.get("content") or ""
        bad = self._checked(store, body, path)
        if bad:
            return bad
        if any(m["path"] == path for m in store.memories.values()):
            return _error(409, "conflict_error", "a memory already exists at this path")
        mid, when = self._next("mem")
        memory = {"type": "memory", "id": mid, "memory_store_id": store.id, "path": path, "content": content,
                  "content_sha256": sha(content), "content_size_bytes": len(content.encode("utf-8")),
                  "created_at": _stamp(when), "updated_at": _stamp(when), "memory_version_id": ""}
        store.memories[mid] = memory
        self._write_version(store, memory, "created", actor)
        return 200, self._memory_json(memory, view)

    def _update(self, store: Store, memory: dict[str, Any], body: dict[str, Any], actor: dict[str, str],
                view: str) -> tuple[int, dict[str, Any]]:
        pre = body.get("precondition")
        if pre and pre.get("content_sha256") != memory["content_sha256"]:
            return _error(409, "conflict_error", "content_sha256 precondition failed")
        path = body.get("path") or memory["path"]
        bad = self._checked(store, body, path)
        if bad:
            return bad
        if path != memory["path"] and any(m["path"] == path for m in store.memories.values()):
            return _error(409, "conflict_error", "a memory already exists at this path")
        content = memory["content"] if body.get("content") is None else body["content"]
        memory.update(path=path, content=content, content_sha256=sha(content),
                      content_size_bytes=len(content.encode("utf-8")))
        self._write_version(store, memory, "modified", actor)
        return 200, self._memory_json(memory, view)


def _page(items: list[dict[str, Any]], query: dict[str, str]) -> tuple[int, dict[str, Any]]:
    limit = int(query.get("limit") or 20)
    start = int(query.get("page") or 0)
    nxt = start + limit if start + limit < len(items) else None
    return 200, {"data": items[start:start + limit], "next_page": None if nxt is None else str(nxt)}


def _error(status: int, kind: str, message: str) -> tuple[int, dict[str, Any]]:
    return status, {"type": "error", "error": {"type": kind, "message": message}}


def _answer(h: BaseHTTPRequestHandler, status: int, out: dict[str, Any]) -> None:
    data = json.dumps(out).encode()
    h.send_response(status)
    h.send_header("content-type", "application/json")
    h.send_header("content-length", str(len(data)))
    if status == 409:
        # A failed precondition does not heal by itself: the SDK would otherwise retry it.
        h.send_header("x-should-retry", "false")
    h.send_header("request-id", "req_fake")
    h.end_headers()
    h.wfile.write(data)
