"""search, log, show, diff, undo and restore end to end: histories built through the
edit commands (and a real dream), every refusal checked to leave the repo as it was."""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import LIB, cache_of, commit_all, git, head, memfile, memory, snapshot, write

sys.path.insert(0, str(LIB))


def ok(*args: str, cwd: Path, input: str | None = None) -> str:
    proc = memory(*args, cwd=cwd, input=input)
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout: {proc.stdout}\nstderr: {proc.stderr}"
    return proc.stdout


def js(*args: str, cwd: Path, code: int = 0) -> dict[str, Any]:
    proc = memory("--json", *args, cwd=cwd)
    assert proc.returncode == code, f"exit {proc.returncode}\nstdout: {proc.stdout}\nstderr: {proc.stderr}"
    assert proc.stdout.count("\n") == 1, proc.stdout
    return json.loads(proc.stdout)


def refused(repo: Path, *args: str, expect: str, code: int = 1) -> str:
    before = snapshot(repo)
    proc = memory(*args, cwd=repo)
    assert proc.returncode == code, f"exit {proc.returncode}: {proc.stdout}{proc.stderr}"
    assert proc.stderr.startswith("error: ") and expect in proc.stderr, proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert snapshot(repo) == before
    return proc.stderr


def travel_history(repo: Path) -> dict[str, str]:
    """create -> rename -> delete of a note, and an overwritten phone number."""
    shas = {}
    ok("create", "notes/trip.md", "Flight to Lisbon on May 3\n", "-d", "Travel plans", "-m", "Plan a trip",
       cwd=repo)
    shas["create"] = head(repo)
    ok("rename", "notes/trip.md", "notes/travel.md", "-m", "Better name", cwd=repo)
    shas["rename"] = head(repo)
    ok("delete", "notes/travel.md", "-m", "Trip cancelled", cwd=repo)
    shas["delete"] = head(repo)
    return shas


# -- search ------------------------------------------------------------------------------------

def test_search_lines_case_and_json_shape(mem: Path) -> None:
    out = ok("search", "sarah", cwd=mem)
    assert out.splitlines()[:3] == ["system/contacts.md: People I know",
                                    "system/contacts.md:4: Sarah: +1-555-0100",
                                    "system/contacts.md-5- Tom: +1-555-0199"], out  # a line of context
    assert ok("search", "SARAH", cwd=mem) == out  # words match in any case
    res = js("search", "Sarah", cwd=mem)
    assert {"ok", "message", "query", "rev", "history", "in", "regex", "mode", "count", "results",
            "more_lines", "more_files"} <= set(res)
    assert res["rev"] == head(mem) and res["count"] == 1 and res["mode"] == "ranked"
    (hit_file,) = res["results"]
    assert set(hit_file) == {"path", "description", "pinned", "score", "hits"}
    assert hit_file["pinned"] is True and hit_file["description"] == "People I know"
    assert hit_file["hits"] == [{"line": 4, "text": "Sarah: +1-555-0100", "in": "body"},
                                {"line": 5, "text": "Tom: +1-555-0199", "in": "context"}]


def test_search_ranks_pinned_files_on_their_merit_or_as_asked(repo: Path) -> None:
    write(repo, "notes/a.md", memfile("Misc", "Kiwi once.\n" + "Filler words here.\n" * 30))
    write(repo, "notes/b.md", memfile("Fruit", "Kiwi kiwi kiwi, I love kiwi.\nKiwi season.\n"))
    write(repo, "system/z.md", memfile("Pinned", "kiwi\n" + "other text\n" * 200))  # one in 400 words
    write(repo, "notes/c.md", memfile("Nothing", "no fruit here\n"))
    commit_all(repo, "fruit")
    res = js("search", "kiwi", cwd=repo)
    assert [r["path"] for r in res["results"]] == ["notes/b.md", "notes/a.md", "system/z.md"]
    assert res["results"][0]["score"] > res["results"][1]["score"] > res["results"][2]["score"]
    first = js("search", "kiwi", "--pinned", "first", cwd=repo)
    assert [r["path"] for r in first["results"]] == ["system/z.md", "notes/b.md", "notes/a.md"]
    omit = js("search", "kiwi", "--pinned", "omit", cwd=repo)
    assert [r["path"] for r in omit["results"]] == ["notes/b.md", "notes/a.md"]
    assert [r["path"] for r in js("search", "kiwi", "--limit", "1", cwd=repo)["results"]] == ["notes/b.md"]
    assert js("search", "kiwi", "notes/", cwd=repo)["count"] == 2  # limited to a folder


