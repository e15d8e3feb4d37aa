"""Issue 24: what a dream agent can reach besides its worktree. Each test runs a scripted
agent that really attempts the attack through `git dream`:

- item 1: read GIT_MEMORY_MCP_TOKEN (environment, /proc) and write another agent's
  memory through `git memory mcp --http --root`;
- item 11: write the main memory through the token-less loopback MCP server;
- item 2: sign with the person's ssh-agent (SSH_AUTH_SOCK, or the socket's path);
- the environment by allow-list; the agent's own commits are not the person's.
"""
from __future__ import annotations

import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Iterator

import pytest

from conftest import git, head, memory
from dreamkit import AGENTS, agent, dream, dream_json, landlock, log_of, mcp_http, port_of, py_agent, wait_for
from gitmemfs.dream import pidns, state

pytestmark = landlock
needs_pidns = pytest.mark.skipif(not pidns.available()[0], reason=pidns.available()[1] or "no PID namespace")
needs_mcp = pytest.mark.skipif(not shutil.which("git-memory") or
                               __import__("importlib").util.find_spec("mcp") is None,
                               reason="the [mcp] extra is not installed")

TOKEN = "mcp-tok-7c1d44e0b9a2f3"


def agent_lines(out: dict) -> str:
    return "\n".join(ln for ln in log_of(out).splitlines() if "git dream:" not in ln)


# -- item 1: the MCP server's bearer token --------------------------------------------------------

@needs_mcp
@needs_pidns
def test_agent_cannot_use_the_mcp_token_to_write_another_agents_memory(repo: Path, tmp_path: Path) -> None:
    root = tmp_path / "agents"
    assert memory("init", str(root / "bob" / "memory"), "--agent-id", "bob", cwd=tmp_path).returncode == 0
    bob = root / "bob" / "memory"
    bob_head = head(bob)
    with mcp_http(tmp_path, "--root", str(root), env={"GIT_MEMORY_MCP_TOKEN": TOKEN}) as url:
        # The port is allowed, so only the environment and the PID namespace stand in the way.
        git("config", "dream.sandbox.allowPort", str(port_of(url)), cwd=repo)
        out = dream_json(repo, "--agent", py_agent("mcp_attack.py", url, "bob"),
                         env={"GIT_MEMORY_MCP_TOKEN": TOKEN}, code=0)
        said = agent_lines(out)
        assert "NO_TOKEN" in said and "CONNECTED but HTTP 401" in said, said
        git("config", "--unset", "dream.sandbox.allowPort", cwd=repo)
        out = dream_json(repo, "--agent", py_agent("mcp_attack.py", url, "bob"),
                         env={"GIT_MEMORY_MCP_TOKEN": TOKEN}, code=0)
        assert "REFUSED [Errno 13]" in agent_lines(out), agent_lines(out)
    assert head(bob) == bob_head, git("log", "--oneline", cwd=bob).stdout
    assert not (bob / "notes" / "planted.md").exists()
    assert TOKEN not in git("log", "--all", "-p", cwd=repo).stdout
    runs = repo / ".git" / "dream" / "runs"
    assert not any(TOKEN in p.read_text(errors="replace") for p in runs.rglob("*") if p.is_file())


# -- item 11: the loopback MCP server without a token --------------------------------------------

@needs_mcp
def test_loopback_mcp_server_is_out_of_reach_unless_its_port_is_allowed(repo: Path) -> None:
    with mcp_http(repo) as url:
        out = dream_json(repo, "--agent", py_agent("mcp_attack.py", url), code=0)
        said = agent_lines(out)
        assert "REFUSED [Errno 13]" in said and "ANSWER" not in said, said
        assert out["network"] == "TCP connections to port(s) 443 only"
        assert "a dream reached past its merge" not in git("log", "--format=%s", cwd=repo).stdout
        # The same agent with the port allowed reaches it: the refusal above was the sandbox's.
        git("config", "dream.sandbox.allowPort", str(port_of(url)), cwd=repo)
        out = dream_json(repo, "--agent", py_agent("mcp_attack.py", url), code=0)
        assert "CONNECTED" in agent_lines(out), agent_lines(out)
        assert "a dream reached past its merge" in git("log", "--format=%s", cwd=repo).stdout


@pytest.fixture
def http_on_loopback() -> Iterator[int]:
    class Hello(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # the stdlib's name for it
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"hello\n")

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def test_loopback_http_service_refused_then_reached_with_allow_port(repo: Path, http_on_loopback: int) -> None:
    port = str(http_on_loopback)
    out = dream_json(repo, "--agent", py_agent("connect.py", "127.0.0.1", port), code=0)
    assert "REFUSED EACCES" in agent_lines(out), agent_lines(out)
    git("config", "--add", "dream.sandbox.allowPort", "443", cwd=repo)
    git("config", "--add", "dream.sandbox.allowPort", port, cwd=repo)
    out = dream_json(repo, "--agent", py_agent("connect.py", "127.0.0.1", port), code=0)
    assert "CONNECTED HTTP/1.0 200 OK" in agent_lines(out), agent_lines(out)
    assert out["network"] == f"TCP connections to port(s) {', '.join(sorted(['443', port], key=int))} only"


