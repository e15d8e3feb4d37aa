"""Letta Code compatibility (issue 27) and the recorded layout (issue 24, items 5 and 6).

Each test names the Letta Code behaviour it matches: the file of letta-ai/letta-code
(or of the npm package @letta-ai/letta-code 0.32) and the test or function there.
Inputs and outcomes are Letta's; the code and wording here are ours. Everything runs
end to end: real repositories, commits through the installed hooks, our commands.
"""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pytest

from conftest import commit_all, git, head, memory, run, snapshot, write

PERSONA = '---\nname: "Persona"\ndescription: "Identity"\n---\nPersistent.\n'


def v2(body: str, name: str = "Notes") -> str:
    """Letta's v2Memory() helper's shape (src/agent/memory-git-v2-precommit.test.ts)."""
    return f"---\nname: {name}\ndescription: Test memory\n---\n{body}"


def letta_made(tmp_path: Path, name: str = "letta") -> Path:
    """A root-index memory as Letta Code makes it (src/agent/memory-git.ts
    initializeLocalMemoryRepo): plain git, `letta.agentId` in the local config, a root
    MEMORY.md; no system/, no memory.repo. Our hooks are installed on it."""
    path = tmp_path / name
    git("init", "-q", "-b", "main", str(path), cwd=tmp_path)
    git("config", "letta.agentId", "agent-1234", cwd=path)
    write(path, "MEMORY.md", "# Memory\n")
    write(path, "persona.md", PERSONA)
    git("add", "-A", cwd=path)
    git("commit", "-q", "-m", "seed", cwd=path)
    proc = memory("hooks", "install", cwd=path)
    assert proc.returncode == 0, proc.stderr
    return path


def commit(repo: Path, env: dict[str, str] | None = None) -> tuple[int, str]:
    """`git add -A && git commit` through the installed hooks; a refusal changes nothing."""
    git("add", "-A", cwd=repo)
    before = snapshot(repo)
    proc = git("commit", "-q", "-m", "change", cwd=repo, check=False, env=env)
    if proc.returncode != 0:
        assert snapshot(repo) == before
    return proc.returncode, proc.stdout + proc.stderr


def refused_edit(repo: Path, *args: str, needle: str, **kw: object) -> None:
    before = snapshot(repo)
    proc = memory(*args, cwd=repo, **kw)  # type: ignore[arg-type]
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert needle in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    assert snapshot(repo) == before


@pytest.fixture
def lettarepo(tmp_path: Path) -> Path:
    return letta_made(tmp_path)


# -- item 1: the root index cannot be deleted -------------------------------------------

def test_the_root_index_cannot_be_deleted_at_any_gate(lettarepo: Path) -> None:
    # Letta: memory-git-v2-precommit.test.ts "keeps v2 constraints active when the root
    # marker is staged for deletion" (staged with another change); src/tools/impl/memory.ts
    # "MEMORY.md indexes cannot be deleted"; memory-apply-patch.ts "MEMORY.md indexes
    # cannot be deleted or moved".
    git("rm", "-q", "MEMORY.md", cwd=lettarepo)
    write(lettarepo, "persona.md", v2("p" * 100, "Persona"))
    code, out = commit(lettarepo)
    assert code == 1 and "MEMORY.md: root memory index is required for MemFS v2" in out
    git("reset", "-q", "--hard", cwd=lettarepo)
    refused_edit(lettarepo, "delete", "MEMORY.md", "-m", "drop the index",
                 needle="MEMORY.md indexes cannot be deleted")
    refused_edit(lettarepo, "call", json.dumps({"command": "delete", "reason": "x", "file_path": "MEMORY"}),
                 needle="MEMORY.md indexes cannot be deleted")
    refused_edit(lettarepo, "rename", "MEMORY.md", "INDEX.md", "-m", "rename the index",
                 needle="MEMORY.md indexes cannot be renamed")
    patch = "*** Begin Patch\n*** Delete File: MEMORY.md\n*** End Patch\n"
    before = snapshot(lettarepo)
    proc = run("memory-patch", "-m", "drop", cwd=lettarepo, input=patch)
    assert proc.returncode == 1 and "MEMORY.md indexes cannot be deleted or moved" in proc.stderr
    assert snapshot(lettarepo) == before