def test_search_questions_word_forms_fields_path_and_regex(repo: Path) -> None:
    write(repo, "notes/lisbon.md", memfile("Portugal trip", "Flight on May 3.\nHotel near the river.\n"
                                                            "We painted the old boat blue.\n"))
    write(repo, "notes/porto.md", memfile("Other trip", "Train to Porto.\n"))
    commit_all(repo, "trips")
    res = js("search", "flight hotel", cwd=repo)
    assert res["mode"] == "ranked" and [r["path"] for r in res["results"]] == ["notes/lisbon.md"]
    assert {h["line"] for h in res["results"][0]["hits"] if h["in"] == "body"} == {4, 5}
    # a question: stop words don't count, and word forms meet (paint / painted)
    res = js("search", "When did we paint the boat?", cwd=repo)
    assert [r["path"] for r in res["results"]] == ["notes/lisbon.md"]
    assert res["results"][0]["hits"][-1] == {"line": 6, "text": "We painted the old boat blue.", "in": "body"}
    res = js("search", "hotel porto", cwd=repo)  # no file holds both words: both files, ranked
    assert {r["path"] for r in res["results"]} == {"notes/lisbon.md", "notes/porto.md"}
    res = js("search", "portugal", "--in", "description", cwd=repo)
    assert res["results"][0]["hits"] == [{"line": 2, "text": "Portugal trip", "in": "description"}]
    assert js("search", "portugal", "--in", "body", cwd=repo)["count"] == 0
    res = js("search", "lisbon", cwd=repo)
    assert res["results"][0]["hits"] == [{"line": 0, "text": "notes/lisbon.md", "in": "path"}]
    assert js("search", "description", cwd=repo)["count"] == 0  # frontmatter keys are not content
    res = js("search", "--regex", r"May \d+", cwd=repo)
    assert res["mode"] == "regex" and res["results"][0]["hits"][0]["text"] == "Flight on May 3."
    # a PATH may follow the options (the docs' example)
    res = js("search", r"May \d+", "--regex", "--in", "body", "notes/", cwd=repo)
    assert [r["path"] for r in res["results"]] == ["notes/lisbon.md"]
    assert js("search", r"May \d+", "--regex", "system/", cwd=repo)["count"] == 0
    refused(repo, "search", "--regex", "(unclosed", expect="not a valid regular expression", code=2)
    refused(repo, "search", "x", "--no-such-option", expect="unrecognized arguments", code=2)


def test_search_falls_back_to_the_literal_text(repo: Path) -> None:
    write(repo, "notes/net.md", memfile("Network", "Gateway at 10.0.0.1:8080, token prefix ~~~\n"))
    commit_all(repo, "net")
    res = js("search", "~~~", cwd=repo)  # no word at all: matched as text
    assert res["mode"] == "literal" and res["results"][0]["hits"][0]["line"] == 4


def test_search_output_is_bounded_per_file_in_total_and_by_budget(repo: Path) -> None:
    body = "".join(f"line {i} mentions the harbour\n" if i % 2 else f"filler {i}\n" for i in range(20000))
    write(repo, "notes/huge.md", memfile("A long log", body + "x" * 50000 + " harbour " + "y" * 50000 + "\n"))
    for i in range(30):
        write(repo, f"notes/n{i}.md", memfile(f"Note {i}", "the harbour again\n"))
    commit_all(repo, "big")
    proc = memory("search", "harbour", cwd=repo)
    assert proc.returncode == 0 and len(proc.stdout) < 20000, len(proc.stdout)
    res = js("search", "harbour", cwd=repo)
    huge = next(r for r in res["results"] if r["path"] == "notes/huge.md")
    assert len([h for h in huge["hits"] if h["in"] == "body"]) == 3
    assert huge["more_lines"] > 9000 and res["more_lines"] >= huge["more_lines"]
    assert res["more_files"] == 31 - len(res["results"]) and res["count"] == 31
    assert "more matching lines in" in res["message"]
    one = js("search", "harbour", "--lines", "1", "--budget", "60", cwd=repo)
    assert len(one["results"]) >= 1 and len(json.dumps(one["results"])) < 2000
    assert one["more_files"] == 31 - len(one["results"])
    # a very long line is cut around its match
    long_line = js("search", "harbour", "notes/huge.md", "--lines", "20000", "--budget", "1000000", cwd=repo)
    texts = [h["text"] for h in long_line["results"][0]["hits"]]
    assert max(len(t) for t in texts) <= 302 and any("harbour" in t and t.startswith("…") for t in texts)


