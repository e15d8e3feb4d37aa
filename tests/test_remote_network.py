"""The network layer in-process: which failures are retried, credentials, redaction."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from gitserver import TOKEN, GitServer, seed, server_fixture, token_env  # noqa: F401

from conftest import git, memory
from gitmemfs.core import gitnet, redact
from gitmemfs.core.errors import UsageError
from gitmemfs.core.git import GitError
from gitmemfs.remote import auth
from gitmemfs.remote.network import Network, RemoteError, classify


@pytest.fixture(autouse=True)
def clean_secrets():  # type: ignore[no-untyped-def]
    redact.forget_secrets()
    yield
    redact.forget_secrets()


def failure(stderr: str, *, timed_out: bool = False) -> GitError:
    return GitError(["git", "fetch"], -1 if timed_out else 128, stderr=stderr, timed_out=timed_out, timeout=1)


@pytest.mark.parametrize("stderr,kind", [
    ("fatal: unable to access 'http://h/r/': The requested URL returned error: 520", "transient"),
    ("fatal: unable to access 'http://h/r/': The requested URL returned error: 503", "transient"),
    ("error: RPC failed; HTTP 524 curl 22 The requested URL returned error: 524", "transient"),
    ("error: RPC failed; curl 52 Empty reply from server\nfatal: expected flush after ref listing", "transient"),
    ("send-pack: unexpected disconnect\nfatal: the remote end hung up unexpectedly", "transient"),
    ("fatal: unable to access 'http://h/r/': Failed to connect to h port 443 after 130 ms: "
     "Connection timed out", "transient"),
    ("error: RPC failed; HTTP 413 curl 22 The requested URL returned error: 413", "other"),
    ("fatal: could not read Username for 'http://h': terminal prompts disabled", "auth"),
    ("fatal: Authentication failed for 'https://h/r/'", "auth"),
    ("fatal: unable to access 'http://h/r/': The requested URL returned error: 403", "forbidden"),
    ("fatal: repository 'http://h/r/' not found", "not_found"),
    ("fatal: unable to access 'http://x.invalid/r/': Could not resolve host: x.invalid", "host"),
    ("fatal: unable to access 'http://h:9/r/': Failed to connect to h port 9: Couldn't connect to server",
     "connect"),
    ("fatal: unable to find remote helper for 'htps'", "bad_url"),
    ("error: failed to push some refs to 'http://h/r'", "other"),
])
def test_classify(stderr: str, kind: str) -> None:
    assert classify(failure(stderr)).kind == kind


def test_a_timed_out_call_is_transient() -> None:
    assert classify(failure("", timed_out=True)).kind == "transient"


def test_a_timed_out_call_is_retried(server: GitServer, tmp_path: Path) -> None:
    seed(server, tmp_path)
    server.delay_next(1, 5.0)
    naps: list[float] = []
    net = Network(server.url(), auth.Auth(TOKEN), sleep=naps.append)
    res = net.run(["ls-remote", server.url()], cwd=str(tmp_path), label="test", timeout=1.0)
    assert "refs/heads/main" in res.out and net.retries == 1 and naps == [0.5]


def test_backoff_doubles_and_stops_after_three_tries(server: GitServer, tmp_path: Path) -> None:
    seed(server, tmp_path)
    server.fail_next(3, 503)
    naps: list[float] = []
    notes: list[str] = []
    net = Network(server.url(), auth.Auth(TOKEN), sleep=naps.append, notify=notes.append)
    with pytest.raises(RemoteError) as info:
        net.run(["ls-remote", server.url()], cwd=str(tmp_path), label="probe")
    assert naps == [0.5, 1.0] and len(notes) == 2 and "try 1/3" in notes[0]
    assert info.value.tries == 3 and "kept failing after 3 tries" in info.value.message


def test_errors_never_show_the_token_even_in_a_url(server: GitServer, tmp_path: Path) -> None:
    seed(server, tmp_path)
    url = f"http://letta:{TOKEN}@127.0.0.1:{server.port}/missing.git"
    net = Network(url, auth.Auth("sk-let-WRONGwrong0123456789"))
    with pytest.raises(RemoteError) as info:
        net.run(["ls-remote", url], cwd=str(tmp_path), label="probe")
    text = info.value.message + repr(info.value.details)
    assert TOKEN not in text and "WRONGwrong" not in text and "refused the credentials" in text


def test_token_sources(monkeypatch: pytest.MonkeyPatch) -> None:
    env = {"GIT_MEMORY_TOKEN": "generic-token-1", "LETTA_API_KEY": "sk-let-lettakey0123"}
    assert auth.for_remote("https://github.com/o/m.git", env=env).source == "$GIT_MEMORY_TOKEN"
    assert auth.for_remote("https://api.letta.com/v1/git/a1/state.git", env=env).source == "$LETTA_API_KEY"
    only_letta = {"LETTA_API_KEY": "sk-let-lettakey0123"}
    assert auth.for_remote("https://github.com/o/m.git", env=only_letta).token is None   # never sent elsewhere
    assert auth.for_remote("https://github.com/o/m.git", env={}).config() == []
    creds = auth.for_remote("https://h/m.git", "bearer", env=env)
    assert creds.config() == [("credential.helper", ""), ("http.extraHeader", ""),
                              ("http.extraHeader", "Authorization: Bearer generic-token-1")]
    assert "generic-token-1" not in redact.redact("the token generic-token-1 leaked")


@pytest.mark.parametrize("url,base,letta", [
    ("https://api.letta.com/v1/git/a1/state.git", None, True),
    ("https://API.letta.com:443/v1/git/a1/state.git/", None, True),
    ("https://evil.example/v1/git/a1/state.git", None, False),       # a Letta-looking path elsewhere
    ("http://api.letta.com/v1/git/a1/state.git", None, False),        # another scheme
    ("https://api.letta.com:8443/v1/git/a1/state.git", None, False),  # another port
    ("https://api.letta.com/x/v1/git/a1/state.git", None, False),
    ("http://127.0.0.1:8283/v1/git/a1/state.git", "http://127.0.0.1:8283", True),
    ("https://api.letta.com/v1/git/a1/state.git", "http://127.0.0.1:8283", False),
    ("https://h.example/letta/v1/git/a1/state.git", "https://h.example/letta/", True),
    ("https://h.example/v1/git/a1/state.git", "https://h.example/letta", False),
])
def test_the_letta_key_goes_only_to_the_letta_server(url: str, base: str | None, letta: bool) -> None:
    env = {"LETTA_API_KEY": "sk-let-lettakey0123"}
    if base:
        env["LETTA_MEMFS_BASE_URL"] = base
    assert auth.is_letta_url(url, env) is letta
    assert (auth.for_remote(url, env=env).token is not None) is letta


def test_letta_url_and_url_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    assert auth.letta_url("agent-1", {}) == "https://api.letta.com/v1/git/agent-1/state.git"
    assert auth.letta_url("agent-1", {"LETTA_MEMFS_BASE_URL": " http://h:8283// "}) == \
        "http://h:8283/v1/git/agent-1/state.git"
    for bad in ("", "a/b", "../x", "a b"):
        with pytest.raises(UsageError):
            auth.letta_url(bad, {})
    for bad in ("", "--upload-pack=evil", "http://h/\nx", "https://u:p@h/r.git"):
        with pytest.raises(UsageError):
            auth.check_url(bad)
    assert auth.check_url(" https://u@h/r.git ") == "https://u@h/r.git"


def test_inherited_headers_cannot_compete_with_the_token(server: GitServer, tmp_path: Path,
                                                        hermetic: Path) -> None:
    seed(server, tmp_path)
    git("config", "--global", "http.extraHeader", "Authorization: Bearer stale-old-token", cwd=tmp_path)
    proc = memory("clone", server.url(), "c", cwd=tmp_path, env=token_env())
    assert proc.returncode == 0, proc.stderr
    assert all(r.authorized for r in server.requests)


def fake_ssh(folder: Path, name: str) -> Path:
    """An ssh stand-in that records how it was called, then fails like a refused login."""
    script = folder / name
    script.write_text(f"#!/bin/sh\necho \"$0 $*\" >> '{folder}/ssh.log'\necho 'Permission denied (publickey).' >&2\n"
                      "exit 255\n")
    script.chmod(0o755)
    return script


def test_the_users_ssh_command_is_honoured(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake_ssh(bin_dir, "ssh")
    mine = fake_ssh(bin_dir, "my-ssh")
    log = bin_dir / "ssh.log"
    url = "ssh://git@127.0.0.1/memory.git"
    path = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}

    def clone(env: dict[str, str]) -> str:
        log.unlink(missing_ok=True)
        proc = memory("clone", url, "c", cwd=tmp_path, env={**path, **env})
        assert proc.returncode == 1 and "refused the credentials" in proc.stderr, proc.stderr
        return log.read_text()

    # Nothing chosen: plain ssh, in batch mode (it must never prompt).
    assert "-o BatchMode=yes" in clone({}) and f"{bin_dir}/ssh " in log.read_text()
    # core.sshCommand (global here; a clone has no repository config yet), GIT_SSH and
    # GIT_SSH_COMMAND are the user's choice and left alone.
    git("config", "--global", "core.sshCommand", f"{mine} -F /dev/null", cwd=tmp_path)
    assert clone({}).startswith(f"{mine} -F /dev/null")
    git("config", "--global", "--unset", "core.sshCommand", cwd=tmp_path)
    assert clone({"GIT_SSH": str(mine)}).startswith(str(mine))
    assert clone({"GIT_SSH_COMMAND": f"{mine} -4"}).startswith(f"{mine} -4")


def helpers_for(url: str) -> list[int]:
    """Live processes whose command line names `url` (git-remote-http gets it as argv)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                cmdline = fh.read()
            with open(f"/proc/{pid}/stat", "rb") as fh:
                state = fh.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if url.encode() in cmdline and state != b"Z":
            found.append(int(pid))
    return found


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")
def test_a_timed_out_call_leaves_no_helper_behind(server: GitServer, tmp_path: Path) -> None:
    # A server that accepts and never answers (within the test): git times out, and
    # git-remote-http, which it started in the same session, must go with it.
    seed(server, tmp_path)
    server.delay = 120.0
    url = server.url()
    with pytest.raises(GitError) as info:
        gitnet.run(["clone", "-q", url, str(tmp_path / "clone")], cwd=tmp_path, timeout=2)
    assert info.value.timed_out
    deadline = time.monotonic() + 10
    while helpers_for(url) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert helpers_for(url) == [], "a transport helper outlived the timed-out call"


# -- waiting on a server: a heartbeat, or a live line on a terminal ------------------------------

def test_a_slow_call_sends_a_heartbeat_through_notify() -> None:
    import threading

    from gitmemfs.remote.waiting import Waiting
    seen: list[str] = []
    beat = threading.Event()

    def notify(message: str) -> None:
        seen.append(message)
        beat.set()

    with Waiting("sync: fetch", notify, every=0.05):
        assert beat.wait(60), "no heartbeat"  # the call 'hangs' until one arrives
    assert seen[0].startswith("sync: fetch: still waiting for the server (")


def test_on_a_terminal_the_wait_is_a_live_line() -> None:
    import io

    from gitmemfs.remote.waiting import Waiting

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Tty()
    notify = lambda message: None
    notify.live = True  # type: ignore[attr-defined]
    waiting = Waiting("clone", notify, every=0.05, stream=stream)
    with waiting:
        while "waiting for the server" not in stream.getvalue():
            waiting._stop.wait(0.01)
    assert "\r\x1b[Kclone: waiting for the server, " in stream.getvalue()
    assert stream.getvalue().endswith("\r\x1b[K")  # the line is cleared when the call returns
