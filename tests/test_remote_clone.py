"""`git memory clone` against a real smart-HTTP server: auth, secrets, retries, cleanup."""
from __future__ import annotations

import base64
import json
import os
import pty
import select
import subprocess
import time
from pathlib import Path

from gitserver import TOKEN, GitServer, seed, server_fixture, token_env  # noqa: F401

from conftest import git, memory, snapshot, write

BASIC = base64.b64encode(f"letta:{TOKEN}".encode()).decode()
SECRETS = (TOKEN, BASIC, TOKEN[8:])


def assert_no_secret(*texts: str | bytes) -> None:
    for text in texts:
        data = text.encode() if isinstance(text, str) else text
        for secret in SECRETS:
            assert secret.encode() not in data, f"secret leaked in: {data[:300]!r}"


def files_under(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()]


def cmdlines(root: int) -> list[bytes]:
    """The command lines of `root` and its descendants. Only those: other tests on the
    other xdist workers put tokens in URLs on purpose (to test redaction)."""
    parents: dict[int, int] = {}
    lines: dict[int, bytes] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as fh:
                    parents[int(entry.name)] = int(fh.read().rsplit(b")", 1)[1].split()[1])
                with open(f"/proc/{entry.name}/cmdline", "rb") as fh:
                    lines[int(entry.name)] = fh.read()
            except (OSError, ValueError, IndexError):
                pass

    def under_root(pid: int) -> bool:
        for _ in range(64):
            if pid == root:
                return True
            if pid not in parents or pid <= 1:
                return False
            pid = parents[pid]
        return False

    return [line for pid, line in lines.items() if under_root(pid)]