def test_a_regex_that_backtracks_without_end_is_stopped_and_named(repo: Path) -> None:
    """Issue 24 item 4: `(a+)+$` over a line of 40 a's never ended in --history."""
    write(repo, "notes/a.md", memfile("As", "a" * 40 + "b\n"))
    write(repo, "notes/" + "a" * 40 + "b.md", memfile("A path of a's", "x\n"))
    commit_all(repo, "as")
    git("config", "memory.regexTimeout", "1", cwd=repo)
    for args in (["--history"], ["--in", "path"], []):
        proc = memory("search", "--regex", "(a+)+$", *args, cwd=repo, timeout=60)
        assert proc.returncode == 1, (args, proc.stdout, proc.stderr)
        assert proc.stderr.startswith("error: search: the regular expression") and "limit" in proc.stderr
        assert proc.stderr.count("\n") == 1


def test_the_index_follows_commits_survives_damage_and_read_only_git_dirs(repo: Path) -> None:
    write(repo, "notes/a.md", memfile("A", "the albatross\n"))
    commit_all(repo, "a")
    assert js("search", "albatross", cwd=repo)["count"] == 1
    index = cache_of(repo) / "search/index.sqlite3"
    assert index.exists()
    write(repo, "notes/b.md", memfile("B", "another albatross\n"))
    write(repo, "notes/a.md", memfile("A", "the pelican\n"))
    commit_all(repo, "b")
    assert [r["path"] for r in js("search", "albatross", cwd=repo)["results"]] == ["notes/b.md"]
    assert js("search", "albatross", "--rev", "HEAD~1", cwd=repo)["results"][0]["path"] == "notes/a.md"
    assert js("search", "pelican", cwd=repo)["count"] == 1
    index.write_bytes(b"this is not a database" * 100)  # damaged: rebuilt
    assert js("search", "pelican", cwd=repo)["count"] == 1
    assert git("status", "--porcelain", cwd=repo).stdout == ""  # never in the work tree
    assert not (repo / ".git/memory-search").exists()  # kept outside the git dir an agent writes
    # a cache folder where the index can't be kept (here: its folder's name taken by a file,
    # as a read-only home would refuse it): the index is built in memory for the one search
    shutil.rmtree(cache_of(repo) / "search")
    (cache_of(repo) / "search").write_text("not a folder\n")
    assert js("search", "albatross", cwd=repo)["count"] == 1
    assert (cache_of(repo) / "search").read_text() == "not a folder\n"


def test_concurrent_searches_and_commits_all_answer(repo: Path) -> None:
    """Readers and writers of the index at once: every search answers, none sees a mix."""
    import concurrent.futures

    for i in range(20):
        write(repo, f"notes/n{i}.md", memfile(f"Note {i}", f"walrus number {i}\n"))
    commit_all(repo, "walruses")

    def searcher(k: int) -> list[int]:
        counts = []
        for _ in range(4):
            res = js("search", "walrus", "--limit", "100", cwd=repo)
            counts.append(res["count"])
        return counts

    def writer() -> None:
        for i in range(20, 26):
            ok("create", f"notes/n{i}.md", f"walrus number {i}\n", "-d", f"Note {i}", "-m", f"walrus {i}",
               cwd=repo)

    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        futures = [pool.submit(searcher, k) for k in range(5)] + [pool.submit(writer)]
        results = [f.result() for f in futures]
    for counts in results[:5]:
        assert all(20 <= c <= 26 for c in counts), counts
    assert js("search", "walrus", "--limit", "100", cwd=repo)["count"] == 26


