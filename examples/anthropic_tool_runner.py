"""Anthropic's tool runner against GitMemoryTool, offline.

The SDK's own loop (`client.beta.messages.tool_runner`) drives our memory tool; a scripted
model answers over a mock HTTP transport instead of the API, so this runs with no key and
no network. Swap `GitMemoryTool` for the SDK's `BetaLocalFilesystemMemoryTool` and the
loop behaves the same; ours leaves a git commit per change.

    .venv/bin/python examples/anthropic_tool_runner.py [DIR]
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile

import httpx2
from anthropic import Anthropic

from gitmemfs.integrations.anthropic import GitMemoryTool

# What the scripted model says, turn by turn: write a memory, read it back, then answer.
SCRIPT = [
    [{"type": "tool_use", "id": "toolu_1", "name": "memory",
      "input": {"command": "create", "path": "/memories/preferences.txt",
                "file_text": "Prefers short answers.\nWorks in UTC.\n"}}],
    [{"type": "tool_use", "id": "toolu_2", "name": "memory",
      "input": {"command": "view", "path": "/memories/preferences.txt"}}],
    [{"type": "text", "text": "Noted: short answers, UTC."}],
]


def scripted_model() -> tuple[httpx2.MockTransport, list[dict]]:
    """A Messages API that plays SCRIPT; returns it and the requests it saw."""
    seen: list[dict] = []

    def handle(request: httpx2.Request) -> httpx2.Response:
        seen.append(json.loads(request.content))
        content = SCRIPT[min(len(seen), len(SCRIPT)) - 1]
        stop = "tool_use" if content[0]["type"] == "tool_use" else "end_turn"
        return httpx2.Response(200, json={
            "id": f"msg_{len(seen)}", "type": "message", "role": "assistant", "model": "scripted",
            "content": content, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1}})
    return httpx2.MockTransport(handle), seen


def main(base: str) -> int:
    transport, seen = scripted_model()
    client = Anthropic(api_key="offline", http_client=httpx2.Client(transport=transport))
    tool = GitMemoryTool(base_path=base, reason="remember the user's preferences")
    runner = client.beta.messages.tool_runner(
        model="claude-sonnet-4-5", max_tokens=512, tools=[tool],
        messages=[{"role": "user", "content": "Remember that I like short answers and work in UTC."}])
    for message in runner:
        for block in message.content:
            if block.type == "text":
                print(f"model: {block.text}")
            elif block.type == "tool_use":
                print(f"tool call: {json.dumps(block.input)}")
    # What the tool answered, as the model saw it in the last request.
    for part in seen[-1]["messages"][-1]["content"]:
        print(f"tool result: {part['content']!r}")
    log = subprocess.run(["git", "-C", f"{base}/memories", "log", "--format=%h %s"],
                         capture_output=True, text=True, check=True).stdout
    print("history:\n" + log, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="memory-")))
