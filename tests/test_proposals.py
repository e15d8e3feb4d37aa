"""Proposals (issue 37): an agent proposes what only a person may change (`--propose`);
the person accepts or rejects it (`git memory proposals`, the review page). Real repos
with the hooks installed, `bin/` commands, `git memory call`, the MCP server through
the official SDK client, GitMemoryTool, and a real bare server with the gate and
allowed signers (ssh-keygen keys, git's own ssh signing)."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from test_approvals import keypair, needs_ssh_keygen, server_head, signed, use_key

from conftest import git, head, memory, run, snapshot, write

RULES = "system/rules.md"  # read_only in the `mem` fixture
HINT = "An agent may propose it instead (add --propose"


def agent(repo: Path) -> dict[str, str]:
    """An agent's environment: its id (the commit author), its memory folder."""
    return {"AGENT_ID": "a1", "MEMORY_DIR": str(repo)}


def proposals(repo: Path) -> dict[str, str]:
    out = git("for-each-ref", "--format=%(refname:lstrip=3) %(objectname)", "refs/memory/proposals/", cwd=repo)
    return dict(line.split() for line in out.stdout.splitlines())


def propose(repo: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    proc = memory("--json", *args, "--propose", cwd=repo, env=env)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    out: dict[str, Any] = json.loads(proc.stdout)
    assert out["ok"] and out["applied"] is False and f"proposed as {out['proposed']}, not applied" in out["message"]
    return out


EDITS = {
    "str_replace": ("str_replace", RULES, "Never share secrets.", "Never share passwords."),
    "insert": ("insert", RULES, "1", "Be kind."),
    "update_description": ("update_description", RULES, "The ground rules"),
    "delete": ("delete", RULES),
    "rename": ("rename", RULES, "system/ground.md"),
}


@pytest.mark.parametrize("case", list(EDITS))
def test_each_edit_refused_for_a_person_can_be_proposed_and_changes_nothing(mem: Path, case: str) -> None:
    args = EDITS[case]
    before = snapshot(mem)
    refused = memory(*args, "-m", "agent wants it", cwd=mem)
    assert refused.returncode == 1 and HINT in refused.stderr, refused.stderr
    out = propose(mem, *args, "-m", "agent wants it")
    assert snapshot(mem) == before, "main, the index and the work tree are untouched"
    sha = proposals(mem)[out["proposed"]]
    assert git("rev-parse", f"{sha}^", cwd=mem).stdout.strip() == head(mem), "on top of today's main"
    body = git("log", "-1", "--format=%B", sha, cwd=mem).stdout
    assert body.startswith("agent wants it") and "Memory-Proposal-Needs: " in body
    assert "Memory-Approved" not in body


def test_protected_paths_and_the_limits_file_are_proposed_in_a_plain_memory(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    assert memory("init", "--layout", "plain", str(root), cwd=tmp_path).returncode == 0
    assert memory("create", "persona.md", "I am.", "-d", "persona", "-m", "p", cwd=root).returncode == 0
    assert memory("protect", "persona.md", "-m", "keep", cwd=root).returncode == 0
    before = snapshot(root)
    out = propose(root, "str_replace", "persona.md", "I am.", "I was.", "-m", "agent")
    config = {"command": "str_replace", "path": "/memories/.memfs.config.json", "old_str": '"persona.md"',
              "new_str": '"other.md"'}
    refused = json.loads(memory("call", "--schema", "anthropic", json.dumps(config), cwd=root).stdout)
    assert refused["ok"] is False and refused["needs_person"] == ["constraints"], refused
    made = json.loads(memory("call", "--schema", "anthropic", "--propose", json.dumps(config), cwd=root).stdout)
    assert made["ok"] and set(proposals(root)) == {out["proposed"], made["proposed"]}
    assert snapshot(root) == before
    shown = json.loads(memory("proposals", "show", made["proposed"], "--json", cwd=root).stdout)["proposal"]
    assert shown["needs"] == ["constraints"] and shown["problems"] == []
    assert memory("proposals", "accept", made["proposed"], cwd=root).returncode == 0
    assert "Memory-Approved: constraints" in git("log", "-1", "--format=%B", cwd=root).stdout
    assert '"other.md"' in (root / ".memfs.config.json").read_text()


def test_memory_patch_proposes_too(mem: Path) -> None:
    patch = f"*** Begin Patch\n*** Update File: {RULES}\n@@\n-Never share secrets.\n+Share nothing.\n*** End Patch\n"
    before = snapshot(mem)
    refused = run("memory-patch", "-m", "agent", "-", cwd=mem, input=patch)
    assert refused.returncode == 1 and HINT in refused.stderr
    proc = run("memory-patch", "--json", "--propose", "-m", "agent", "-", cwd=mem, input=patch)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["proposed"] in proposals(mem)
    assert snapshot(mem) == before


def test_a_proposal_must_pass_every_rule_but_the_person_only_ones(mem: Path) -> None:
    # Dropping the frontmatter's description breaks a rule no person's approval lifts.
    patch = (f"*** Begin Patch\n*** Update File: {RULES}\n@@\n-description: Ground rules\n+title: rules\n"
             "*** End Patch\n")
    before = snapshot(mem)
    proc = run("memory-patch", "--propose", "-m", "agent", "-", cwd=mem, input=patch)
    assert proc.returncode == 1 and "description" in proc.stderr and HINT not in proc.stderr, proc.stderr
    assert proposals(mem) == {} and snapshot(mem) == before


def test_show_accept_and_reject_from_the_cli(mem: Path) -> None:
    one = propose(mem, "str_replace", RULES, "Never share secrets.", "Never share passwords.", "-m", "narrower",
                  env=agent(mem))["proposed"]
    two = propose(mem, "delete", RULES, "-m", "not needed", env=agent(mem))["proposed"]
    listed = json.loads(memory("proposals", "list", "--json", cwd=mem).stdout)["proposals"]
    assert sorted((p["id"], p["op"], p["paths"], p["stale"]) for p in listed) == sorted([
        (one, "str_replace", [RULES], False), (two, "delete", [RULES], False)])
    # Main moves on (an agent's edit elsewhere): the proposal is stale, and still applies.
    assert memory("str_replace", "system/contacts.md", "Tom", "Thomas", "-m", "Tom", cwd=mem).returncode == 0
    shown = memory("proposals", "show", one, cwd=mem)
    assert shown.returncode == 0, shown.stderr
    assert "+Never share passwords." in shown.stdout and "passes the memory rules" in shown.stdout
    assert "needs a person's approval of: protect" in shown.stdout and "prompt: " in shown.stdout
    assert json.loads(memory("proposals", "show", one, "--json", cwd=mem).stdout)["proposal"]["stale"] is True
    accepted = memory("proposals", "accept", one, "--note", "fine", cwd=mem)
    assert accepted.returncode == 0, accepted.stderr
    message = git("log", "-1", "--format=%B", cwd=mem).stdout
    assert message.startswith("narrower") and f"Memory-Proposal: {one}" in message
    assert "Memory-Approved: protect" in message
    assert "Never share passwords." in (mem / RULES).read_text() and "read_only: true" in (mem / RULES).read_text()
    assert git("log", "-1", "--format=%ae", cwd=mem).stdout.strip() != "a1@agents.invalid"
    assert git("status", "--porcelain", cwd=mem).stdout == ""
    before = snapshot(mem)
    rejected = memory("proposals", "reject", two, "--note", "keep the rules", cwd=mem)
    assert rejected.returncode == 0, rejected.stderr
    assert proposals(mem) == {} and snapshot(mem) == before
    log = [json.loads(line) for line in (mem / ".git" / "memory-proposals.log").read_text().splitlines()]
    assert [(e["id"], e["action"], e["note"]) for e in log] == [(one, "accepted", "fine"),
                                                                (two, "rejected", "keep the rules")]


def test_a_stale_proposal_that_conflicts_is_refused_and_shown(mem: Path) -> None:
    ident = propose(mem, "str_replace", RULES, "Never share secrets.", "Never share passwords.", "-m", "a")["proposed"]
    # The person changes the same line meanwhile (a plain git commit with the approval).
    write(mem, RULES, (mem / RULES).read_text().replace("Never share secrets.", "Share no secrets."))
    git("commit", "-q", "-am", "person's own wording", "--trailer", "Memory-Approved: protect", cwd=mem,
        env={"GIT_MEMORY_APPROVE": "protect"})
    shown = memory("proposals", "show", ident, cwd=mem)
    assert f"conflicts with today's main at: {RULES}" in shown.stdout, shown.stdout
    before = snapshot(mem)
    proc = memory("proposals", "accept", ident, cwd=mem)
    assert proc.returncode == 1 and "conflicts with today's" in proc.stderr and RULES in proc.stderr
    assert snapshot(mem) == before and ident in proposals(mem)


def test_agent_text_reaches_the_terminal_inert(mem: Path) -> None:
    reason = "evil \x1b]0;pwned\x07 title"
    ident = propose(mem, "str_replace", RULES, "Never share secrets.", "x", "-m", reason)["proposed"]
    out = memory("proposals", "list", cwd=mem).stdout + memory("proposals", "show", ident, cwd=mem).stdout
    assert "\x1b" not in out and "\x07" not in out and "\\x1b" in out


# -- no entry point an agent drives accepts anything ---------------------------------------

def test_call_proposes_and_cannot_accept(mem: Path) -> None:
    before = snapshot(mem)
    edit = {"command": "str_replace", "file_path": RULES, "old_string": "Never share secrets.",
            "new_string": "Share.", "reason": "agent"}
    refused = json.loads(memory("call", json.dumps(edit), cwd=mem).stdout)
    assert refused["ok"] is False and '"propose": true' in refused["error"]
    out = json.loads(memory("call", json.dumps({**edit, "propose": True}), cwd=mem).stdout)
    assert out["ok"] and out["proposed"] in proposals(mem) and "not applied" in out["message"]
    anthropic = {"command": "str_replace", "path": f"/memories/{RULES}", "old_str": "Never share secrets.",
                 "new_str": "Share.", "propose": True}
    out = json.loads(memory("call", "--schema", "anthropic", json.dumps(anthropic), cwd=mem).stdout)
    assert out["ok"] and out["proposed"] in proposals(mem), out
    assert snapshot(mem) == before
    for attempt in ({"command": "accept", "id": out["proposed"], "reason": "agent accepts"},
                    {"command": "proposals", "action": "accept", "id": out["proposed"], "reason": "x"}):
        answer = json.loads(memory("call", json.dumps(attempt), cwd=mem).stdout)
        assert answer["ok"] is False
    assert snapshot(mem) == before and len(proposals(mem)) == 2


def test_mcp_tools_propose_and_none_accepts(mem: Path) -> None:
    pytest.importorskip("mcp.server.mcpserver", reason="the [mcp] extra is not installed")
    from test_mcp import call, stdio, text

    before = snapshot(mem)
    args = {"path": RULES, "old_string": "Never share secrets.", "new_string": "Share.", "reason": "agent"}

    async def body(c: Any) -> Any:
        tools = (await c.list_tools()).tools
        refused = await c.call_tool("str_replace", args)
        done = await c.call_tool("str_replace", {**args, "propose": True})
        try:
            accept = await c.call_tool("accept", {"id": "x"})
        except Exception as exc:  # noqa: BLE001 - the server refuses an unknown tool as a protocol error
            accept = exc
        return tools, refused, done, accept

    tools, refused, done, accept = call(stdio(mem), body)
    names = {t.name for t in tools}
    assert not {n for n in names if "accept" in n or "proposal" in n or "approve" in n}
    assert all("propose" in t.input_schema["properties"] for t in tools if t.name in ("str_replace", "apply_patch"))
    assert refused.is_error and "propose" in text(refused)
    assert not done.is_error and done.structured_content["proposed"] in proposals(mem), text(done)
    assert getattr(accept, "is_error", True) and "unknown tool 'accept'" in str(getattr(accept, "message", accept))
    assert snapshot(mem) == before


def test_git_memory_tool_proposes_and_cannot_accept(tmp_path: Path) -> None:
    tools = pytest.importorskip("anthropic.lib.tools")
    from gitmemfs.integrations.anthropic import GitMemoryTool

    tool = GitMemoryTool(tmp_path / "base")
    tool.call({"command": "create", "path": "/memories/notes.md", "file_text": "keep this\n"})
    root = tmp_path / "base" / "memories"
    assert memory("protect", "notes.md", "-m", "a person keeps it", cwd=root).returncode == 0
    before = snapshot(root)
    edit = {"command": "str_replace", "path": "/memories/notes.md", "old_str": "keep", "new_str": "drop"}
    with pytest.raises(tools.ToolError) as refused:
        tool.call(edit)
    assert "propose" in str(refused.value)
    answer = GitMemoryTool(tmp_path / "base", propose=True).call(edit)
    listed = json.loads(memory("proposals", "list", "--json", cwd=root).stdout)["proposals"]
    assert len(listed) == 1 and f"proposed as {listed[0]['id']}, not applied" in str(answer)
    with pytest.raises((tools.ToolError, NotImplementedError)):  # the SDK itself knows no such command
        tool.call({"command": "accept", "path": "/memories/notes.md"})
    with pytest.raises(tools.ToolError):
        tool._backend.run({"command": "accept", "path": "/memories/notes.md"}, None, {})
    assert snapshot(root) == before


# -- the server gate: only the person's signed accept passes --------------------------------

@needs_ssh_keygen
def test_a_signed_accept_passes_the_gate_and_an_agents_own_accept_does_not(mem: Path, tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    keys.mkdir()
    person, other = keypair(keys, "person"), keypair(keys, "other")
    allowed = keys / "allowed_signers"
    allowed.write_text(f'person@example.com namespaces="git" {(keys / "person.pub").read_text()}')
    server = tmp_path / "server.git"
    git("init", "-q", "--bare", str(server), cwd=tmp_path)
    git("remote", "add", "origin", str(server), cwd=mem)
    git("push", "-q", "origin", "main", cwd=mem)
    assert memory("hooks", "install", cwd=server).returncode == 0
    for where in (server, mem):
        git("config", "gpg.ssh.allowedSignersFile", str(allowed), cwd=where)
    git("config", "memory.approvalTrailers", "true", cwd=server)
    use_key(mem, person)
    edit = ("str_replace", RULES, "Never share secrets.", "Never share passwords.")
    ident = propose(mem, *edit, "-m", "narrower", env=agent(mem))["proposed"]
    # The agent's own "accept": the change committed by hand with the trailer, unsigned.
    write(mem, RULES, (mem / RULES).read_text().replace("Never share secrets.", "Never share passwords."))
    git("commit", "-q", "-am", "narrower", "--trailer", "Memory-Approved: protect", cwd=mem,
        env={"GIT_MEMORY_APPROVE": "protect"})
    before = server_head(server)
    pushed = git("push", "origin", "main", cwd=mem, check=False)
    assert pushed.returncode != 0 and "read_only" in pushed.stderr, pushed.stderr
    git("reset", "-q", "--hard", "HEAD~1", cwd=mem)
    # The agent runs accept with a key of its own: signed, but by no allowed signer.
    use_key(mem, other)
    assert memory("proposals", "accept", ident, cwd=mem).returncode == 0
    assert signed(mem)
    pushed = git("push", "origin", "main", cwd=mem, check=False)
    assert pushed.returncode != 0 and server_head(server) == before
    git("reset", "-q", "--hard", "HEAD~1", cwd=mem)
    # The person's accept: signed with the person's key because signers are set.
    ident = propose(mem, *edit, "-m", "narrower", env=agent(mem))["proposed"]
    use_key(mem, person)
    assert memory("proposals", "accept", ident, cwd=mem).returncode == 0
    assert signed(mem)
    pushed = git("push", "origin", "main", cwd=mem, check=False)
    assert pushed.returncode == 0, pushed.stderr
    assert server_head(server) == head(mem)


# -- the review page's Pending list ---------------------------------------------------------

def test_the_review_page_lists_proposals_and_accepts_and_rejects_over_http(mem: Path) -> None:
    pytest.importorskip("starlette", reason="the [review] extra is not installed")
    from test_review import request, review

    one = propose(mem, "str_replace", RULES, "Never share secrets.", "Never share passwords.", "-m", "narrower",
                  env=agent(mem))["proposed"]
    two = propose(mem, "delete", RULES, "-m", "not needed", env=agent(mem))["proposed"]
    with review(cwd=mem) as info:
        status, page = request(info, "GET", "/pending")
        assert status == 200 and f"item-{one}" in page and f"item-{two}" in page
        assert "needs a person&#39;s approval of protect" in page and "<ins>passwords</ins>" in page
        token = re.search(r'name="form_token" value="([^"]+)"', page)
        assert token
        origin = {"Origin": info["base"]}
        before = snapshot(mem)
        # Without the form token (a cross-site post): refused, nothing changes.
        assert request(info, "POST", f"/pending/proposal/{one}/accept", body={}, headers=origin)[0] == 403
        assert snapshot(mem) == before
        status, text = request(info, "POST", f"/pending/proposal/{one}/accept",
                               body={"form_token": token.group(1), "expect": proposals(mem)[one]}, headers=origin)
        assert status == 200 and f"Proposal {one} accepted" in text, text
        status, text = request(info, "POST", f"/pending/proposal/{two}/reject",
                               body={"form_token": token.group(1), "note": "keep it"}, headers=origin)
        assert status == 200 and f"Proposal {two} rejected" in text, text
    message = git("log", "-1", "--format=%B", cwd=mem).stdout
    assert f"Memory-Proposal: {one}" in message and "Memory-Approved: protect" in message
    assert proposals(mem) == {} and (mem / RULES).exists()
    log = (mem / ".git" / "memory-proposals.log").read_text()
    assert '"note": "keep it"' in log and two in log


def test_accept_and_reject_a_proposal_in_the_browser(mem: Path, tmp_path: Path) -> None:
    pytest.importorskip("starlette", reason="the [review] extra is not installed")
    import test_review

    if not Path(test_review.CHROMIUM).exists():
        pytest.skip(f"{test_review.CHROMIUM} is missing: apt-get install chromium (.ci/run does)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright (the [dev] extra)")
    one = propose(mem, "insert", RULES, "1", "Be kind.", "-m", "kindness", env=agent(mem))["proposed"]
    two = propose(mem, "rename", RULES, "system/ground.md", "-m", "rename", env=agent(mem))["proposed"]
    with sync_api.sync_playwright() as pw, test_review.review(cwd=mem) as info:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=test_review.CHROMIUM, headless=True, args=test_review.FLAGS)
        try:
            page = context.new_page()
            page.goto(info["url"])
            page.click("nav >> text=Pending")
            section = page.locator(f"#item-{one}")
            assert "Be kind." in section.inner_text() and "passes the memory rules" in section.inner_text()
            section.locator("button.accept").click()
            assert f"Proposal {one} accepted" in page.inner_text("#result")
            page.click("nav >> text=Pending")
            other = page.locator(f"#item-{two}")
            other.locator("input[name=note]").fill("the name is right")
            other.locator("button.reject").click()
            assert f"Proposal {two} rejected" in page.inner_text("#result")
        finally:
            context.close()
    assert "Be kind." in (mem / RULES).read_text() and not (mem / "system/ground.md").exists()
    assert f"Memory-Proposal: {one}" in git("log", "-1", "--format=%B", cwd=mem).stdout
    assert proposals(mem) == {}


def test_a_dream_agent_that_runs_accept_gets_nothing_merged(mem: Path) -> None:
    from dreamkit import dream_json, landlock

    if landlock.args[0]:  # the marker's own condition: no sandbox here
        pytest.skip(landlock.kwargs["reason"])
    ident = propose(mem, "str_replace", RULES, "Never share secrets.", "Never share passwords.", "-m", "narrower",
                    env=agent(mem))["proposed"]
    before = snapshot(mem)
    out = dream_json(mem, "--agent", f"git memory proposals accept {ident}")
    assert out["status"] != "merged", out
    assert snapshot(mem) == before and "Never share secrets." in (mem / RULES).read_text()
    assert ident in proposals(mem), "the person's decision is still open"


def page_accept(mem: Path, info: dict[str, Any], ident: str) -> tuple[int, str]:
    """The person's click on Accept, as the page's form sends it: its token and the
    proposal's commit the page showed."""
    from test_review import request

    page = request(info, "GET", "/pending")[1]
    token = re.search(r'name="form_token" value="([^"]+)"', page)
    assert token
    return request(info, "POST", f"/pending/proposal/{ident}/accept", headers={"Origin": info["base"]},
                   body={"form_token": token.group(1), "expect": proposals(mem)[ident]})


def test_accept_runs_no_program_the_memorys_config_names(mem: Path, tmp_path: Path) -> None:
    """An accept may sign with the person's key: a program an agent named in the memory's
    own config (gpg.ssh.program) never runs in it, on the command line or the page."""
    pytest.importorskip("starlette", reason="the [review] extra is not installed")
    from test_review import review

    marker = tmp_path / "ran"
    script = write(tmp_path, "program.sh", f"#!/bin/sh\ntouch '{marker}'\nexit 1\n")
    script.chmod(0o755)
    ident = propose(mem, "insert", RULES, "1", "Be kind.", "-m", "kindness", env=agent(mem))["proposed"]
    git("config", "gpg.ssh.program", str(script), cwd=mem)
    before = snapshot(mem)
    out = memory("proposals", "accept", ident, cwd=mem)
    assert out.returncode == 1 and "gpg.ssh.program" in out.stderr and out.stderr.startswith("error: "), out.stderr
    with review(cwd=mem) as info:
        status, text = page_accept(mem, info, ident)
    assert status == 409 and "gpg.ssh.program" in text, text
    assert not marker.exists() and snapshot(mem) == before and ident in proposals(mem)


def test_the_page_previews_an_item_again_once_main_moves(mem: Path) -> None:
    """The Pending list keeps each item's preview while nothing it depends on changes;
    once main moves, the next load judges the item against the new main."""
    pytest.importorskip("starlette", reason="the [review] extra is not installed")
    from test_review import request, review

    ident = propose(mem, "str_replace", RULES, "Never share secrets.", "Never share passwords.", "-m", "narrower",
                    env=agent(mem))["proposed"]
    with review(cwd=mem) as info:
        first = request(info, "GET", "/pending")[1]
        assert "passes the memory rules" in first and first == request(info, "GET", "/pending")[1]
        later = propose(mem, "insert", RULES, "1", "Be kind.", "-m", "kindness", env=agent(mem))["proposed"]
        assert f"item-{later}" in request(info, "GET", "/pending")[1], "a new ref is a new list"
        assert memory("proposals", "reject", later, cwd=mem).returncode == 0
        assert f"item-{later}" not in request(info, "GET", "/pending")[1]
        text = (mem / RULES).read_text().replace("Never share secrets.", "Never share keys.")
        write(mem, RULES, text)
        git("commit", "-q", "-am", "a person's own edit", cwd=mem, env={"GIT_MEMORY_APPROVE": "protect"})
        again = request(info, "GET", "/pending")[1]
    assert f"item-{ident}" in again and "conflicts with today&#39;s main" in again and RULES in again


def test_the_pages_accept_runs_no_hook_an_agent_planted(mem: Path, tmp_path: Path) -> None:
    """A hook file an agent left in the hooks folder would run with the person's keys and
    ssh-agent inside the accept: the page's accept runs none, as protect does."""
    pytest.importorskip("starlette", reason="the [review] extra is not installed")
    from test_review import review

    marker = tmp_path / "hook-ran"
    hook = write(mem, ".git/hooks/reference-transaction", f"#!/bin/sh\necho \"$1\" >> '{marker}'\n")
    hook.chmod(0o755)
    ident = propose(mem, "insert", RULES, "1", "Be kind.", "-m", "kindness", env=agent(mem))["proposed"]
    marker.unlink(missing_ok=True)  # proposing ran it: the agent's own command
    with review(cwd=mem) as info:
        status, text = page_accept(mem, info, ident)
    assert status == 200 and f"Proposal {ident} accepted" in text, text
    assert "Be kind." in (mem / RULES).read_text() and ident not in proposals(mem)
    assert not marker.exists(), marker.read_text()