def test_search_reads_commits_never_the_work_tree_and_rev(mem: Path) -> None:
    old = head(mem)
    ok("str_replace", "system/contacts.md", "0100", "0111", "-m", "Sarah moved", cwd=mem)
    write(mem, "notes/draft.md", memfile("Draft", "uncommitted zebra plan\n"))
    assert "No memory matches" in ok("search", "zebra", cwd=mem)
    assert "0111" in ok("search", "sarah", cwd=mem)
    assert "0100" in ok("search", "sarah", "--rev", old, cwd=mem)
    refused(mem, "search", "x", "--rev", "nosuchrev", expect="no commit nosuchrev in this memory; see git memory log")


def test_search_history_finds_deleted_renamed_and_overwritten_facts(mem: Path) -> None:
    shas = travel_history(mem)
    before = head(mem)
    ok("str_replace", "system/contacts.md", "0100", "0111", "-m", "Sarah moved", cwd=mem)
    assert "No memory matches" in ok("search", "lisbon", cwd=mem)
    res = js("search", "lisbon", "--history", cwd=mem)
    by_path = {r["path"]: r for r in res["results"]}
    # The note lived as notes/travel.md until just before the delete (the rename commit),
    # and as notes/trip.md until just before the rename (the create commit).
    assert by_path["notes/travel.md"]["commit"] == shas["rename"]
    assert by_path["notes/travel.md"]["present"] is False
    assert by_path["notes/trip.md"]["commit"] == shas["create"]
    assert by_path["notes/travel.md"]["hits"][0] == {"line": 4, "text": "Flight to Lisbon on May 3",
                                                     "in": "body", "commit": shas["rename"]}
    out = ok("search", "0100", "--history", cwd=mem)
    assert f"{before[:7]}:system/contacts.md:4: Sarah: +1-555-0100" in out, out
    res = js("search", "sarah", "--history", cwd=mem)
    (contacts,) = res["results"]
    assert contacts["present"] is True
    assert [h["text"] for h in contacts["hits"]] == ["Sarah: +1-555-0111", "Sarah: +1-555-0100"]


# -- log, show, diff ---------------------------------------------------------------------------

def test_log_lines_trailers_follow_rename_filters_and_json(mem: Path) -> None:
    shas = travel_history(mem)
    out = ok("log", "-n", "3", cwd=mem)
    lines = out.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith(shas["delete"][:7]) and " delete notes/travel.md — Trip cancelled" in lines[0]
    assert "human:Test User" in lines[0]
    res = js("log", "notes/travel.md", cwd=mem)
    assert res["follow"] is True
    assert [c["op"] for c in res["commits"]] == ["delete", "rename", "create"]  # followed across the rename
    first = res["commits"][-1]
    assert {"commit", "date", "author", "kind", "op", "paths", "reason", "trailers"} <= set(first)
    assert first["paths"] == ["notes/trip.md"] and first["reason"] == "Plan a trip"
    assert [c["op"] for c in js("log", "--op", "rename", cwd=mem)["commits"]] == ["rename"]
    assert js("log", "--since", "2000-01-01", cwd=mem)["count"] == js("log", cwd=mem)["count"]
    plain = [c for c in js("log", cwd=mem)["commits"] if c["reason"] == "fixture files"][0]
    assert plain["op"] == "git" and "system/rules.md" in plain["paths"]  # a plain git commit
    git("config", "memory.agentId", "agent-7", cwd=mem)
    ok("create", "notes/agent.md", "hi\n", "-d", "Agent note", "-m", "Agent writes", cwd=mem)
    assert js("log", "-n", "1", cwd=mem)["commits"][0]["kind"] == "agent"


def test_show_path_at_rev_and_where_a_missing_file_went(mem: Path) -> None:
    shas = travel_history(mem)
    assert ok("show", f"notes/trip.md@{shas['create'][:7]}", cwd=mem) == memfile(
        "Travel plans", "Flight to Lisbon on May 3\n")
    res = js("show", "notes/travel.md", "--rev", shas["rename"], cwd=mem)
    assert res["description"] == "Travel plans" and res["body"] == "Flight to Lisbon on May 3"
    assert res["commit"] == shas["rename"]
    err = refused(mem, "show", "notes/travel.md", expect="notes/travel.md does not exist")
    assert f"deleted or moved in {shas['delete'][:7]}" in err and "git memory restore" in err
    refused(mem, "show", "notes/never.md", expect="never existed")
    refused(mem, "show", "system", expect="system is a folder")