def test_a_layout_change_is_refused_at_the_range_gate_unless_a_person_approved(tmp_path: Path) -> None:
    # issue 24, item 5: deleting the root index would lift every limit of letta-root.
    path = tmp_path / "root"
    assert memory("init", "--layout", "letta-root", str(path), cwd=tmp_path).returncode == 0
    base = head(path)
    git("rm", "-q", "MEMORY.md", cwd=path)
    write(path, "persona.md", v2("p" * 100_000, "Persona"))
    commit_all(path, "bypass the hook")  # --no-verify: the range gate is the authority
    proc = memory("check", f"{base}..HEAD", cwd=path)
    assert proc.returncode == 1
    assert "MEMORY.md: root memory index is required for MemFS v2" in proc.stdout + proc.stderr
    assert "persona.md: is 100,047 characters, over maxFileCharacters (20,000)" in proc.stdout + proc.stderr
    # A person's approval (today GIT_MEMORY_APPROVE=layout) lets the change through.
    git("reset", "-q", "--hard", base, cwd=path)
    git("rm", "-q", "MEMORY.md", cwd=path)
    code, out = commit(path, env={"GIT_MEMORY_APPROVE": "layout"})
    assert code == 0, out


def test_adding_a_root_index_to_a_system_layout_memory_is_a_layout_change(repo: Path) -> None:
    write(repo, "MEMORY.md", "# Memory\n")
    code, out = commit(repo)
    assert code == 1 and "adding a root MEMORY.md turns this system/-layout memory into the letta-root" in out
    # The first files of a new memory choose its layout freely.
    fresh = repo.parent / "fresh"
    git("init", "-q", "-b", "main", str(fresh), cwd=repo.parent)
    git("config", "memory.repo", "true", cwd=fresh)
    assert memory("hooks", "install", cwd=fresh).returncode == 0
    write(fresh, "MEMORY.md", "# Memory\n")
    write(fresh, "persona.md", PERSONA)
    git("add", "-A", cwd=fresh)
    proc = git("commit", "-q", "-m", "first", cwd=fresh, check=False)
    assert proc.returncode == 0, proc.stderr


# -- item 2: a memory as Letta makes it is a memory --------------------------------------

def test_a_letta_made_root_memory_takes_our_edits(lettarepo: Path) -> None:
    # Letta: src/agent/memory-git.ts sets letta.agentId; the root MEMORY.md selects v2
    # (src/agent/memory-format.ts detectMemoryFormat).
    proc = memory("str_replace", "persona.md", "Persistent.", "Still here.", "-m", "edit", cwd=lettarepo)
    assert proc.returncode == 0, proc.stderr
    proc = memory("call", json.dumps({"command": "create", "reason": "r", "file_path": "project",
                                      "description": "What we build", "file_text": "A compiler."}), cwd=lettarepo)
    assert proc.returncode == 0 and json.loads(proc.stdout)["ok"], proc.stdout + proc.stderr
    assert memory("check", "--all", cwd=lettarepo).returncode == 0


# -- item 3 and issue 24 item 6: Markdown needs its folder's index -------------------------

UNINDEXED = "silent/notes.md: missing required index silent/MEMORY.md"


def test_markdown_in_an_unindexed_folder_is_refused_at_every_gate(lettarepo: Path) -> None:
    # Letta: memory-git-v2-precommit.test.ts "requires indexes for Markdown directories
    # while ignoring skills"; memory-format.ts assertMemfsV2MemoryPathIndexed.
    write(lettarepo, "silent/notes.md", "Not projected.\n")
    write(lettarepo, "skills/demo/SKILL.md", "Skill format.\n")
    code, out = commit(lettarepo)
    assert code == 1 and UNINDEXED in out
    git("reset", "-q", "--hard", cwd=lettarepo)
    git("clean", "-qfd", cwd=lettarepo)
    refused_edit(lettarepo, "create", "silent/notes.md", "x", "-d", "d", "-m", "r", needle=UNINDEXED)
    patch = "*** Begin Patch\n*** Add File: silent/notes.md\n+x\n*** End Patch\n"
    before = snapshot(lettarepo)
    proc = run("memory-patch", "-m", "add", cwd=lettarepo, input=patch)
    assert proc.returncode == 1 and UNINDEXED in proc.stderr
    assert snapshot(lettarepo) == before
    base = head(lettarepo)
    write(lettarepo, "silent/notes.md", "Not projected.\n")
    commit_all(lettarepo, "bypass")
    proc = memory("check", f"{base}..HEAD", cwd=lettarepo)
    assert proc.returncode == 1 and UNINDEXED in proc.stdout + proc.stderr
    proc = memory("check", "--all", cwd=lettarepo)
    assert proc.returncode == 1 and UNINDEXED in proc.stdout + proc.stderr


