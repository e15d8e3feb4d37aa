"""The git runner: conventions on every command line, secrets kept out, redaction."""
from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from gitmemfs.core import git, gitnet, redact
from gitmemfs.core.errors import EnvironmentProblem

TOKEN = "sk-let-FAKE0123456789abcdefTOKEN"
BASIC = base64.b64encode(f"letta:{TOKEN}".encode()).decode()


@pytest.fixture(autouse=True)
def clean_secrets():  # type: ignore[no-untyped-def]
    redact.forget_secrets()
    yield
    redact.forget_secrets()


def test_every_command_line_disables_signing() -> None:
    assert git.argv_for(["status"])[:4] == ["git", "-c", "commit.gpgsign=false", "status"]


def test_environment_is_non_interactive_and_carries_config_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "core.x")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "y")
    env = git.environment(config={"http.extraHeader": f"Authorization: Basic {BASIC}"})
    assert env["GIT_TERMINAL_PROMPT"] == "0" and env["GCM_INTERACTIVE"] == "never"
    assert env["GIT_ASKPASS"] == "" and env["SSH_ASKPASS"] == "" and env["GCM_GUI_PROMPT"] == "false"
    assert env["SSH_ASKPASS_REQUIRE"] == "never"
    assert env["GIT_CONFIG_COUNT"] == "2" and env["GIT_CONFIG_KEY_0"] == "core.x"
    assert env["GIT_CONFIG_KEY_1"] == "http.extraHeader"


def test_scrub_drops_the_callers_config_too(monkeypatch: pytest.MonkeyPatch) -> None:
    # An auth header handed to the triggering git command must not reach a push
    # started from its hook (the mirror).
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "http.extraHeader")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "Authorization: Bearer theirs")
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'http.extraheader'='X: y'")
    env = git.environment(scrub=True, config={"remote.m.url": "/x"})
    assert env["GIT_CONFIG_COUNT"] == "1" and env["GIT_CONFIG_KEY_0"] == "remote.m.url"
    assert "GIT_CONFIG_VALUE_1" not in env and "GIT_CONFIG_PARAMETERS" not in env
    assert "Bearer theirs" not in repr(env)


