"""Harnesses from the npm registry for the tests that run them: installing a package once
per cache (`npm_package`), finding its command (`node_bin`), and a stand-in for the model's
API on loopback (`stand_in`) that records each request and answers every turn with 'done',
in OpenAI's Responses stream (Codex) or Anthropic's Messages stream (Claude Code)."""
from __future__ import annotations

import fcntl
import http.server
import json
import os
import shutil
import subprocess
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pytest

LIMIT = 60
CACHE = Path(os.environ.get("GIT_MEMFS_NPM_CACHE") or
             Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "git-memfs" / "npm")


def npm_package(spec: str) -> Path:
    """The folder `npm install SPEC` filled (node_modules/...), installed once per cache."""
    if not shutil.which("node") or not shutil.which("npm"):
        pytest.skip(f"node and npm are needed to install {spec} from the npm registry")
    target = CACHE / spec.replace("/", "+").replace("@", "")
    target.mkdir(parents=True, exist_ok=True)
    done = target / ".installed"
    with open(target / ".lock", "w") as lock:  # xdist workers install one at a time
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            proc = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix",
                                   str(target), spec], capture_output=True, text=True, timeout=900)
            if proc.returncode != 0:
                last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
                pytest.skip(f"npm could not install {spec}: {last}")
            done.write_text(spec + "\n")
    return target


def node_bin(package: Path, name: str) -> str:
    path = package / "node_modules" / ".bin" / name
    if not path.exists():
        pytest.skip(f"{name} is not in the installed package ({package})")
    probe = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=LIMIT)
    if probe.returncode != 0:
        pytest.skip(f"{name} does not run here: {(probe.stderr.strip().splitlines() or ['?'])[-1]}")
    return str(path)


class StandIn(http.server.ThreadingHTTPServer):
    """The model's API on loopback: records each request, answers every turn with 'done'."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), StandInHandler)
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


def _sse(events: list[dict[str, Any]]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def responses_events() -> list[dict[str, Any]]:
    usage = {"input_tokens": 1, "input_tokens_details": None, "output_tokens": 1,
             "output_tokens_details": None, "total_tokens": 2}
    return [{"type": "response.created", "response": {"id": "resp_1"}},
            {"type": "response.output_item.done", "item": {
                "type": "message", "role": "assistant", "id": "msg_1",
                "content": [{"type": "output_text", "text": "done"}]}},
            {"type": "response.completed", "response": {"id": "resp_1", "usage": usage}}]


def messages_events(model: str) -> list[dict[str, Any]]:
    usage = {"input_tokens": 1, "output_tokens": 1}
    return [{"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                                                  "model": model, "content": [], "stop_reason": None,
                                                  "stop_sequence": None, "usage": usage}},
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "done"}},
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
             "usage": {"output_tokens": 1}},
            {"type": "message_stop"}]


class StandInHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: StandIn

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            request = json.loads(body)
        except ValueError:
            request = {"unreadable": body.decode(errors="replace")}
        self.server.requests.append(request)
        self.server.paths.append(self.path)
        if "/messages" in self.path:  # Anthropic's Messages API (Claude Code)
            model = str(request.get("model") or "claude")
            if "count_tokens" in self.path:
                return self._send("application/json", json.dumps({"input_tokens": 1}).encode())
            if not request.get("stream"):
                message = {"id": "msg_1", "type": "message", "role": "assistant", "model": model,
                           "content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn",
                           "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}
                return self._send("application/json", json.dumps(message).encode())
            return self._send("text/event-stream", _sse(messages_events(model)))
        self._send("text/event-stream", _sse(responses_events()))

    def _send(self, kind: str, data: bytes) -> None:
        self.send_response(200)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self.send_response(404)
        self.send_header("content-length", "0")
        self.end_headers()


@contextmanager
def stand_in() -> Iterator[StandIn]:
    server = StandIn()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