def test_a_file_that_becomes_memory_is_judged_in_that_commit(lettarepo: Path) -> None:
    # issue 24, item 6; Letta: the same v2 test, "activate silent directory" fails on
    # silent/notes.md's missing frontmatter once silent/MEMORY.md is added.
    write(lettarepo, "silent/notes.md", "x" * 30_000)
    commit_all(lettarepo, "an unindexed file slips in past the hook")
    base = head(lettarepo)
    write(lettarepo, "silent/MEMORY.md", "# Silent is now memory\n")
    code, out = commit(lettarepo)
    assert code == 1
    assert "silent/notes.md: missing frontmatter" in out and "(it becomes memory in this commit)" in out
    assert "silent/notes.md: is 30,000 characters, over maxFileCharacters (20,000)" in out
    commit_all(lettarepo, "past the hook again")
    proc = memory("check", f"{base}..HEAD", cwd=lettarepo)
    assert proc.returncode == 1 and "silent/notes.md: is 30,000 characters" in proc.stdout + proc.stderr
    # Removing an index leaves its Markdown unindexed: refused the same way.
    write(lettarepo, "kept/MEMORY.md", "# Kept\n")
    write(lettarepo, "kept/a.md", v2("a\n"))
    git("rm", "-q", "-r", "--cached", "silent", cwd=lettarepo)
    (lettarepo / "silent/MEMORY.md").unlink()
    (lettarepo / "silent/notes.md").unlink()
    commit_all(lettarepo, "tidy")
    git("rm", "-q", "kept/MEMORY.md", cwd=lettarepo)
    code, out = commit(lettarepo)
    assert code == 1 and "kept/a.md: missing required index kept/MEMORY.md" in out


# -- item 4: the author in Letta's shell ------------------------------------------------

def _author(repo: Path) -> str:
    return git("log", "-1", "--format=%an <%ae>", cwd=repo).stdout.strip()