def test_ssh_runs_in_batch_mode_unless_the_user_chose_a_command(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    git.run(["init", "-q", str(tmp_path)], cwd=tmp_path)
    assert git.ssh_default(tmp_path) == {"GIT_SSH_COMMAND": "ssh -o BatchMode=yes"}
    assert "GIT_SSH_COMMAND" not in git.environment(), "only network calls get it, and not always"
    git.run(["config", "core.sshCommand", "my-ssh"], cwd=tmp_path)
    assert git.ssh_default(tmp_path) == {}
    assert git.ssh_default(tmp_path, repo_config=False) == {"GIT_SSH_COMMAND": "ssh -o BatchMode=yes"}
    git.run(["config", "--global", "core.sshCommand", "my-ssh"], cwd=tmp_path)
    assert git.ssh_default(tmp_path, repo_config=False) == {}
    git.run(["config", "--global", "--unset", "core.sshCommand"], cwd=tmp_path)
    for name in ("GIT_SSH", "GIT_SSH_COMMAND"):
        assert git.ssh_default(tmp_path, repo_config=False, base={name: "/usr/bin/my-ssh"}) == {}


def test_config_reaches_git_through_env(tmp_path: Path) -> None:
    res = git.run(["config", "--get", "memfs.probe"], cwd=tmp_path, config={"memfs.probe": "seen"})
    assert res.out.strip() == "seen"


@pytest.mark.parametrize("text,hidden", [
    (f"http.extraHeader=Authorization: Basic {BASIC}", BASIC),
    (f"Authorization: Bearer {TOKEN}", TOKEN),
    ("!f() { echo username=letta; echo password=hunter2secret; }; f", "hunter2secret"),
    (f"key {TOKEN} leaked", "FAKE0123456789abcdefTOKEN"),
    ("https://user:pa:ss@wo@rd@example.com/repo.git", "pa:ss@wo@rd"),
    ("https://ghp_abcdefghijklmnopqrstuvwx@github.com/o/r", "ghp_abcdefghijklmnopqrstuvwx"),
])
def test_redaction_patterns(text: str, hidden: str) -> None:
    assert hidden not in redact.redact(text)


@pytest.mark.parametrize("text", [
    "clone ssh://git@github.com/me/memory.git",
    "https://git.example.com:8443/me/memory.git and git@github.com:me/memory.git",
    "ssh://git@host:2222/path@x",
])
def test_a_url_without_a_password_is_left_alone(text: str) -> None:
    assert redact.redact(text) == text


def test_redaction_by_registered_value() -> None:
    redact.register_secret("plain-secret-value", basic_user="letta")
    encoded = base64.b64encode(b"letta:plain-secret-value").decode()
    out = redact.redact(f"echo plain-secret-value and {encoded}")
    assert "plain-secret-value" not in out and encoded not in out
    assert redact.redact_obj({"k": ["plain-secret-value"], "plain-secret-value": 1}) == {
        "k": ["<redacted>"], "<redacted>": 1}


def test_git_error_redacts_every_field() -> None:
    redact.register_secret(TOKEN, basic_user="letta")
    err = git.GitError(["git", "-c", f"http.extraHeader=Authorization: Basic {BASIC}", "fetch",
                        f"https://x:{TOKEN}@host/r"], 128, stdout=f"out {TOKEN}".encode(),
                       stderr=f"fatal: Authentication failed for https://x:{TOKEN}@host/r\npassword={TOKEN}")
    for value in [str(err), err.stdout, err.stderr, " ".join(err.argv), err.message]:
        assert TOKEN not in value and BASIC not in value, value
    assert "fetch" in str(err) and "exit 128" in str(err)


@pytest.mark.parametrize("runner", [git.run, gitnet.run], ids=["local", "network"])
def test_failed_network_command_never_shows_the_token(tmp_path: Path, runner) -> None:  # type: ignore[no-untyped-def]
    redact.register_secret(TOKEN, basic_user="letta")
    header = f"Authorization: Basic {BASIC}"
    with pytest.raises(git.GitError) as info:
        runner(["ls-remote", "http://127.0.0.1:9/none.git"], cwd=tmp_path, timeout=20,
               config={"http.extraHeader": header, "credential.helper": ""})
    err = info.value
    blob = " ".join([str(err), err.stdout, err.stderr, *err.argv, repr(err.__cause__), repr(err.__context__)])
    assert TOKEN not in blob and BASIC not in blob
    assert err.__cause__ is None and (err.__context__ is None or err.__suppress_context__)


@pytest.mark.parametrize("runner", [git.run, gitnet.run], ids=["local", "network"])
def test_timeout_becomes_git_error(tmp_path: Path, runner) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(git.GitError) as info:
        runner(["-c", "alias.nap=!sleep 5", "nap"], cwd=tmp_path, timeout=0.5)
    assert info.value.timed_out and "timed out after 0.5s" in str(info.value)


def test_network_runner_keeps_the_conventions_and_sh_to_itself(tmp_path: Path) -> None:
    """Through sh: the same command line, environment and input as the local runner;
    a git killed by a signal is a GitError (sh's exception, with its full_cmd, never
    escapes, nor does its logger say anything, even with every logger listening)."""
    import logging

    redact.register_secret(TOKEN, basic_user="letta")
    seen: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record)

    root = logging.getLogger()
    keep, level = Keep(logging.DEBUG), root.level
    root.addHandler(keep)
    root.setLevel(logging.DEBUG)
    try:
        res = gitnet.run(["-c", "alias.dump=!env; cat", "dump"], cwd=tmp_path, input=f"in {TOKEN}\n",
                         config={"http.extraHeader": f"Authorization: Basic {BASIC}"})
        assert "GIT_TERMINAL_PROMPT=0" in res.out and f"in {TOKEN}" in res.out
        assert "GIT_CONFIG_VALUE_0=Authorization: Basic" in res.out and res.argv[:3] == git.argv_for([])
        with pytest.raises(git.GitError) as info:
            gitnet.run(["-c", f"alias.die=!echo {TOKEN} >&2; kill -9 $PPID", "die"], cwd=tmp_path)
    finally:
        root.removeHandler(keep)
        root.setLevel(level)
    err = info.value
    assert type(err) is git.GitError and err.exit_code == -9
    assert err.__cause__ is None and err.__suppress_context__
    assert TOKEN not in " ".join([str(err), err.stdout, err.stderr, *err.argv])
    assert [r for r in seen if r.name.startswith("sh")] == []
    with pytest.raises(git.GitError, match="directory does not exist"):
        gitnet.run(["status"], cwd=tmp_path / "nowhere")


