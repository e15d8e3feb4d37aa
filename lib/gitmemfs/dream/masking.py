"""Secrets out of a dream's payload: what every source hands the agent is masked.

A transcript is a record of someone's work: it may hold a token they pasted, an
`export GITHUB_TOKEN=…`, a key a tool printed. Before a slice of any source
(transcript, openhands, claude-code, codex) or the `-i` text reaches the agent's
prompt or its `$DREAM_TRANSCRIPT` file, every string in it is masked with the
values of our secret-looking variables (registered by dream/environment.py, withheld
or passed alike), core/redact.py's patterns, and the token shapes of the model and
cloud providers an agent's sessions are full of.
"""
from __future__ import annotations

import re
from typing import Any

from gitmemfs.core.redact import MASK, redact

_EXTRA = [
    (re.compile(r"\b(sk-ant-[a-z]{3}\d{2}-)[A-Za-z0-9_-]{16,}"), r"\1" + MASK),     # Anthropic
    (re.compile(r"\b(sk-(?:proj-|svcacct-)?)[A-Za-z0-9_-]{20,}"), r"\1" + MASK),    # OpenAI and the like
    (re.compile(r"\b((?:AKIA|ASIA)[0-9A-Z]{4})[0-9A-Z]{12}\b"), r"\1" + MASK),       # AWS access key id
    (re.compile(r"\b(xox[abprs]-)[A-Za-z0-9-]{10,}"), r"\1" + MASK),               # Slack
    (re.compile(r"\b(AIza)[0-9A-Za-z_-]{35}"), r"\1" + MASK),                       # Google API key
    (re.compile(r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----.*?(?:-----END \1PRIVATE KEY-----|\Z)", re.S),
     "-----BEGIN PRIVATE KEY----- " + MASK + " -----END PRIVATE KEY-----"),
]


def mask(text: str) -> str:
    text = redact(text)
    for pattern, repl in _EXTRA:
        text = pattern.sub(repl, text)
    return text


def mask_obj(obj: Any) -> Any:
    """Every string of a JSON-like structure, masked (keys too)."""
    if isinstance(obj, str):
        return mask(obj)
    if isinstance(obj, dict):
        return {mask(k) if isinstance(k, str) else k: mask_obj(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [mask_obj(v) for v in obj]
    return obj