def test_clone_with_token_keeps_it_out_of_argv_config_and_output(server: GitServer, tmp_path: Path) -> None:
    seed(server, tmp_path)
    server.delay = 0.3   # slow enough to watch every git process while it runs
    dest = tmp_path / "clone"
    proc = subprocess.Popen(["git", "memory", "--json", "clone", server.url(), str(dest)], cwd=tmp_path,
                            env={**os.environ, **token_env()}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    seen: set[bytes] = set()
    while proc.poll() is None:
        seen.update(c for c in cmdlines(proc.pid) if b"git" in c)
        time.sleep(0.005)
    out, err = proc.communicate()
    assert proc.returncode == 0, err
    # The sampling really watched the clone: git's clone and its HTTP helper were seen.
    assert any(b"clone" in c and server.url().encode() in c for c in seen), seen
    assert any(b"remote-http" in c for c in seen), seen
    for line in seen:
        assert_no_secret(line)
        assert b"Authorization" not in line and b"extraHeader" not in line
    assert_no_secret(out, err)
    for path in files_under(dest / ".git"):
        assert_no_secret(path.read_bytes())
    assert server.requests and all(r.authorized and r.scheme == "Basic" for r in server.requests)
    result = json.loads(out)
    assert result["ok"] and result["head"] == git("rev-parse", "HEAD", cwd=dest).stdout.strip()
    assert result["auth"] == {"token": True, "scheme": "basic", "source": "$GIT_MEMORY_TOKEN"}
    assert (dest / "system/persona.md").is_file()
    assert git("config", "memory.repo", cwd=dest).stdout.strip() == "true"
    assert git("rev-parse", "--abbrev-ref", "main@{upstream}", cwd=dest).stdout.strip() == "origin/main"


def test_wrong_token_fails_fast_without_retrying_and_redacted(server: GitServer, tmp_path: Path) -> None:
    seed(server, tmp_path)
    wrong = "sk-let-WRONGwrongWRONG0123456789"
    proc = memory("clone", server.url(), "c", cwd=tmp_path, env=token_env(wrong))
    assert proc.returncode == 1
    assert "refused the credentials" in proc.stderr and "$GIT_MEMORY_TOKEN" in proc.stderr
    assert "retrying" not in proc.stderr
    assert wrong not in proc.stderr + proc.stdout and "WRONGwrong" not in proc.stderr
    assert server.count("info/refs") == 1            # one try: a permanent failure
    assert not (tmp_path / "c").exists()


def test_two_injected_520s_are_survived(server: GitServer, tmp_path: Path) -> None:
    seed(server, tmp_path)
    server.fail_next(2, 520)
    proc = memory("--json", "clone", server.url(), "c", cwd=tmp_path, env=token_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["retries"] == 2
    assert_no_secret(proc.stdout, proc.stderr)
    assert proc.stderr.count("transient failure") == 2 and "error: 520" in proc.stderr
    assert [r.status for r in server.requests[:3]] == [520, 520, 200]
    assert (tmp_path / "c/system/persona.md").is_file()


def test_a_dropped_connection_mid_clone_is_retried(server: GitServer, tmp_path: Path) -> None:
    seed(server, tmp_path)
    server.fail_next(1, None, match="git-upload-pack")   # the POST: git says "RPC failed"
    proc = memory("--json", "clone", server.url(), "c", cwd=tmp_path, env=token_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["retries"] == 1 and "RPC failed" in proc.stderr


def test_persistent_failures_give_up_after_three_tries_and_clean_up(server: GitServer, tmp_path: Path) -> None:
    seed(server, tmp_path)
    server.fail_next(5, 502)
    proc = memory("--json", "clone", server.url(), "a/b/c", cwd=tmp_path, env=token_env())
    assert proc.returncode == 1
    result = json.loads(proc.stdout)
    assert "kept failing after 3 tries" in result["error"] and result["error_kind"] == "transient"
    assert result["tries"] == 3 and server.count("info/refs") == 3
    assert not (tmp_path / "a").exists()     # the folders it made are gone too


def test_bearer_scheme(server: GitServer, tmp_path: Path) -> None:
    seed(server, tmp_path)
    proc = memory("clone", "--auth-scheme", "bearer", server.url(), "c", cwd=tmp_path, env=token_env())
    assert proc.returncode == 0, proc.stderr
    assert {r.scheme for r in server.requests} == {"Bearer"}
    assert git("config", "memory.authScheme", cwd=tmp_path / "c").stdout.strip() == "bearer"


def test_scheme_from_global_config(server: GitServer, tmp_path: Path, hermetic: Path) -> None:
    seed(server, tmp_path)
    git("config", "--global", "memory.authScheme", "bearer", cwd=tmp_path)
    assert memory("clone", server.url(), "c", cwd=tmp_path, env=token_env()).returncode == 0
    assert {r.scheme for r in server.requests} == {"Bearer"}
    git("config", "--global", "memory.authScheme", "digest", cwd=tmp_path)
    proc = memory("clone", server.url(), "d", cwd=tmp_path, env=token_env())
    assert proc.returncode == 2 and "use basic or bearer" in proc.stderr


def _helper_config(home: Path, tmp_path: Path) -> Path:
    """A credential helper in the user's global config that answers with the token
    and leaves a mark when git asks it."""
    marker = tmp_path / "helper-was-asked"
    with open(home / ".gitconfig", "a") as fh:
        fh.write(f"[credential]\n\thelper = \"!f() {{ touch '{marker}'; echo username=letta; "
                 f"echo password={TOKEN}; }}; f\"\n")
    return marker


def test_without_a_token_the_users_credential_helper_answers(server: GitServer, tmp_path: Path,
                                                            hermetic: Path) -> None:
    seed(server, tmp_path)
    marker = _helper_config(hermetic, tmp_path)
    proc = memory("clone", server.url(), "c", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert marker.exists()
    assert_no_secret(proc.stdout, proc.stderr)


def test_with_a_token_credential_helpers_are_not_consulted(server: GitServer, tmp_path: Path,
                                                          hermetic: Path) -> None:
    seed(server, tmp_path)
    marker = _helper_config(hermetic, tmp_path)
    proc = memory("clone", server.url(), "c", cwd=tmp_path, env=token_env("sk-let-WRONGwrong0123456789"))
    assert proc.returncode == 1 and "refused the credentials" in proc.stderr
    assert not marker.exists()


def test_without_credentials_it_never_prompts_even_on_a_terminal(server: GitServer, tmp_path: Path) -> None:
    seed(server, tmp_path)
    pid, fd = pty.fork()
    if pid == 0:  # the child: a session whose controlling terminal is the pty
        try:
            os.chdir(tmp_path)
            os.execvp("git", ["git", "memory", "clone", server.url(), "c"])
        finally:
            os._exit(127)
    output = b""
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(fd, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                output += chunk
        else:
            os.kill(pid, 9)
            raise AssertionError(f"git memory clone blocked (a prompt?): {output!r}")
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    assert os.WEXITSTATUS(status) == 1, output
    assert b"no token was given" in output and b"Username" not in output and b"Password" not in output


def test_refuses_a_non_empty_directory(server: GitServer, tmp_path: Path) -> None:
    seed(server, tmp_path)
    dest = tmp_path / "busy"
    write(dest, "keep.txt", "mine\n")
    proc = memory("clone", server.url(), str(dest), cwd=tmp_path, env=token_env())
    assert proc.returncode == 1 and "already exists and is not empty" in proc.stderr
    assert (dest / "keep.txt").read_text() == "mine\n" and sorted(os.listdir(dest)) == ["keep.txt"]
    assert server.requests == []


def test_an_empty_directory_is_used_and_kept_on_failure(server: GitServer, tmp_path: Path) -> None:
    seed(server, tmp_path)
    dest = tmp_path / "empty"
    dest.mkdir()
    proc = memory("clone", server.url("missing.git"), str(dest), cwd=tmp_path, env=token_env())
    assert proc.returncode == 1 and "no repository at" in proc.stderr and "check the URL" in proc.stderr
    assert dest.is_dir() and os.listdir(dest) == []
    assert memory("clone", server.url(), str(dest), cwd=tmp_path, env=token_env()).returncode == 0
    assert (dest / "system/persona.md").is_file()


def test_default_directory_is_named_after_the_url(server: GitServer, tmp_path: Path) -> None:
    seed(server, tmp_path, "team/agent-memory.git")
    proc = memory("clone", server.url("team/agent-memory.git"), cwd=tmp_path, env=token_env())
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "agent-memory/system/persona.md").is_file()


def test_letta_agent(server: GitServer, tmp_path: Path) -> None:
    seed(server, tmp_path, "v1/git/agent-42/state.git")
    env = {"LETTA_MEMFS_BASE_URL": f"http://127.0.0.1:{server.port}/", "LETTA_API_KEY": TOKEN,
           "LETTA_HOME": str(tmp_path / "letta"),
           # a token meant for another host must not be sent to the Letta server
           "GIT_MEMORY_TOKEN": "ghp_notforlettaNOTFORLETTA0123"}
    proc = memory("--json", "clone", "--letta-agent", "agent-42", cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(proc.stdout)
    dest = tmp_path / "letta/agents/agent-42/memory"
    assert result["path"] == str(dest) and result["auth"]["source"] == "$LETTA_API_KEY"
    assert result["url"] == f"http://127.0.0.1:{server.port}/v1/git/agent-42/state.git"
    assert git("config", "memory.agentId", cwd=dest).stdout.strip() == "agent-42"
    other = memory("clone", "--letta-agent", "agent-42", str(tmp_path / "elsewhere"), cwd=tmp_path, env=env)
    assert other.returncode == 0 and (tmp_path / "elsewhere/system/persona.md").is_file()
    bad = memory("clone", "--letta-agent", "../etc", cwd=tmp_path, env=env)
    assert bad.returncode == 2 and "is not an agent id" in bad.stderr


def test_the_letta_key_is_not_sent_to_another_host(server: GitServer, tmp_path: Path) -> None:
    # A Letta-looking path on a host that is not $LETTA_MEMFS_BASE_URL's: no key for it.
    seed(server, tmp_path, "v1/git/agent-42/state.git")
    url = server.url("v1/git/agent-42/state.git")
    proc = memory("clone", url, "c", cwd=tmp_path, env={"LETTA_API_KEY": TOKEN})
    assert proc.returncode == 1 and "refused the credentials" in proc.stderr
    assert server.requests and not any(r.scheme for r in server.requests)
    proc = memory("clone", url, "c", cwd=tmp_path,
                  env={"LETTA_API_KEY": TOKEN, "LETTA_MEMFS_BASE_URL": f"http://127.0.0.1:{server.port}"})
    assert proc.returncode == 0, proc.stderr


def test_a_url_with_a_password_is_refused(tmp_path: Path) -> None:
    proc = memory("clone", "https://me:hunter2secret@example.com/m.git", "c", cwd=tmp_path)
    assert proc.returncode == 2 and "carries a password" in proc.stderr and "GIT_MEMORY_TOKEN" in proc.stderr
    assert "hunter2secret" not in proc.stderr and not (tmp_path / "c").exists()


def test_usage_errors(tmp_path: Path) -> None:
    proc = memory("clone", cwd=tmp_path)
    assert proc.returncode == 2 and "give a URL or --letta-agent" in proc.stderr
    proc = memory("clone", "--letta-agent", "a1", "http://x/y.git", "d", cwd=tmp_path)
    assert proc.returncode == 2 and "not both" in proc.stderr


def test_unknown_host_fails_at_once(tmp_path: Path) -> None:
    proc = memory("clone", "http://no-such-host.invalid/m.git", "c", cwd=tmp_path, env=token_env())
    assert proc.returncode == 1, proc.stderr
    assert "unknown host" in proc.stderr and "retrying" not in proc.stderr
    assert_no_secret(proc.stderr)


def test_an_empty_remote_clones_onto_main_and_sync_publishes(server: GitServer, tmp_path: Path) -> None:
    dest = tmp_path / "c"
    proc = memory("clone", server.url(), str(dest), cwd=tmp_path, env=token_env())
    assert proc.returncode == 0, proc.stderr
    assert "empty repository, branch main" in proc.stdout
    write(dest, "system/persona.md", "---\ndescription: Who I am\n---\nHello.\n")
    git("add", "-A", cwd=dest)
    git("commit", "-qm", "first memory", cwd=dest)
    before = snapshot(dest)
    proc = memory("--json", "sync", cwd=dest, env=token_env())
    assert proc.returncode == 0, proc.stdout
    assert json.loads(proc.stdout)["state"] == "pushed"
    assert git("rev-parse", "main", cwd=server.root / "memory.git").stdout.strip() == before[0]


def test_clone_layout_plain_is_recorded_before_the_first_commit(server: GitServer, tmp_path: Path) -> None:
    """A clone cannot read the remote's memory.layout; `--layout plain` records it, so the
    hooks judge plain files (a NUL byte is refused, a text file without frontmatter is not)."""
    dest = tmp_path / "c"
    proc = memory("--json", "clone", "--layout", "plain", server.url(), str(dest), cwd=tmp_path, env=token_env())
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["layout"] == "plain"
    assert git("config", "--get", "memory.layout", cwd=dest).stdout.strip() == "plain"
    write(dest, "notes.txt", "no frontmatter\n")
    git("add", "-A", cwd=dest)
    assert git("commit", "-qm", "plain note", cwd=dest, check=False).returncode == 0
    write(dest, "bad.txt", b"a\0b")
    git("add", "-A", cwd=dest)
    refused = git("commit", "-qm", "binary", cwd=dest, check=False)
    assert refused.returncode == 1 and "bad.txt: contains NUL bytes" in refused.stderr, refused.stderr


def dangling(server: GitServer, tmp_path: Path, *branches: str) -> Path:
    """A server as `git init --bare` (or gitolite) makes it: HEAD names `master`, and
    the memory was pushed to other branches."""
    work = seed(server, tmp_path)
    bare = server.root / "memory.git"
    git("symbolic-ref", "HEAD", "refs/heads/master", cwd=bare)
    for name in branches:
        git("push", "-q", str(bare), f"main:refs/heads/{name}", cwd=work)
    if "main" not in branches:
        git("update-ref", "-d", "refs/heads/main", cwd=bare)
    return bare


def test_a_server_head_naming_a_missing_branch_clones_main_and_sync_pushes_to_it(server: GitServer,
                                                                                 tmp_path: Path) -> None:
    bare = dangling(server, tmp_path, "main")
    dest = tmp_path / "c"
    proc = memory("clone", server.url(), str(dest), cwd=tmp_path, env=token_env())
    assert proc.returncode == 0, proc.stderr
    assert "(main at " in proc.stdout and "the server's HEAD names master, which does not exist" in proc.stdout
    assert "git symbolic-ref HEAD refs/heads/main" in proc.stdout
    assert git("rev-parse", "--abbrev-ref", "main@{upstream}", cwd=dest).stdout.strip() == "origin/main"
    assert git("config", "--get-regexp", "^branch\\.master\\.", cwd=dest, check=False).stdout == ""
    assert (dest / "system" / "persona.md").is_file() and git("status", "--porcelain", cwd=dest).stdout == ""
    made = memory("create", "notes/a.md", "alpha", "-d", "A", "-m", "a note", cwd=dest)
    assert made.returncode == 0, made.stderr
    synced = memory("--json", "sync", cwd=dest, env=token_env())
    assert json.loads(synced.stdout)["state"] == "pushed", synced.stdout
    assert git("for-each-ref", "--format=%(refname)", cwd=bare).stdout.split() == ["refs/heads/main"]
    assert git("rev-parse", "main", cwd=bare).stdout.strip() == git("rev-parse", "HEAD", cwd=dest).stdout.strip()


def test_the_only_branch_is_chosen_when_head_dangles(server: GitServer, tmp_path: Path) -> None:
    dangling(server, tmp_path, "trunk")
    dest = tmp_path / "c"
    proc = memory("--json", "clone", server.url(), str(dest), cwd=tmp_path, env=token_env())
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["branch"] == "trunk"
    assert git("rev-parse", "--abbrev-ref", "trunk@{upstream}", cwd=dest).stdout.strip() == "origin/trunk"


def test_several_branches_and_a_dangling_head_are_refused_naming_them(server: GitServer, tmp_path: Path) -> None:
    dangling(server, tmp_path, "agent-a", "agent-b")
    dest = tmp_path / "c"
    proc = memory("clone", server.url(), str(dest), cwd=tmp_path, env=token_env())
    assert proc.returncode == 1
    assert "HEAD names no branch that exists (master), and it has several: agent-a, agent-b" in proc.stderr
    assert "--branch NAME" in proc.stderr and not dest.exists()
    proc = memory("--json", "clone", "--branch", "agent-b", server.url(), str(dest), cwd=tmp_path, env=token_env())
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["branch"] == "agent-b"
    assert "the server's HEAD" not in json.loads(proc.stdout)["message"]


def test_branch_chooses_and_a_missing_one_is_refused(server: GitServer, tmp_path: Path) -> None:
    work = seed(server, tmp_path)
    git("push", "-q", str(server.root / "memory.git"), "main:refs/heads/other", cwd=work)
    dest = tmp_path / "c"
    proc = memory("clone", "--branch", "nope", server.url(), str(dest), cwd=tmp_path, env=token_env())
    assert proc.returncode == 1 and "has no branch nope (its branches: main, other)" in proc.stderr
    assert not dest.exists()
    proc = memory("clone", "--branch=a..b", server.url(), str(dest), cwd=tmp_path, env=token_env())
    assert proc.returncode == 2 and "is not a branch name" in proc.stderr
    proc = memory("clone", "--branch", "other", server.url(), str(dest), cwd=tmp_path, env=token_env())
    assert proc.returncode == 0 and "(other at " in proc.stdout, proc.stderr
    assert git("rev-parse", "--abbrev-ref", "HEAD@{upstream}", cwd=dest).stdout.strip() == "origin/other"