def test_diff_is_body_aware(mem: Path) -> None:
    ok("update_description", "system/contacts.md", "Friends and family", "-m", "Rename the topic", cwd=mem)
    ok("str_replace", "system/contacts.md", "0100", "0111", "-m", "Sarah moved", cwd=mem)
    out = ok("diff", "HEAD~2..HEAD", cwd=mem)
    assert "=== modified system/contacts.md" in out
    assert "  description: 'People I know' -> 'Friends and family'" in out
    assert "-Sarah: +1-555-0100\n+Sarah: +1-555-0111" in out
    assert "description" not in out.split("@@", 1)[1]  # the body diff holds body lines only
    res = js("diff", cwd=mem)  # the last commit
    (change,) = res["files"]
    assert change["frontmatter"] == {} and change["status"] == "modified"
    res = js("diff", "HEAD~2", "system/", cwd=mem)
    assert res["files"][0]["frontmatter"]["description"] == {"old": "People I know", "new": "Friends and family"}
    assert js("diff", "system/contacts.md", cwd=mem)["files"][0]["path"] == "system/contacts.md"


# -- undo and restore --------------------------------------------------------------------------

def test_undo_an_edit_through_the_write_path(mem: Path) -> None:
    ok("str_replace", "system/contacts.md", "0100", "0111", "-m", "Sarah moved", cwd=mem)
    edit = head(mem)
    ok("create", "notes/other.md", "x\n", "-d", "Other", "-m", "Unrelated later change", cwd=mem)
    before = snapshot(mem)
    out = ok("undo", edit, "--dry-run", cwd=mem)
    assert out.startswith(f"Would undo {edit[:7]} (Sarah moved):") and "+Sarah: +1-555-0100" in out
    assert snapshot(mem) == before
    res = js("undo", edit[:8], "-m", "She did not move", cwd=mem)
    assert res["commit"] == head(mem) and res["undoes"] == edit and res["paths"] == ["system/contacts.md"]
    assert "Sarah: +1-555-0100" in (mem / "system/contacts.md").read_text()
    assert (mem / "notes/other.md").exists()
    body = git("log", "-1", "--format=%B", cwd=mem).stdout
    assert body.startswith("She did not move\n") and "Memory-Op: undo" in body
    assert f"Memory-Undoes: {edit}" in body and "Memory-Path: system/contacts.md" in body
    assert git("status", "--porcelain", cwd=mem).stdout == ""
    assert js("log", "-n", "1", cwd=mem)["commits"][0]["undoes"] == edit


def test_undo_a_delete_and_last(mem: Path) -> None:
    shas = travel_history(mem)
    ok("undo", "--last", "-m", "Trip is on again", cwd=mem)
    assert (mem / "notes/travel.md").read_text() == memfile("Travel plans", "Flight to Lisbon on May 3\n")
    assert git("log", "-1", "--format=%(trailers:key=Memory-Undoes,valueonly)", cwd=mem).stdout.strip() \
        == shas["delete"]
    ok("undo", "--last", "-m", "Cancelled after all", cwd=mem)  # undoing the undo
    assert not (mem / "notes/travel.md").exists()


def test_undo_refused_on_read_only_conflict_unknown_and_dirty(mem: Path) -> None:
    fixture = head(mem)
    # Undoing the commit that created the read_only file would delete it.
    refused(mem, "undo", fixture, "-m", "drop fixture", expect="system/rules.md: file is read_only")
    # A human changed the read_only file with plain git; taking that back changes it again.
    write(mem, "system/rules.md", memfile("Ground rules", "Never share secrets. Ever.\n", "read_only: true"))
    human = commit_all(mem, "human tightens the rules")
    refused(mem, "undo", human, "-m", "revert", expect="read_only and cannot be modified")
    # A later edit to the same line: the undo would clash with it.
    ok("str_replace", "system/contacts.md", "0100", "0111", "-m", "Sarah moved", cwd=mem)
    first = head(mem)
    ok("str_replace", "system/contacts.md", "0111", "0122", "-m", "Sarah moved again", cwd=mem)
    err = refused(mem, "undo", first, "-m", "undo first move",
                  expect=f"taking back {first[:7]} conflicts with later changes in system/contacts.md")
    assert "nothing was changed" in err
    refused(mem, "undo", "abc1234", "-m", "x", expect="no commit abc1234 in this memory; see git memory log")
    refused(mem, "undo", "--dream", "20990101000000-deadbeef", "-m", "x",
            expect="no dream 20990101000000-deadbeef was merged into this memory; see git memory log --dreams")
    refused(mem, "undo", first, expect="give the reason with -m REASON", code=2)
    refused(mem, "undo", first, "--last", "-m", "x", expect="exactly one of", code=2)
    write(mem, "system/contacts.md", "dirty\n")
    refused(mem, "undo", "--last", "-m", "x", expect="uncommitted changes")