def test_where_landlock_has_no_tcp_rules_the_dream_says_so(repo: Path, http_on_loopback: int) -> None:
    cmd = py_agent("connect.py", "127.0.0.1", str(http_on_loopback))
    out = dream_json(repo, "--agent", cmd, env={"GIT_DREAM_LANDLOCK_ABI": "3"}, code=0)
    assert out["network"].startswith("not confined: Landlock ABI 3 has no TCP rules")
    assert "CONNECTED" in agent_lines(out)  # what it says is what happens
    text = dream(repo, "--agent", "true", env={"GIT_DREAM_LANDLOCK_ABI": "3"})
    assert "git dream: network: not confined: Landlock ABI 3 has no TCP rules" in text.stderr
    git("config", "dream.sandbox.allowPort", "80x", cwd=repo)
    bad = dream(repo, "--agent", "true")
    assert bad.returncode == 2 and "invalid dream.sandbox.allowPort '80x'" in bad.stderr


# -- item 2: the person's ssh-agent -----------------------------------------------------------------

@pytest.fixture
def ssh_agent(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A real ssh-agent holding a passphrase-protected key: (socket, public key)."""
    if not (shutil.which("ssh-agent") and shutil.which("ssh-add") and shutil.which("ssh-keygen")):
        pytest.skip("needs OpenSSH's ssh-agent, ssh-add and ssh-keygen")
    keys = tmp_path / "keys"
    keys.mkdir()
    key = keys / "id"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "a passphrase", "-C", "person", "-f", str(key)],
                   check=True)
    askpass = keys / "askpass"
    askpass.write_text("#!/bin/sh\necho 'a passphrase'\n")
    askpass.chmod(0o700)
    sock = str(tmp_path / "agent.sock")
    started = subprocess.run(["ssh-agent", "-s", "-a", sock], capture_output=True, text=True, check=True)
    pid = int(started.stdout.split("SSH_AGENT_PID=")[1].split(";")[0])
    try:
        env = {**os.environ, "SSH_AUTH_SOCK": sock, "SSH_ASKPASS": str(askpass), "SSH_ASKPASS_REQUIRE": "force",
               "DISPLAY": ":0"}
        subprocess.run(["ssh-add", str(key)], env=env, stdin=subprocess.DEVNULL, capture_output=True, check=True)
        yield sock, key.with_suffix(".pub")
    finally:
        os.kill(pid, 15)


def _sign_outside(sock: str, pub: Path, tmp_path: Path) -> bool:
    data = tmp_path / "outside.txt"
    data.write_text("x\n")
    res = subprocess.run(["ssh-keygen", "-Y", "sign", "-f", str(pub), "-n", "git", str(data)],
                         env={**os.environ, "SSH_AUTH_SOCK": sock}, capture_output=True, stdin=subprocess.DEVNULL)
    return res.returncode == 0 and (tmp_path / "outside.txt.sig").exists()


@needs_pidns
def test_agent_cannot_sign_with_the_persons_ssh_agent(repo: Path, tmp_path: Path,
                                                      ssh_agent: tuple[str, Path]) -> None:
    sock, pub = ssh_agent
    assert _sign_outside(sock, pub, tmp_path), "the agent holds the key: outside the dream it signs"
    where = tmp_path / "sock-path"
    where.write_text(sock)
    out = dream_json(repo, "--agent", agent("ssh_sign.sh", str(where), str(pub)),
                     env={"SSH_AUTH_SOCK": sock}, code=0)
    said = agent_lines(out)
    assert "SSH_AUTH_SOCK=\n" in said + "\n", said
    assert "NOT_SIGNED via path" in said and "SIGNED via" not in said.replace("NOT_SIGNED via", ""), said
    assert "COMMIT_NOT_SIGNED" in said, said
    assert out["status"] == "no_changes", out
    # The socket is still the person's after the dream: only the agent's view was covered.
    assert _sign_outside(sock, pub, tmp_path)


# -- the environment by allow-list --------------------------------------------------------------------

WITHHELD = {"GIT_MEMORY_MCP_TOKEN": TOKEN, "SSH_AUTH_SOCK": "/tmp/ssh-x/agent.1",
            "GPG_AGENT_INFO": "/run/user/1/gnupg/S.gpg-agent:0:1", "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/bus",
            "XDG_RUNTIME_DIR": "/run/user/1", "AWS_SECRET_ACCESS_KEY": "aws-secret-1234567890",
            "GIT_MEMORY_APPROVE": "1", "GIT_MEMORY_TOKEN": "tok-123456789", "MY_SETTING": "mine"}
ALLOWED = {"ANTHROPIC_API_KEY": "sk-ant-api03-abcdefabcdefabcdef", "OPENAI_BASE_URL": "https://llm.example/v1",
           "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"}


def test_the_agent_gets_only_the_allow_listed_environment(repo: Path) -> None:
    out = dream_json(repo, "--agent", "env", env={**WITHHELD, **ALLOWED}, code=0)
    seen = dict(line.split("=", 1) for line in agent_lines(out).splitlines() if "=" in line)
    assert not set(WITHHELD) & set(seen), set(WITHHELD) & set(seen)
    for name in ALLOWED:
        assert name in seen, name
    assert {"PATH", "HOME", "MEMORY_DIR", "DREAM_ID", "DREAM_PROMPT_FILE", "TMPDIR"} <= set(seen)
    git("config", "--add", "dream.passEnv", "MY_SETTING", cwd=repo)
    out = dream_json(repo, "--agent", "env", env={**WITHHELD, **ALLOWED}, code=0)
    assert "MY_SETTING=mine" in agent_lines(out)


# -- "wrong answers": whose commits are these? -----------------------------------------------------------

def test_the_agents_own_commits_are_not_labelled_as_the_person(repo: Path) -> None:
    cmd = ('git memory create notes/a.md "From a tool." -d "made with git memory" -m "Agent note by tool" && '
           "printf -- '---\\ndescription: made with git\\n---\\nplain\\n' > notes/b.md && git add notes/b.md && "
           'git commit -q -m "Agent note by plain git"')
    out = dream_json(repo, "--agent", cmd, code=0)
    assert out["status"] == "merged", out
    entries = json.loads(memory("log", "--json", cwd=repo).stdout)["commits"]
    own = {e["reason"]: e for e in entries if e["reason"].startswith("Agent note")}
    assert set(own) == {"Agent note by tool", "Agent note by plain git"}
    for entry in own.values():
        assert entry["kind"] != "human", entry
        assert entry["email"] == "dream@agents.invalid"
    text = memory("log", cwd=repo).stdout
    assert "human:" not in "\n".join(ln for ln in text.splitlines() if "Agent note" in ln), text


@needs_pidns
def test_unix_sockets_of_the_person_are_out_of_reach(repo: Path, tmp_path: Path) -> None:
    """A session bus or gpg-agent socket by path, and an abstract socket (Landlock ABI 6)."""
    import socket

    from gitmemfs.dream import sandbox

    path = str(tmp_path / "S.gpg-agent")
    named = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    named.bind(path)
    named.listen(4)
    abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    abstract.bind(f"\0dream-test-{os.getpid()}")
    abstract.listen(4)
    try:
        cmd = py_agent("unix_connect.py", path, f"@dream-test-{os.getpid()}")
        said = agent_lines(dream_json(repo, "--agent", cmd, code=0))
        assert f"REFUSED {path} ECONNREFUSED" in said, said
        if sandbox.probe_abi()[0] >= 6:
            assert f"REFUSED @dream-test-{os.getpid()} EPERM" in said, said
        unconfined = agent_lines(dream_json(repo, "--agent", cmd, "--no-sandbox", code=0))
        assert f"CONNECTED {path}" in unconfined and "CONNECTED @dream-test" in unconfined, unconfined
    finally:
        named.close()
        abstract.close()


@needs_mcp
@needs_pidns
def test_a_dream_fired_by_an_mcp_commit_cannot_use_the_servers_token(tmp_path: Path) -> None:
    """Item 1 as it happens: a client's commit through `mcp --http --root` (token set) fires
    alice's post-commit dream trigger with the server's environment; the dream's agent
    goes for bob's memory with whatever token it can find."""
    root = tmp_path / "agents"
    for name in ("alice", "bob"):
        assert memory("init", str(root / name / "memory"), "--agent-id", name, cwd=tmp_path).returncode == 0
    alice, bob = root / "alice" / "memory", root / "bob" / "memory"
    bob_head = head(bob)
    with mcp_http(tmp_path, "--root", str(root), env={"GIT_MEMORY_MCP_TOKEN": TOKEN}) as url:
        for key, value in (("dream.trigger", "commits"), ("dream.every", "1"),
                           ("dream.agent", py_agent("mcp_attack.py", url, "bob")),
                           ("dream.sandbox.allowPort", str(port_of(url)))):
            git("config", key, value, cwd=alice)
        client = subprocess.run([sys.executable, str(AGENTS / "mcp_attack.py"), url, "alice"],
                                env={**os.environ, "GIT_MEMORY_MCP_TOKEN": TOKEN},
                                capture_output=True, text=True, timeout=120)
        assert "Memory create committed" in client.stdout, client.stdout + client.stderr
        dirs = state.Dirs(str(alice / ".git"))

        def finished() -> list[dict]:
            found = [state.load_record(dirs, i) or {} for i in state.record_ids(dirs)]
            return [r for r in found if r.get("status") not in (None, "running")]

        wait_for(lambda: bool(finished()), timeout=120, what="the dream the MCP commit fired")
    said = Path(finished()[0]["log"]).read_text()
    assert "NO_TOKEN" in said and "CONNECTED but HTTP 401" in said, said
    assert head(bob) == bob_head, git("log", "--oneline", cwd=bob).stdout
    assert TOKEN not in git("log", "--all", "-p", cwd=alice).stdout