def test_author_identity_in_lettas_shell(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Letta: src/tools/impl/memory.ts getAgentIdentity -> authorEmail `${agentId}@letta.com`
    # (Letta's shell exports AGENT_ID and LETTA_AGENT_ID together).
    monkeypatch.setenv("MEMORY_DIR", str(repo))
    env = {"AGENT_ID": "agent-7", "LETTA_AGENT_ID": "agent-7", "AGENT_NAME": "Seven"}
    proc = memory("create", "system/a.md", "x", "-d", "d", "-m", "r", cwd=repo, env=env)
    assert proc.returncode == 0, proc.stderr
    assert _author(repo) == "Seven <agent-7@letta.com>"
    proc = memory("create", "system/b.md", "x", "-d", "d", "-m", "r", cwd=repo, env={"AGENT_ID": "other"})
    assert proc.returncode == 0 and _author(repo) == "other <other@agents.invalid>"
    # A name set for another agent does not travel to memory.agentId's commits.
    git("config", "memory.agentId", "agent-cfg", cwd=repo)
    git("config", "memory.agentName", "Configured", cwd=repo)
    proc = memory("create", "system/c.md", "x", "-d", "d", "-m", "r", cwd=repo, env={"AGENT_NAME": "Intruder"})
    assert proc.returncode == 0 and _author(repo) == "Configured <agent-cfg@agents.invalid>"
    proc = memory("create", "system/d.md", "x", "-d", "d", "-m", "r", cwd=repo, env={"AGENT_ID": "agent-9"})
    assert proc.returncode == 0 and _author(repo) == "agent-9 <agent-9@agents.invalid>"


# -- item 5: tool calls in a root-index memory ------------------------------------------

def test_root_layout_tool_calls_as_letta_makes_them(lettarepo: Path) -> None:
    # Letta: src/tools/impl/memory.ts assertMemoryLabelAllowed ("core memory uses root
    # Markdown files, not system/"), defaultMemoryName and renderMemoryMarkdown (name
    # title-cased from the file name, both values JSON-quoted, name first).
    refused_edit(lettarepo, "create", "system/x.md", "x", "-d", "d", "-m", "r",
                 needle="core memory uses root Markdown files, not system/")
    proc = memory("create", "project_notes.md", "Due in May.", "-d", 'The "alpha" plan', "-m", "r", cwd=lettarepo)
    assert proc.returncode == 0, proc.stderr
    assert (lettarepo / "project_notes.md").read_text() == (
        '---\nname: "Project Notes"\ndescription: "The \\"alpha\\" plan"\n---\nDue in May.\n')


# -- item 6: .memfs.config.json as strict as Letta's --------------------------------------

@pytest.mark.parametrize("settings, message", [
    ({"version": 2, "maxDepth": 1}, "version must be 1"),
    ({"version": 1, "maxFileCharacters": 0}, "'maxFileCharacters' must be a positive whole number"),
    ({"version": 1, "maxCoreMemoryCharacters": 1.5}, "'maxCoreMemoryCharacters' must be a positive whole number"),
    ({"version": 1, "maxDepth": -1}, "'maxDepth' must be a non-negative whole number"),
    ({"version": 1, "fileCharacterLimits": [{"pattern": "reference/**.md", "maxCharacters": 100}]},
     "'**' is allowed only as a whole path segment"),
    ({"version": 1, "fileCharacterLimits": [{"pattern": "../x", "maxCharacters": 100}]},
     "pattern must be a non-empty relative glob using '/'"),
    ({"version": 1, "fileCharacterLimits": [{"pattern": "x/**", "maxCharacters": 0}]},
     "must be a positive whole number or null"),
    ({"maxDepth": 2}, "version must be 1"),
])
def test_constraints_config_is_validated_as_letta_does(lettarepo: Path, settings: dict, message: str) -> None:
    # Letta: memory-git-v2-precommit.test.ts "rejects unsupported config versions",
    # "rejects globstars that are not complete path segments"; parseMemoryConstraintsConfig.
    write(lettarepo, ".memfs.config.json", json.dumps(settings))
    code, out = commit(lettarepo, env={"LETTA_MEMORY_CONSTRAINTS_UPDATE": "1"})
    assert code == 1 and message in out, out


def test_a_committed_invalid_config_blocks_every_commit(lettarepo: Path) -> None:
    # Letta validates the staged config on every commit (letta-memory-constraints.cjs main()).
    write(lettarepo, ".memfs.config.json", '{"version": 2}\n')
    commit_all(lettarepo, "past the hook")
    write(lettarepo, "persona.md", PERSONA + "more\n")
    code, out = commit(lettarepo)
    assert code == 1 and ".memfs.config.json: version must be 1" in out


# -- item 7: the Letta memory remote ------------------------------------------------------

class _Recorder(BaseHTTPRequestHandler):
    seen: list[dict[str, str]]

    def do_GET(self) -> None:
        self.server.seen.append({k.lower(): v for k, v in self.headers.items()})  # type: ignore[attr-defined]
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def recorder() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    server.seen = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_clone_letta_agent_uses_the_memfs_base_url_and_backend_header(tmp_path: Path,
                                                                    recorder: ThreadingHTTPServer) -> None:
    # Letta: src/agent/memory-git.ts reads LETTA_MEMFS_BASE_URL (default api.letta.com)
    # and adds `x-letta-memfs-backend: hosted` when LETTA_MEMFS_BACKEND=hosted.
    port = recorder.server_address[1]
    env = {"LETTA_BASE_URL": f"http://127.0.0.1:{port}", "LETTA_API_KEY": "sk-let-desktopproxy0123456789",
           "LETTA_MEMFS_BASE_URL": "http://127.0.0.1:9", "LETTA_HOME": str(tmp_path / "home")}
    proc = memory("--json", "clone", "--letta-agent", "agent-1", cwd=tmp_path, env=env)
    assert proc.returncode != 0
    assert recorder.seen == []  # the Desktop proxy named by LETTA_BASE_URL never hears of it
    env.update(LETTA_MEMFS_BASE_URL=f"http://127.0.0.1:{port}", LETTA_MEMFS_BACKEND="hosted")
    proc = memory("clone", "--letta-agent", "agent-1", str(tmp_path / "c"), cwd=tmp_path, env=env)
    assert proc.returncode != 0 and recorder.seen  # 404, but the request came with Letta's headers
    first = recorder.seen[0]
    assert first.get("x-letta-memfs-backend") == "hosted"
    assert first.get("authorization", "").startswith("Basic ")
    assert "sk-let-desktopproxy0123456789" not in proc.stdout + proc.stderr


# -- item 8: signing ----------------------------------------------------------------------

def test_a_memory_commits_under_a_global_gpgsign(tmp_path: Path, hermetic: Path) -> None:
    # Letta: src/agent/memory-git.signing.test.ts (memory commits never ask for a key).
    with open(hermetic / ".gitconfig", "a") as fh:
        fh.write("[commit]\n\tgpgsign = true\n[gpg]\n\tprogram = false\n")
    path = tmp_path / "m"
    assert memory("init", str(path), cwd=tmp_path).returncode == 0
    assert git("config", "--local", "commit.gpgsign", cwd=path).stdout.strip() == "false"
    write(path, "system/persona.md", "---\ndescription: me\n---\nchanged by a plain git commit\n")
    code, out = commit(path)
    assert code == 0, out


# -- item 9: OpenHands tool calls ---------------------------------------------------------

ACTION = {"kind": "ActionEvent", "id": "evt-action-1", "timestamp": "2026-07-04T09:15:30.001122",
          "source": "agent", "thought": [{"type": "text", "text": "I'll run the tests first."}],
          "tool_name": "terminal", "tool_call_id": "toolu_01ABC",
          "tool_call": {"id": "toolu_01ABC", "name": "terminal", "arguments": '{"command": "bun test"}'},
          "action": {"kind": "TerminalAction", "command": "bun test"}}
OBSERVATION = {"kind": "ObservationEvent", "id": "evt-obs-1", "timestamp": "2026-07-04T09:15:35.445566",
               "source": "environment", "tool_name": "terminal", "tool_call_id": "toolu_01ABC",
               "action_id": "evt-action-1",
               "observation": {"kind": "TerminalObservation", "content": [{"type": "text", "text": "1 pass, 0 fail"}],
                               "is_error": False}}
ERROR = {"kind": "AgentErrorEvent", "id": "evt-err-1", "timestamp": "2026-07-04T09:15:36.000000",
         "source": "agent", "tool_call_id": "toolu_01ABC", "action_id": "evt-action-1", "error": "command not found"}


def _events(folder: Path, *events: dict) -> Path:
    (folder / "events").mkdir(parents=True)
    for i, event in enumerate(events):
        (folder / "events" / f"event-{i:05d}-{event['id']}.json").write_text(json.dumps(event))
    return folder


def test_openhands_tool_calls_keep_arguments_results_and_failures(tmp_path: Path) -> None:
    # Letta: src/cli/subcommands/dream-sources/openhands.test.ts "pairs actions with
    # observations and emits thought as assistant", "maps agent errors to failed tool results".
    from gitmemfs.dream import sources

    rows = sources.openhands_rows(str(_events(tmp_path / "a", ACTION, OBSERVATION)))
    assert rows == [
        {"kind": "assistant", "text": "I'll run the tests first.", "captured_at": "2026-07-04T09:15:30.001122Z",
         "source_message_id": "evt-action-1:thought"},
        {"kind": "tool_call", "name": "terminal", "argsText": '{"command": "bun test"}',
         "resultText": "1 pass, 0 fail", "resultOk": True, "captured_at": "2026-07-04T09:15:30.001122Z",
         "source_message_id": "evt-action-1"}]
    rows = sources.openhands_rows(str(_events(tmp_path / "b", {**ACTION, "thought": []}, ERROR)))
    assert rows == [{"kind": "tool_call", "name": "terminal", "argsText": '{"command": "bun test"}',
                     "resultText": "command not found", "resultOk": False,
                     "captured_at": "2026-07-04T09:15:30.001122Z", "source_message_id": "evt-action-1"}]


# -- item 10: case collisions ---------------------------------------------------------------

def test_doctor_flags_folder_aliases_and_unicode_twins(repo: Path) -> None:
    # Letta: src/agent/memory-git-case-collisions.test.ts (findCaseCollidingTrackedPath
    # compares every folder prefix, so PDF/a.md beside pdf/b.md collides).
    write(repo, "reference/PDF/a.md", "---\ndescription: a\n---\n")
    write(repo, "reference/pdf/b.md", "---\ndescription: b\n---\n")
    write(repo, "reference/caf\u00e9.md", "---\ndescription: nfc\n---\n")
    write(repo, "reference/cafe\u0301.md", "---\ndescription: nfd\n---\n")
    commit_all(repo, "twins")
    proc = memory("--json", "doctor", cwd=repo)
    found = [f for f in json.loads(proc.stdout)["problems"] if f["kind"] == "case"]
    assert [f["path"] for f in found] == ["reference/PDF", "reference/cafe\u0301.md"], found


def test_create_refuses_a_path_that_collides_by_case(repo: Path) -> None:
    write(repo, "reference/PDF/a.md", "---\ndescription: a\n---\n")
    commit_all(repo, "one spelling")
    refused_edit(repo, "create", "reference/pdf/b.md", "x", "-d", "d", "-m", "r",
                 needle="collides with the tracked reference/PDF")
    refused_edit(repo, "create", "System/x.md", "x", "-d", "d", "-m", "r", needle="collides with the tracked system")
    assert memory("create", "reference/PDF/b.md", "x", "-d", "d", "-m", "r", cwd=repo).returncode == 0


# -- Letta's committed-constraints audit, against `git memory check --all` ----------------

def _plain_repo(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    git("init", "-q", "-b", "main", str(path), cwd=tmp_path)
    git("config", "letta.agentId", "agent-audit", cwd=path)
    return path


def test_audit_reports_structural_failures_already_committed(tmp_path: Path) -> None:
    # Letta: src/agent/memory-constraints-audit.test.ts "reports structural and budget
    # failures already committed at HEAD" (we report the missing index; an unindexed file
    # is not measured against the limits until it is memory).
    repo = _plain_repo(tmp_path, "invalid")
    write(repo, "MEMORY.md", "# Memory\n")
    write(repo, "unindexed/notes.md", "n" * 20_001)
    commit_all(repo, "invalid memory")
    proc = memory("check", "--all", cwd=repo)
    assert proc.returncode == 1
    assert "unindexed/notes.md: missing required index unindexed/MEMORY.md" in proc.stdout + proc.stderr


def test_audit_keeps_legacy_validation_before_a_repository_enters_v2(tmp_path: Path) -> None:
    # Letta: memory-constraints-audit.test.ts "keeps legacy validation before a
    # repository enters v2": a root system.md without frontmatter and no MEMORY.md is valid.
    repo = _plain_repo(tmp_path, "legacy")
    write(repo, "system.md", "legacy memory\n")
    commit_all(repo, "legacy memory")
    proc = memory("check", "--all", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_an_index_is_created_without_a_description(lettarepo: Path) -> None:
    # Letta: src/tools/impl/memory.ts create: "description … unused for frontmatter-free
    # MEMORY.md indexes" (isV2Index), and the index body ends with a newline.
    call = {"command": "create", "reason": "a notes folder", "file_path": "notes/MEMORY.md", "file_text": "# Notes"}
    proc = memory("call", json.dumps(call), cwd=lettarepo)
    assert proc.returncode == 0 and json.loads(proc.stdout)["ok"], proc.stdout + proc.stderr
    assert (lettarepo / "notes/MEMORY.md").read_text() == "# Notes\n"
    refused_edit(lettarepo, "call", json.dumps({**call, "file_path": "notes/a.md"}),
                 needle="'description' must be a non-empty string")