def test_restore_a_deleted_file_and_refusals(mem: Path) -> None:
    shas = travel_history(mem)
    out = ok("restore", "notes/trip.md", "--rev", shas["create"][:7], "-m", "Bring the trip back", cwd=mem)
    assert out.startswith("Memory restore committed (")
    assert (mem / "notes/trip.md").read_text() == memfile("Travel plans", "Flight to Lisbon on May 3\n")
    body = git("log", "-1", "--format=%B", cwd=mem).stdout
    assert "Memory-Op: restore" in body and f"Memory-Restored-From: {shas['create']}" in body
    refused(mem, "restore", "notes/trip.md", "--rev", shas["create"], "-m", "again", expect="already as it was")
    refused(mem, "restore", "notes/nothing.md", "--rev", "HEAD~1", "-m", "x", expect="never existed")
    refused(mem, "restore", "../etc/passwd", "--rev", "HEAD", "-m", "x", expect="traversal")
    ok("str_replace", "system/contacts.md", "0100", "0111", "-m", "Sarah moved", cwd=mem)
    res = js("restore", "system/contacts.md", "--rev", "HEAD~1", "--dry-run", cwd=mem)
    assert res["dry_run"] is True and "-Sarah: +1-555-0111" in res["message"]
    assert "0111" in (mem / "system/contacts.md").read_text()


# -- call ----------------------------------------------------------------------------------------

