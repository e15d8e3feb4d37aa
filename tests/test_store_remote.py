"""A hosted memory store as a remote (issue 41), end to end: `git memory clone
anthropic-store:<id>`, `sync`, `status` against tests/storefake.py over loopback HTTP,
with a second actor writing through the official SDK in between."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Iterator

import pytest
from storefake import KEY, OTHER_KEY, StoreServer, sha

from conftest import git, memfile, memory, write
from dreamkit import agent, dream_json, kept, landlock

anthropic = pytest.importorskip("anthropic")  # the [anthropic] extra, in the dev extra too

SID = "memstore_01TEST"
NOTES = memfile("Notes about the user", "Prefers tea.\n")
THEIRS = memfile("Notes about the user, kept by two", "Prefers tea.\n")


@pytest.fixture
def srv(monkeypatch: pytest.MonkeyPatch) -> Iterator[StoreServer]:
    with StoreServer() as server:
        server.add_store(SID, name="notes", description="what the agent knows")
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        yield server


def other(srv: StoreServer):  # another actor, through the SDK itself
    return anthropic.Anthropic(api_key=OTHER_KEY, base_url=srv.base_url, max_retries=0).beta.memory_stores


def by_path(srv: StoreServer) -> dict[str, dict]:
    return {m["path"]: m for m in srv.stores[SID].memories.values()}


def cloned(srv: StoreServer, tmp_path: Path) -> Path:
    other(srv).memories.create(SID, path="/system/notes.md", content=NOTES)
    dest = tmp_path / "mem"
    res = memory("clone", f"anthropic-store:{SID}", str(dest), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    return dest


def edit(repo: Path, rel: str, text: str, message: str) -> None:
    write(repo, rel, text)
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", message, cwd=repo)


def sync(repo: Path, *extra: str):
    res = memory("sync", "--json", *extra, cwd=repo)
    return res, json.loads(res.stdout)


def test_clone_makes_versions_commits_with_actor_and_trailers(srv, tmp_path):
    repo = cloned(srv, tmp_path)
    other(srv).memories.update(by_path(srv)["/system/notes.md"]["id"], memory_store_id=SID,
                               content=NOTES + "Likes rain.\n")
    assert sync(repo)[1]["state"] == "pulled"
    assert (repo / "system/notes.md").read_text() == NOTES + "Likes rain.\n"
    log = git("log", "--format=%an|%aI|%B%x00", cwd=repo).stdout.split("\0")
    versions = srv.stores[SID].versions
    assert "api_actor apikey_02|2026-01-05T09:0" in log[0]
    assert f"Memory-Op: modified\nMemory-Version: {versions[1]['id']}" in log[0]
    assert f"Memory-Op: created\nMemory-Version: {versions[0]['id']}" in log[1]
    assert git("config", "memory.repo", cwd=repo).stdout.strip() == "true"
    assert (repo / ".git/hooks/pre-commit").exists()


def test_local_commit_is_pushed_with_precondition(srv, tmp_path):
    repo = cloned(srv, tmp_path)
    before = by_path(srv)["/system/notes.md"]["content_sha256"]
    edit(repo, "system/notes.md", NOTES + "Allergic to cats.\n", "cats: she said so")
    edit(repo, "system/new.md", memfile("A new file", "hello\n"), "a new memory")
    res, out = sync(repo)
    assert out["state"] == "pushed", res.stderr
    now = by_path(srv)
    assert now["/system/notes.md"]["content"] == NOTES + "Allergic to cats.\n"
    assert now["/system/new.md"]["content"] == memfile("A new file", "hello\n")
    assert before == sha(NOTES)
    # Our own versions are not fetched back as extra commits; the reason survives.
    assert sync(repo)[1]["state"] == "clean"
    assert git("log", "-1", "--format=%s", "HEAD~1", cwd=repo).stdout.strip() == "cats: she said so"
    st = memory("status", "--json", cwd=repo)
    assert json.loads(st.stdout)["ahead"] == 0


def test_conflicting_api_edit_is_replayed_not_lost(srv, tmp_path):
    repo = cloned(srv, tmp_path)
    edit(repo, "system/notes.md", NOTES + "local line\n", "local: a line at the end")
    mid = by_path(srv)["/system/notes.md"]["id"]

    def meanwhile() -> None:   # between our fetch and our update, through the API
        other(srv).memories.update(mid, memory_store_id=SID, content=THEIRS)

    srv.before_next("POST", f"/memories/{mid}", meanwhile)
    res, out = sync(repo)
    assert out["state"] == "pushed", out
    assert 409 in srv.statuses                      # the first update was refused...
    text = by_path(srv)["/system/notes.md"]["content"]
    assert text == THEIRS + "local line\n"   # ...and replayed: both kept
    assert (repo / "system/notes.md").read_text() == text
    log = git("log", "--format=%s", cwd=repo).stdout.splitlines()
    assert log[0] == "local: a line at the end" and log[1] == "store: modified /system/notes.md"
    assert out["backup_ref"]


def test_conflict_that_cannot_replay_keeps_both(srv, tmp_path):
    repo = cloned(srv, tmp_path)
    edit(repo, "system/notes.md", memfile("Notes about the user", "Prefers water.\n"), "water")
    mine = git("rev-parse", "HEAD", cwd=repo).stdout
    mid = by_path(srv)["/system/notes.md"]["id"]
    other(srv).memories.update(mid, memory_store_id=SID, content=memfile("Notes about the user", "Juice.\n"))
    res, out = sync(repo)
    assert res.returncode == 1 and out["state"] == "conflict"
    assert git("rev-parse", "HEAD", cwd=repo).stdout == mine
    assert "Prefers water." in (repo / "system/notes.md").read_text()
    assert by_path(srv)["/system/notes.md"]["content"] == memfile("Notes about the user", "Juice.\n")


def test_delete_goes_both_ways(srv, tmp_path):
    repo = cloned(srv, tmp_path)
    edit(repo, "system/gone.md", memfile("soon gone", "z\n"), "add")
    assert sync(repo)[1]["state"] == "pushed"
    git("rm", "-q", "system/gone.md", cwd=repo)
    git("commit", "-q", "-m", "forget it", cwd=repo)
    assert sync(repo)[1]["state"] == "pushed"
    assert "/system/gone.md" not in by_path(srv)
    other(srv).memories.delete(by_path(srv)["/system/notes.md"]["id"], memory_store_id=SID)
    assert sync(repo)[1]["state"] == "pulled"
    assert not (repo / "system/notes.md").exists()
    assert "Memory-Op: deleted" in git("log", "-1", "--format=%B", cwd=repo).stdout


def test_limits_refused_before_sending(srv, tmp_path):
    repo = cloned(srv, tmp_path)
    edit(repo, "system/big.md", memfile("big", "x" * 103_000), "too big")
    writes = [r for r in srv.requests if r[0] != "GET"]
    res, out = sync(repo)
    assert res.returncode == 1 and out["state"] == "check_failed"
    assert "102400-byte limit" in out["message"]
    assert [r for r in srv.requests if r[0] != "GET"] == writes
    assert "/system/big.md" not in by_path(srv)


def test_more_memories_than_a_store_holds_are_refused_before_sending(srv, tmp_path):
    """A store holds 2,000 memories: a commit that would make 2,001 is refused whole,
    nothing sent (the create past the limit would fail half-way through a sync)."""
    repo = cloned(srv, tmp_path)
    for i in range(2000):  # beside system/notes.md: 2,001 files
        path = repo / "reference" / f"d{i // 100:02d}" / f"n{i:04d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(memfile(f"note {i}", "x\n"))
    git("add", "-A", cwd=repo)
    git("commit", "-q", "--no-verify", "-m", "many notes", cwd=repo)
    writes = [r for r in srv.requests if r[0] != "GET"]
    res, out = sync(repo)
    assert res.returncode == 1 and out["state"] == "check_failed", out
    assert "2,001 files, over the store's limit of 2,000 memories" in out["message"], out
    assert [r for r in srv.requests if r[0] != "GET"] == writes


def test_rules_refused_before_sending(srv, tmp_path):
    repo = cloned(srv, tmp_path)
    write(repo, "system/notes.md", "no front matter at all\n")
    git("commit", "-q", "--no-verify", "-am", "past the hooks", cwd=repo)
    writes = [r for r in srv.requests if r[0] != "GET"]
    res, out = sync(repo)
    assert res.returncode == 1 and out["state"] == "check_failed", out
    assert [r for r in srv.requests if r[0] != "GET"] == writes
    assert by_path(srv)["/system/notes.md"]["content"] == NOTES


def test_key_never_in_argv_config_or_output(srv, tmp_path, monkeypatch):
    repo = cloned(srv, tmp_path)
    edit(repo, "system/notes.md", NOTES + "more\n", "more")
    res, _ = sync(repo)
    config = (repo / ".git/config").read_text()
    assert KEY not in res.stdout + res.stderr + config
    assert KEY not in (repo / ".git" / "memory-store.json").read_text()
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-wrong-key-123")
    res = memory("sync", cwd=repo)
    assert res.returncode == 1 and "401" in res.stderr and "sk-ant-wrong" not in res.stderr
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    res = memory("sync", cwd=repo)
    assert res.returncode == 4 and "ANTHROPIC_API_KEY" in res.stderr


def test_lost_response_not_applied_twice(srv, tmp_path):
    repo = cloned(srv, tmp_path)
    edit(repo, "system/notes.md", NOTES + "once\n", "once")
    srv.lose_next_response("/memories/")
    res, out = sync(repo)
    assert out["state"] == "pushed", res.stderr
    assert by_path(srv)["/system/notes.md"]["content"] == NOTES + "once\n"
    updates = [r for r in srv.requests if r[0] == "POST" and "/memories/mem_" in r[1]]
    assert len(updates) == 1       # the replay found it applied: not sent again
    assert len(srv.stores[SID].versions) == 2
    assert (repo / "system/notes.md").read_text() == NOTES + "once\n"


def test_redaction_in_the_store_is_followed_locally(srv, tmp_path):
    repo = cloned(srv, tmp_path)
    mid = by_path(srv)["/system/notes.md"]["id"]
    api = other(srv)
    leaked = api.memories.update(mid, memory_store_id=SID, content=NOTES + "door code 4471-secret\n")
    api.memories.update(mid, memory_store_id=SID, content=NOTES + "door code changed\n")
    assert sync(repo)[1]["state"] == "pulled"
    everything = git("log", "-p", "--all", cwd=repo).stdout
    assert "4471-secret" in everything
    api.memory_versions.redact(leaked.memory_version_id, memory_store_id=SID)
    res, out = sync(repo)
    assert res.returncode == 0, res.stderr
    assert "4471-secret" not in git("log", "-p", "--all", cwd=repo).stdout
    objects = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch"], cwd=repo,
                             capture_output=True, check=True).stdout
    assert b"4471-secret" not in objects
    assert "4471-secret" not in res.stdout + res.stderr
    # The files still are what the store has; the record commit sends nothing.
    assert (repo / "system/notes.md").read_text() == by_path(srv)["/system/notes.md"]["content"]
    assert "Memory-Op: redact" in git("log", "-1", "--format=%B", cwd=repo).stdout
    assert sync(repo)[1]["state"] == "clean"


def test_vanished_folder_is_never_sent_as_deletions(srv, tmp_path):
    repo = cloned(srv, tmp_path)
    shutil.rmtree(repo / "system")
    writes = [r for r in srv.requests if r[0] != "GET"]
    res, out = sync(repo)
    assert res.returncode == 1 and out["state"] == "dirty"
    assert [r for r in srv.requests if r[0] != "GET"] == writes
    assert "/system/notes.md" in by_path(srv)


def test_only_copy_of_an_edit_survives_a_delete_in_the_store(srv, tmp_path):
    repo = cloned(srv, tmp_path)
    edit(repo, "system/notes.md", NOTES + "the only copy\n", "only copy")
    mine = git("rev-parse", "HEAD", cwd=repo).stdout
    other(srv).memories.delete(by_path(srv)["/system/notes.md"]["id"], memory_store_id=SID)
    res, out = sync(repo)
    assert res.returncode == 1 and out["state"] == "conflict"
    assert git("rev-parse", "HEAD", cwd=repo).stdout == mine
    assert "the only copy" in (repo / "system/notes.md").read_text()
    assert git("rev-parse", out["backup_ref"], cwd=repo).stdout == mine


def test_hostile_store_path_refused_and_clone_leaves_nothing(srv, tmp_path):
    other(srv).memories.create(SID, path="/.git/hooks/post-checkout", content="#!/bin/sh\ntouch PWNED\n")
    dest = tmp_path / "mem"
    res = memory("clone", f"anthropic-store:{SID}", str(dest), cwd=tmp_path)
    assert res.returncode == 1 and "cannot be a file here" in res.stderr
    assert not dest.exists() and not (tmp_path / "PWNED").exists()
    res = memory("clone", "anthropic-store:memstore_NOPE", str(dest), cwd=tmp_path)
    assert res.returncode == 1 and "HTTP 404" in res.stderr and not dest.exists()


def test_two_clones_share_one_store(srv, tmp_path):
    one = cloned(srv, tmp_path)
    two = tmp_path / "two"
    assert memory("clone", f"anthropic-store:{SID}", str(two), cwd=tmp_path).returncode == 0
    edit(one, "system/a.md", memfile("from one", "a\n"), "one writes a")
    edit(two, "system/b.md", memfile("from two", "b\n"), "two writes b")
    assert sync(one)[1]["state"] == "pushed"
    res, out = sync(two)            # rebased onto one's version, then sent
    assert out["state"] == "pushed", out
    assert sync(one)[1]["state"] == "pulled"
    assert sorted(p.name for p in (one / "system").iterdir()) == ["a.md", "b.md", "notes.md"]
    assert git("rev-parse", "HEAD^{tree}", cwd=one).stdout == git("rev-parse", "HEAD^{tree}", cwd=two).stdout
    assert sorted(by_path(srv)) == ["/system/a.md", "/system/b.md", "/system/notes.md"]
    assert git("log", "-1", "--format=%s", cwd=one).stdout.strip() == "store: created /system/b.md"


def test_empty_store_first_push(srv, tmp_path):
    dest = tmp_path / "fresh"
    res = memory("clone", f"anthropic-store:{SID}", str(dest), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert memory("status", cwd=dest).returncode == 0
    edit(dest, "system/first.md", memfile("first", "hello\n"), "the first memory")
    res, out = sync(dest)
    assert out["state"] == "pushed", out
    assert by_path(srv)["/system/first.md"]["content"] == memfile("first", "hello\n")


# -- renames keep the memory's id ------------------------------------------------------

def test_rename_is_an_update_of_the_same_memory(srv, tmp_path):
    repo = cloned(srv, tmp_path)
    mid = by_path(srv)["/system/notes.md"]["id"]
    git("mv", "system/notes.md", "system/prefs.md", cwd=repo)
    git("commit", "-q", "-m", "notes are preferences", cwd=repo)
    res, out = sync(repo)
    assert out["state"] == "pushed", res.stderr
    assert by_path(srv)["/system/prefs.md"]["id"] == mid and "/system/notes.md" not in by_path(srv)
    last = srv.stores[SID].versions[-1]
    assert (last["operation"], last["memory_id"], last["path"]) == ("modified", mid, "/system/prefs.md")
    assert [v["operation"] for v in srv.stores[SID].versions] == ["created", "modified"]
    # Renamed and edited in one commit: still one update, path and content together.
    git("mv", "system/prefs.md", "system/likes.md", cwd=repo)
    edit(repo, "system/likes.md", NOTES + "Likes rain.\n", "likes, and rain")
    assert sync(repo)[1]["state"] == "pushed"
    now = by_path(srv)["/system/likes.md"]
    assert now["id"] == mid and now["content"] == NOTES + "Likes rain.\n"
    assert len(srv.stores[SID].versions) == 3
    # A rename made through the API moves the file here, under the same id.
    other(srv).memories.update(mid, memory_store_id=SID, path="/system/kept.md")
    assert sync(repo)[1]["state"] == "pulled"
    assert (repo / "system/kept.md").read_text() == NOTES + "Likes rain.\n"
    assert not (repo / "system/likes.md").exists()
    assert git("log", "-1", "--format=%s", cwd=repo).stdout.strip() == \
        "store: modified /system/kept.md (was /system/likes.md)"
    assert sync(repo)[1]["state"] == "clean"


# -- retries ------------------------------------------------------------------------------

@pytest.mark.parametrize("applied", [False, True])
def test_a_5xx_on_a_write_is_retried_and_applied_once(srv, tmp_path, applied):
    repo = cloned(srv, tmp_path)
    mid = by_path(srv)["/system/notes.md"]["id"]
    edit(repo, "system/notes.md", NOTES + "once\n", "once")
    srv.fail_next(f"/memories/{mid}", 503, applied=applied)
    res, out = sync(repo)
    assert out["state"] == "pushed", res.stderr
    assert 503 in srv.statuses
    assert by_path(srv)["/system/notes.md"]["content"] == NOTES + "once\n"
    assert srv.writes.count(("POST", f"/v1/memory_stores/{SID}/memories/{mid}")) == 1
    assert len(srv.stores[SID].versions) == 2
    assert (repo / "system/notes.md").read_text() == NOTES + "once\n"
    assert sync(repo)[1]["state"] == "clean"


def test_a_commit_cut_short_sends_only_what_did_not_land(srv, tmp_path):
    repo = cloned(srv, tmp_path)
    mid = by_path(srv)["/system/notes.md"]["id"]
    write(repo, "system/new.md", memfile("A new file", "hello\n"))     # sent first (sorted)...
    edit(repo, "system/notes.md", NOTES + "second\n", "two files at once")
    srv.fail_next(f"/memories/{mid}", 500)                             # ...the second fails
    before = len(srv.writes)
    res, out = sync(repo)
    assert out["state"] == "pushed", res.stderr
    assert srv.writes[before:] == [("POST", f"/v1/memory_stores/{SID}/memories"),   # created once,
                                   ("POST", f"/v1/memory_stores/{SID}/memories/{mid}")]  # updated once
    now = by_path(srv)
    assert now["/system/new.md"]["content"] == memfile("A new file", "hello\n")
    assert now["/system/notes.md"]["content"] == NOTES + "second\n"
    assert git("rev-parse", "HEAD^{tree}", cwd=repo).stdout == \
        git("rev-parse", "refs/memory/store/tip^{tree}", cwd=repo).stdout
    assert sync(repo)[1]["state"] == "clean"


def test_a_write_that_keeps_failing_stops_at_the_deadline(srv, tmp_path):
    repo = cloned(srv, tmp_path)
    mid = by_path(srv)["/system/notes.md"]["id"]
    edit(repo, "system/notes.md", NOTES + "never\n", "never lands")
    for _ in range(50):
        srv.fail_next(f"/memories/{mid}", 502)
    res, out = sync(repo, "--deadline", "1")
    assert res.returncode == 1 and out["state"] == "push_failed", out
    assert by_path(srv)["/system/notes.md"]["content"] == NOTES
    assert "never" in (repo / "system/notes.md").read_text()          # the commit stays here


# -- redaction made here reaches the store ---------------------------------------------

def test_local_redaction_is_sent_to_the_store(srv, tmp_path):
    api = other(srv)
    made = api.memories.create(SID, path="/system/notes.md", content=NOTES + "door code 4471-secret\n")
    api.memories.update(made.id, memory_store_id=SID, content=NOTES + "door code changed\n")
    codes = api.memories.create(SID, path="/system/codes.md", content=memfile("codes", "wifi 4471-secret\n"))
    dest = tmp_path / "mem"
    assert memory("clone", f"anthropic-store:{SID}", str(dest), cwd=tmp_path).returncode == 0
    res = memory("redact", "--text-file", "-", "-m", "forget the code", cwd=dest, input="4471-secret\n")
    assert res.returncode == 0, res.stderr
    # Each step fails once on the way: the new head's answer is lost, one redaction fails
    # after it was made, the next before.
    srv.lose_next_response(f"/memories/{codes.id}")
    srv.fail_next("/redact", 503, applied=True)
    srv.fail_next("/redact", 500)
    res, out = sync(dest)
    assert out["state"] == "pushed" and "redacted 2 versions there" in out["message"], (out, res.stderr)
    store = srv.stores[SID]
    assert not [v for v in store.versions if "4471-secret" in (v["content"] or "")]
    assert not [m for m in store.memories.values() if "4471-secret" in m["content"]]
    assert by_path(srv)["/system/codes.md"]["content"] == memfile("codes", "wifi [REDACTED]\n")
    assert [v["redacted_at"] is not None for v in store.versions] == [True, False, True, False]
    assert 400 not in srv.statuses                        # no live head was asked to be redacted
    assert [w for w in srv.writes if w[1].endswith("/redact")] == [
        ("POST", f"/v1/memory_stores/{SID}/memory_versions/{v['id']}/redact") for v in store.versions
        if v["redacted_at"]]                              # each once
    assert len(store.versions) == 4                       # the head rewritten once
    assert {500, 503} <= set(srv.statuses) and not srv._lose and not srv._fail   # all three happened
    assert (dest / "system/codes.md").read_text() == by_path(srv)["/system/codes.md"]["content"]
    assert sync(dest)[1]["state"] == "clean"
    # A second clone follows the redaction the store now has.
    two = tmp_path / "two"
    assert memory("clone", f"anthropic-store:{SID}", str(two), cwd=tmp_path).returncode == 0
    assert "4471-secret" not in git("log", "-p", "--all", cwd=two).stdout


def test_local_path_redaction_deletes_the_memory_then_redacts(srv, tmp_path):
    repo = cloned(srv, tmp_path)
    edit(repo, "system/leak.md", memfile("leak", "token abcd-1234\n"), "oops")
    assert sync(repo)[1]["state"] == "pushed"
    res = memory("redact", "--path", "system/leak.md", cwd=repo)
    assert res.returncode == 0, res.stderr
    res, out = sync(repo)
    assert out["state"] == "pushed", (out, res.stderr)
    assert "/system/leak.md" not in by_path(srv)
    leak = [v for v in srv.stores[SID].versions if v["operation"] == "created" and v["path"] is None]
    assert len(leak) == 1 and leak[0]["redacted_at"] is not None
    assert "/system/notes.md" in by_path(srv)


# -- the store's description ---------------------------------------------------------------

def test_description_is_what_compile_shows_both_ways(srv, tmp_path):
    repo = cloned(srv, tmp_path)
    assert git("config", "memory.storeDescription", cwd=repo).stdout.strip() == "what the agent knows"
    shown = memory("compile", cwd=repo).stdout
    assert '<memory_store name="notes">\nwhat the agent knows\n</memory_store>' in shown
    assert json.loads(memory("compile", "--json", cwd=repo).stdout)["store"] == {
        "id": SID, "name": "notes", "description": "what the agent knows"}
    anthropic.Anthropic(api_key=OTHER_KEY, base_url=srv.base_url).beta.memory_stores.update(
        SID, description="the user's tastes\nand habits")
    assert sync(repo)[1]["state"] == "clean"
    assert "the user's tastes\nand habits\n</memory_store>" in memory("compile", cwd=repo).stdout
    git("config", "memory.storeDescription", "tastes, habits, plans", cwd=repo)
    assert sync(repo)[1]["state"] == "clean"
    assert srv.stores[SID].description == "tastes, habits, plans"
    assert "memory_store" not in memory("compile", "--compat", "letta", cwd=repo).stdout
    # What a session starts with and what MCP's compile gives are that same text.
    block = '<memory_store name="notes">\ntastes, habits, plans\n</memory_store>'
    start = subprocess.run(["git", "memory", "--memory-dir", str(repo), "hook", "claude-code", "session-start"],
                           input=json.dumps({"session_id": "s", "source": "startup", "cwd": str(tmp_path)}),
                           capture_output=True, text=True, cwd=tmp_path)
    assert block in json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"], start.stdout
    git("config", "memory.storeDescription", "changed again", cwd=repo)  # config, not a commit: seen at once
    start = subprocess.run(["git", "memory", "--memory-dir", str(repo), "hook", "claude-code", "session-start"],
                           input=json.dumps({"session_id": "s", "source": "resume", "cwd": str(tmp_path)}),
                           capture_output=True, text=True, cwd=tmp_path)
    assert "\nchanged again\n</memory_store>" in json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"]
    pytest.importorskip("mcp", reason="the [mcp] extra is not installed")
    import os

    import anyio
    from mcp import Client, StdioServerParameters

    async def compiled() -> str:
        params = StdioServerParameters(command="git", args=["memory", "mcp"], cwd=str(repo), env=dict(os.environ))
        async with Client(params) as c:
            result = await c.call_tool("compile", {})
            return "".join(getattr(b, "text", "") for b in result.content)
    assert '<memory_store name="notes">\nchanged again\n</memory_store>' in anyio.run(compiled)


# -- dreams ---------------------------------------------------------------------------------

@landlock
def test_only_an_accepted_dream_reaches_the_store(srv, tmp_path):
    repo = cloned(srv, tmp_path)
    steps = ('git memory str_replace system/notes.md "Prefers tea." "Prefers green tea." -m "green" && '
             'git memory str_replace system/notes.md "green tea." "green tea, no sugar." -m "no sugar" && '
             'git memory create system/dreamed.md "A dreamed note." -d "From a dream" -m "dreamed"')
    pending = dream_json(repo, "--agent", steps, "--merge", "explicit", code=0)
    assert pending["status"] == "pending" and pending["commits"] == 3
    kept_run = dream_json(repo, "--agent", agent("badcommit.sh"), code=1)
    assert kept_run["status"] == "check_failed" and kept(repo, kept_run["id"])
    writes = list(srv.writes)
    assert sync(repo)[1]["state"] == "clean"                  # neither the pending nor the kept run
    assert srv.writes == writes and by_path(srv)["/system/notes.md"]["content"] == NOTES
    done = dream_json(repo, "finish", pending["id"], "--merge", code=0)
    assert done["status"] == "merged"
    res, out = sync(repo)
    assert out["state"] == "pushed", (out, res.stderr)
    now = by_path(srv)
    assert now["/system/notes.md"]["content"] == NOTES.replace("Prefers tea.", "Prefers green tea, no sugar.")
    assert "/system/dreamed.md" in now and "/system/broken.md" not in now
    # The merged result, one write per file: not the dream's steps one by one.
    assert len(srv.writes) == len(writes) + 2
    assert git("log", "-1", "--format=%s", "refs/memory/store/tip", cwd=repo).stdout.startswith("merge(dream)")
    assert sync(repo)[1]["state"] == "clean"
