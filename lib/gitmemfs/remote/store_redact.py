"""Redaction between a clone and its hosted store, both ways (store.py).

From the store (`memory_versions.redact` made there): the next sync lists the
store's versions, and the lines of a redacted one that no version the store still
shows holds are taken out of every local version by `git memory redact` (the CLI
joins the two, as admin sits beside remote); the files stay what the store has.

To the store (`git memory redact` run here): the rewrite replaces the text in every
local version, and the old blobs are pruned. A version of the store whose content we
held as a blob that is gone now, with the redaction's record commit not yet sent, is
a version that held what was taken out: the next sync redacts it in the store too.
A version the store still has as a live memory's head can't be redacted (the API's
rule), so that memory first gets the content the clone now has (an `update` with
`precondition.content_sha256`), or is deleted when `--path` took the file away. Only
the record commit since the store's tip starts this, so a damaged object store never
reads as a redaction.
"""
from __future__ import annotations

from typing import Any

from gitmemfs.core.repo import Repo
from gitmemfs.remote import store_state as st
from gitmemfs.remote.store_map import versions
from gitmemfs.remote.store_push import Moved

RECORD = "^Memory-Op: redact$"


def redactions(repo: Repo) -> tuple[list[str], list[str]]:
    """Versions redacted in the store since we fetched them: (their ids, the lines
    to take out of the local history). A line is taken only if no version the store
    still shows holds it, so the files as they stand stay what the store has."""
    sid = st.store_of(repo)
    client = st.client()
    state = st.load(repo)
    try:
        found = list(versions(client, sid, ""))
    except Exception as err:
        raise st.api_error(err, "listing the store's versions") from err
    gone = [v.id for v in found if v.redacted_at is not None and v.id in state["blobs"]
            and v.id not in state["redacted"]]
    kept = {line for v in found if v.redacted_at is None and v.content for line in v.content.split("\n")}
    texts: list[str] = []
    for vid in gone:
        data = repo.git("cat-file", "blob", state["blobs"][vid], check=False).raw.decode("utf-8", "replace")
        texts += [line for line in data.split("\n") if len(line.strip()) >= 4 and line not in kept
                  and "[REDACTED]" not in line]
    return gone, list(dict.fromkeys(texts))


def followed(repo: Repo, version_ids: list[str]) -> None:
    state = st.load(repo)
    state["redacted"] += version_ids
    for vid in version_ids:
        state["blobs"].pop(vid, None)     # the old content is gone from git too
    st.save(repo, state)


def _unsent_record(repo: Repo, tip: str) -> bool:
    return bool(repo.git("log", "-1", "--format=%H", "-E", f"--grep={RECORD}", f"{tip}..HEAD").out.strip())


def _missing(repo: Repo, state: dict[str, Any]) -> list[str]:
    """The versions whose content blob is no longer in the repository."""
    todo = [vid for vid in state["blobs"] if vid not in state["redacted"]]
    if not todo:
        return []
    out = repo.git("cat-file", "--batch-check", input="".join(state["blobs"][v] + "\n" for v in todo)).out
    return [vid for vid, line in zip(todo, out.splitlines()) if line.endswith(" missing")]


def send(repo: Repo, client: Any, sid: str, state: dict[str, Any]) -> int:
    """Redact in the store what `git memory redact` took out here; how many versions."""
    top = st.tip(repo)
    if top is None or not _unsent_record(repo, top):
        return 0
    gone = _missing(repo, state)
    if not gone:
        return 0
    import anthropic

    api = st.writer(client)
    try:
        memories = {api.memory_versions.retrieve(vid, memory_store_id=sid, view="basic").memory_id for vid in gone}
        for mid in sorted(memories):
            _clear_head(repo, api, sid, mid, set(gone), top, state)
        for vid in gone:
            _redact(api, sid, vid)
            state["redacted"].append(vid)
            state["blobs"].pop(vid, None)
            st.save(repo, state)
    except anthropic.APIError as err:
        if st.retryable(err):
            raise Moved() from err
        raise st.api_error(err, f"redacting versions in store {sid}") from err
    return len(gone)


def _clear_head(repo: Repo, api: Any, sid: str, mid: str, gone: set[str], top: str,
                state: dict[str, Any]) -> None:
    """A live memory whose head is to be redacted gets a new head first: the content
    the clone has at its path, or none (deleted) when the file is gone here."""
    import anthropic

    try:
        memory = api.memories.retrieve(mid, memory_store_id=sid, view="basic")
    except anthropic.NotFoundError:
        return  # deleted: its versions can be redacted as they are
    if memory.memory_version_id not in gone:
        if memory.memory_version_id not in state["seen"]:
            raise Moved()  # a version we have not fetched: fetch it first
        return
    path = memory.path.lstrip("/")
    blob = repo.git("rev-parse", "-q", "--verify", f"{top}:{path}", check=False).out.strip()
    if blob:
        content = repo.git("cat-file", "blob", blob).raw.decode("utf-8")
        got = api.memories.update(mid, memory_store_id=sid, content=content, precondition={
            "type": "content_sha256", "content_sha256": memory.content_sha256})
        state["seen"].append(got.memory_version_id)
        state["blobs"][got.memory_version_id] = blob
    else:
        api.memories.delete(mid, memory_store_id=sid, expected_content_sha256=memory.content_sha256)
        state["seen"].extend(v.id for v in api.memory_versions.list(sid, memory_id=mid, operation="deleted"))
        state["ids"] = {p: i for p, i in state["ids"].items() if i != mid}
    st.save(repo, state)


def _redact(api: Any, sid: str, vid: str) -> None:
    """Redact one version; one already redacted (by anyone) counts as done."""
    import anthropic

    try:
        api.memory_versions.redact(vid, memory_store_id=sid)
    except anthropic.APIStatusError:
        if api.memory_versions.retrieve(vid, memory_store_id=sid, view="basic").redacted_at is None:
            raise