def call(repo: Path, obj: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    proc = memory("call", json.dumps(obj), cwd=repo)
    assert proc.stderr == "", proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def test_call_search_log_undo_letta_schema(mem: Path) -> None:
    shas = travel_history(mem)
    code, out = call(mem, {"command": "search", "query": "lisbon", "history": True, "limit": 1})
    assert code == 0 and out["count"] == 2 and len(out["results"]) == 1
    code, out = call(mem, {"command": "log", "file_path": "notes/travel.md", "limit": 1})
    assert code == 0 and out["commits"][0]["commit"] == shas["delete"]
    code, out = call(mem, {"command": "undo", "last": True})
    assert code == 2 and out["ok"] is False and "-m REASON" in out["error"]
    code, out = call(mem, {"command": "undo", "commit": shas["delete"], "reason": "Back on"})
    assert code == 0 and out["undoes"] == shas["delete"] and out["commit"] == head(mem)
    code, out = call(mem, {"command": "show", "file_path": "notes/travel.md"})
    assert code == 0 and out["description"] == "Travel plans"
    code, out = call(mem, {"command": "restore", "file_path": "notes/trip.md", "rev": shas["create"],
                           "reason": "Both names"})
    assert code == 0 and out["paths"] == ["notes/trip.md"]
    code, out = call(mem, {"command": "undo", "commit": "abc1234", "reason": "x"})
    assert code == 1 and out["error"] == "undo: no commit abc1234 in this memory; see git memory log"


# -- dreams ---------------------------------------------------------------------------------------

def _landlock() -> pytest.MarkDecorator:
    from gitmemfs.dream import sandbox

    abi, why = sandbox.probe_abi()
    return pytest.mark.skipif(abi < sandbox.MIN_ABI, reason="needs Linux Landlock ABI >= 2: " + why)


@_landlock()
def test_log_dreams_and_undo_a_dream_merge_as_one_unit(mem: Path) -> None:
    before = head(mem)
    cmd = ('git memory str_replace system/contacts.md "Tom: +1-555-0199" "Tom: moved away" -m "Tom left" && '
           'git memory create notes/dream.md "A consolidated fact." -d "Dream notes" -m "Consolidate"')
    proc = memory("--json", "create", "notes/later.md", "x\n", "-d", "Later", "-m", "before dream", cwd=mem)
    assert proc.returncode == 0
    from conftest import run

    dream = run("dream", "--json", "--agent", cmd, cwd=mem, timeout=120)
    out = json.loads(dream.stdout)
    assert out["status"] == "merged", out
    dream_id = out["id"]
    res = js("log", "--dreams", cwd=mem)
    (entry,) = res["commits"]
    assert entry["dream_id"] == dream_id and entry["op"] == "dream" and entry["kind"] == "dream"
    assert [m["subject"] for m in entry["merged"]] == ["Consolidate", "Tom left"]
    assert set(entry["paths"]) == {"system/contacts.md", "notes/dream.md"}
    text = ok("log", "--dreams", cwd=mem)
    assert f"[{dream_id}]" in text and "Tom left" in text
    assert "A consolidated fact." in ok("search", "consolidated", cwd=mem)
    ok("create", "notes/after.md", "y\n", "-d", "After", "-m", "after dream", cwd=mem)
    res = js("undo", "--dream", dream_id, "-m", "The dream got Tom wrong", cwd=mem)
    assert res["undoes"] == out["head"] and sorted(res["paths"]) == ["notes/dream.md", "system/contacts.md"]
    assert not (mem / "notes/dream.md").exists() and (mem / "notes/after.md").exists()
    assert "Tom: +1-555-0199" in (mem / "system/contacts.md").read_text()
    assert git("diff", "--stat", before, "HEAD", "--", "system/", cwd=mem).stdout == ""


def test_every_word_on_one_line_ranks_first(repo: Path) -> None:
    write(repo, "notes/exact.md", memfile("Exact", "The blue door key is under the mat.\n"))
    write(repo, "notes/words.md", memfile("Words", "A key.\nThe door is blue.\n"))
    commit_all(repo, "keys")
    for query in ("blue door key", "key blue door"):
        res = js("search", query, cwd=repo)
        assert [r["path"] for r in res["results"]] == ["notes/exact.md", "notes/words.md"], query


def test_python_api_for_in_process_callers(mem: Path) -> None:
    from gitmemfs.core.errors import MemfsError
    from gitmemfs.core.repo import open_repo
    from gitmemfs.edit.undo import restore, undo
    from gitmemfs.view.history import diff, log, show
    from gitmemfs.view.search import search

    shas = travel_history(mem)
    repo = open_repo(str(mem))
    found = search(repo, "lisbon", history=True, limit=5)
    assert found.as_dict()["count"] == 2 and found.files[0].commit in (shas["rename"], shas["create"])
    assert [e.op for e in log(repo, ["notes/travel.md"]).entries] == ["delete", "rename", "create"]
    assert show(repo, f"notes/trip.md@{shas['create']}").doc.description == "Travel plans"
    assert diff(repo, f"{shas['rename']}..{shas['delete']}").as_dict()["files"][0]["status"] == "deleted"
    before = snapshot(mem)
    assert undo(repo, last=True, reason="x", dry_run=True).as_dict()["dry_run"] is True
    assert snapshot(mem) == before
    out = restore(repo, "notes/travel.md", shas["rename"], "Back again")
    assert out.as_dict()["restored_from"] == shas["rename"] and out.commit == head(mem)
    with pytest.raises(MemfsError, match="no commit abc1234 in this memory; see git memory log"):
        undo(repo, "abc1234", reason="x")


def test_a_long_lived_process_keeps_its_index_only_while_it_is_the_same_file(repo: Path) -> None:
    """The MCP server keeps its index connection between calls: removed (by redact, say)
    or damaged in place, the next search builds it anew instead of answering from it."""
    from gitmemfs.core.repo import open_repo
    from gitmemfs.view.search import search

    write(repo, "notes/a.md", memfile("A", "the albatross\n"))
    commit_all(repo, "a")
    mem = open_repo(str(repo))
    assert search(mem, "albatross").total == 1
    folder = cache_of(repo) / "search"
    shutil.rmtree(folder)
    assert search(mem, "albatross").total == 1 and (folder / "index.sqlite3").exists()
    with open(folder / "index.sqlite3", "r+b") as fh:  # the same file, its pages overwritten
        fh.write(b"\0garbage" * 4096)
    assert search(mem, "albatross").total == 1
