"""What a clone of a hosted store keeps about it, and the SDK client it talks through.

`<git-dir>/memory-store.json`: the versions already turned into commits (`seen`,
`since`), each memory's id by path (`ids`), the git blob of each version's content
(`blobs`: how a local redaction finds the versions it must redact in the store),
the redactions followed or sent (`redacted`), and the store's description as last
agreed (`description`). The SDK (`[anthropic]` extra) is imported here and in the
modules beside it only; the key is read from $ANTHROPIC_API_KEY by this process and
given to the SDK in memory, never put on a command line, in config or in output.
"""
from __future__ import annotations

import json
import os
from typing import Any

from gitmemfs.core.errors import MemfsError
from gitmemfs.core.redact import redact
from gitmemfs.core.repo import Repo

PREFIX = "anthropic-store:"
TIP = "refs/memory/store/tip"
STATE = "memory-store.json"


def store_of(repo: Repo) -> str:
    return (repo.cfg("memory.store") or "")[len(PREFIX):]


def client() -> Any:
    key = os.environ.get("ANTHROPIC_API_KEY")
    if not key:
        raise MemfsError("git memory: $ANTHROPIC_API_KEY is not set; export it (it is never read from "
                         "argv or config)", code=4)
    try:
        import anthropic
    except ImportError:
        raise MemfsError("git memory: a hosted store needs the SDK: pip install 'git-memfs[anthropic]'",
                         code=4) from None
    return anthropic.Anthropic(api_key=key, base_url=os.environ.get("ANTHROPIC_BASE_URL") or None,
                               max_retries=2)


def writer(api_client: Any) -> Any:
    """The store's resources for writes: no retry inside the SDK. A failed write is
    replayed by sync after a fetch, which is what makes a retry safe (store.py)."""
    return api_client.with_options(max_retries=0).beta.memory_stores


def api_error(err: Exception, what: str) -> MemfsError:
    status = getattr(err, "status_code", None)
    said = f"HTTP {status}" if status else type(err).__name__
    return MemfsError(f"git memory: {what} failed ({said}): {redact(str(err))[:300]}", code=1)


def retryable(err: Exception) -> bool:
    """A write that may be sent again after a fetch: the store moved (409, 412), the
    memory went (404: the fetch brings its deletion), it was busy (429, 5xx), or the
    answer never came (a lost connection or a timeout, applied or not)."""
    import anthropic

    if isinstance(err, anthropic.APIConnectionError):
        return True
    status = getattr(err, "status_code", None)
    return isinstance(err, anthropic.APIStatusError) and (status in (404, 409, 412, 429) or (status or 0) >= 500)


def load(repo: Repo) -> dict[str, Any]:
    try:
        with open(os.path.join(repo.git_dir, STATE), encoding="utf-8") as f:
            state: dict[str, Any] = json.load(f)
    except FileNotFoundError:
        state = {}
    state.setdefault("seen", [])
    state.setdefault("since", "")
    state.setdefault("ids", {})       # path -> memory id
    state.setdefault("blobs", {})     # version id -> the git blob of its content
    state.setdefault("redacted", [])  # version ids whose redaction was followed or sent
    return state


def save(repo: Repo, state: dict[str, Any]) -> None:
    path = os.path.join(repo.git_dir, STATE)
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(state, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(path + ".tmp", path)


def tip(repo: Repo) -> str | None:
    res = repo.git("rev-parse", "-q", "--verify", TIP + "^{commit}", check=False)
    return res.out.strip() if res.code == 0 else None