def test_missing_git_is_an_environment_problem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(EnvironmentProblem):
        git.run(["status"], cwd=tmp_path)


def test_blob_reader_reads_many_through_one_process(tmp_path: Path) -> None:
    git.run(["init", "-q", str(tmp_path)], cwd=tmp_path)
    oids = []
    for i in range(300):
        data = (f"blob {i}\n" * 500).encode()
        oids.append(git.run(["hash-object", "-w", "--stdin"], cwd=tmp_path, input=data).out.strip())
    with git.BlobReader(tmp_path) as reader:
        found = reader.read_many(oids + ["HEAD:absent.md"])
        assert all(found[oid] == (f"blob {i}\n" * 500).encode() for i, oid in enumerate(oids))
        assert found["HEAD:absent.md"] is None  # an absent path is no damage
        with pytest.raises(EnvironmentProblem, match="missing from the object store"):
            reader.read_many(["0" * 40])  # an object named by id that is not there is


def fake_git(folder: Path, body: str) -> None:
    script = folder / "git"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)


def test_blob_reader_refuses_a_short_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # An object whose content stops before its announced size is an error, not a
    # shorter file that the validator would judge as if it were whole.
    fake_git(tmp_path, 'read spec; printf "%s blob 100\\nonly this" "$spec"\n')
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    with git.BlobReader(tmp_path) as reader:
        with pytest.raises(git.GitError) as info:
            reader.read_many(["HEAD:system/rules.md"])
    assert "was cut short (9 of 100 bytes)" in str(info.value)


def test_blob_reader_gives_up_after_its_timeout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A lazy fetch in a partial clone (or any stuck git) must not hang a hook.
    fake_git(tmp_path, "read spec; exec sleep 30\n")
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    reader = git.BlobReader(tmp_path, timeout=0.3)
    with pytest.raises(git.GitError) as info:
        reader.read_many(["HEAD:a", "HEAD:b"])
    reader.close()
    assert info.value.timed_out and "cat-file timed out after 0.3s" in str(info.value)
    assert reader._proc.returncode != -1, "the stuck process was ended"


def test_yaml_is_not_imported_by_the_hot_path() -> None:
    import subprocess
    import sys

    code = ("import sys; sys.path.insert(0, %r); import gitmemfs.core.git as g, gitmemfs.core.rules, "
            "gitmemfs.core.memfile; g.run(['--version']); print('subprocess' in sys.modules, 'yaml' in sys.modules)")
    lib = str(Path(__file__).resolve().parent.parent / "lib")
    out = subprocess.run([sys.executable, "-c", code % lib], capture_output=True, text=True, env=os.environ)
    assert out.stdout.strip() == "False False", out.stderr


def test_a_missing_sh_is_an_environment_problem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An install without its `sh` (an old venv, a copied hook's python): exit 4 with the fix."""
    import sys

    monkeypatch.setattr(gitnet, "_SH", None)
    monkeypatch.setitem(sys.modules, "sh", None)  # `import sh` raises ImportError
    with pytest.raises(EnvironmentProblem, match="the sh package .* is not installed"):
        gitnet.run(["ls-remote", str(tmp_path)], cwd=tmp_path)
