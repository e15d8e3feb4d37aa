"""Issue 34, read confinement: a sandboxed dream agent reads only what its work needs.

Each test plants real files that are readable outside the sandbox, runs a scripted
agent (tests/agents/read_secrets.sh) through `git dream` that goes for them and commits
whatever it got, and checks it got nothing: not the person's keys and credential stores,
not the MCP tokens file, not another agent's memory (beside it, under an `mcp --root`, or
in Letta's `~/.letta/agents`), not the memory's own git dir beyond what its git needs.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from conftest import git, memory, write
from dreamkit import AGENTS, agent, common_dir, dream_json, landlock, log_of, tree_files

pytestmark = landlock

# Relative to HOME: what a person keeps there, each with a marker the agent must never see.
SECRETS = {".ssh/id_ed25519": "-----BEGIN OPENSSH PRIVATE KEY-----\nssh-secret-1f2e3d\n",
           ".aws/credentials": "[default]\naws_secret_access_key = aws-secret-9d8c7b\n",
           ".config/gh/hosts.yml": "github.com:\n    oauth_token: gho-secret-7b6a59\n",
           "mcp-tokens": "alice mcp-secret-5a4b3c\nbob mcp-secret-2e1f0a\n"}
MARKERS = ("ssh-secret", "aws-secret", "gho-secret", "mcp-secret", "BOB-SECRET", "review-secret")


def plant(home: Path) -> list[Path]:
    paths = []
    for rel, text in SECRETS.items():
        path = write(home, rel, text)
        path.chmod(0o600)
        assert path.read_text() == text  # readable outside the sandbox
        paths.append(path)
    return paths


def attack(repo: Path, targets: list[Path], git_dir: Path | None = None) -> tuple[dict, str]:
    """The scripted agent goes for `targets` (and, through git, `git_dir`'s notes/secret.md)."""
    cmd = agent("read_secrets.sh", *(["--git", str(git_dir)] if git_dir else []), *map(str, targets))
    out = dream_json(repo, "--agent", cmd, code=0)
    return out, log_of(out)


def assert_got_nothing(repo: Path, out: dict, said: str, targets: list[Path]) -> None:
    for target in targets:
        assert f"DENIED {target}\n" in said, said
    for marker in MARKERS:
        assert marker not in said, (marker, said)
        assert marker not in git("log", "--all", "-p", cwd=repo).stdout
    assert out["status"] == "merged", out
    files = tree_files(repo, "HEAD")
    assert f"notes/honest-{out['id']}.md" in files and "notes/stolen.md" not in files, files


def bob_beside(root: Path) -> Path:
    """Another agent's memory with a file of its own, made through the tool."""
    bob = root / "bob" / "memory"
    assert memory("init", str(bob), "--agent-id", "bob", cwd=root.parent).returncode == 0
    made = memory("create", "notes/secret.md", "BOB-SECRET-4d3c2b", "-d", "Bob's own", "-m", "Bob's note", cwd=bob)
    assert made.returncode == 0, made.stderr
    assert "BOB-SECRET" in (bob / "notes" / "secret.md").read_text()
    return bob


def test_the_persons_keys_credentials_and_tokens_file_stay_unread(repo: Path, hermetic: Path) -> None:
    files = plant(hermetic)
    review = write(common_dir(repo), "review-token", "review-secret-0c9b8a\n")  # a file of the git dir
    targets = [*files, review, hermetic / ".ssh", hermetic, common_dir(repo)]
    out, said = attack(repo, targets)
    assert_got_nothing(repo, out, said, targets)
    assert "reads: confined to" in said and out["reads"].startswith("its own work, the system")


def test_another_agents_memory_under_an_mcp_root_stays_unread(tmp_path: Path) -> None:
    root = tmp_path / "agents"
    alice = root / "alice" / "memory"
    assert memory("init", str(alice), "--agent-id", "alice", cwd=tmp_path).returncode == 0
    bob = bob_beside(root)
    targets = [bob / "notes" / "secret.md", bob / ".git" / "config", bob / "notes", root, root / "bob"]
    out, said = attack(alice, targets, git_dir=bob / ".git")
    assert f"GIT DENIED {bob / '.git'}" in said, said
    assert_got_nothing(alice, out, said, targets)


def test_lettas_agents_tree_stays_walled_off_while_its_settings_are_read(hermetic: Path, tmp_path: Path) -> None:
    """The memory sits in ~/.letta/agents/alice/memory and the agent asks for ~/.letta (as
    Letta Code's recipe does): its settings are readable, the agents tree beside it is not."""
    letta = hermetic / ".letta"
    settings = write(letta, "settings.json", '{"theme": "dark"}\n')
    alice = letta / "agents" / "alice" / "memory"
    assert memory("init", str(alice), "--agent-id", "alice", cwd=tmp_path).returncode == 0
    bob = bob_beside(letta / "agents")
    (letta / "bob-link").symlink_to(letta / "agents" / "bob")  # a way round through a link
    targets = [bob / "notes" / "secret.md", letta / "agents", bob / ".git" / "HEAD",
               letta / "bob-link" / "memory" / "notes" / "secret.md"]
    out, said = attack(alice, [settings, *targets], git_dir=bob / ".git")
    assert f"READ {settings}\n" in said and '"theme": "dark"' in said, said
    # It read the settings, so it committed what it found: none of it is another agent's.
    assert "BOB-SECRET" not in said and f"GIT DENIED {bob / '.git'}" in said, said
    for target in targets:
        assert f"DENIED {target}\n" in said, said
    assert out["status"] == "merged", out
    assert "BOB-SECRET" not in git("log", "--all", "-p", cwd=alice).stdout
    assert f"{letta} holds other memories or credentials" in said


def test_allow_read_grants_what_a_person_names_and_any_switches_reads_off(repo: Path, hermetic: Path) -> None:
    key, aws, *_ = plant(hermetic)
    git("config", "--add", "dream.sandbox.allowRead", "~/.aws", cwd=repo)
    _, said = attack(repo, [key, aws])
    assert f"READ {aws}\n" in said and f"DENIED {key}\n" in said, said
    git("config", "--add", "dream.sandbox.allowRead", "any", cwd=repo)
    out, said = attack(repo, [key])
    assert f"READ {key}\n" in said and "reads: not confined (dream.sandbox.allowRead any)" in said
    assert out["reads"] == "not confined (dream.sandbox.allowRead any)"
    assert out["status"] == "merged"


def test_launcher_refuses_when_the_memorys_git_dir_stays_readable(repo: Path) -> None:
    """Granting the whole git dir would expose its files (a review token, say): the
    launcher's read probe catches it and the agent never starts."""
    git("config", "dream.sandbox.allowRead", str(common_dir(repo)), cwd=repo)
    out = dream_json(repo, "--agent", "echo should-not-$((1 + 1))-run", code=4)
    assert out["status"] == "sandbox_unavailable", out
    assert "still readable after confinement" in out["message"] and "allowRead" in out["message"]
    assert "should-not-2-run" not in log_of(out)
    assert "Honest note" not in git("log", "--all", "--format=%s", cwd=repo).stdout


@pytest.mark.skipif(not shutil.which("node"), reason="needs Node.js (the agent CLIs run on it)")
def test_a_node_agent_still_works_and_reads_no_key(repo: Path, hermetic: Path) -> None:
    key, *_ = plant(hermetic)
    out = dream_json(repo, "--agent", f"node {AGENTS / 'node_reads.js'} {key}", code=0)
    said = log_of(out)
    assert "KEY EACCES" in said and "READ THE KEY" not in said and "ssh-secret" not in said, said
    assert "LOOKUP 127.0.0.1" in said and "DONE" in said and "cpus=0" not in said, said
    assert out["status"] == "merged" and "notes/node.md" in tree_files(repo, "HEAD")


def test_a_system_folder_that_holds_the_memory_and_its_siblings_is_not_granted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A memory in /opt/alice-mem beside /opt/bob-mem: /opt is a system folder, but granting
    it (or splitting it) would hand over bob's memory, so only what is named in it is read."""
    from gitmemfs.dream import readable

    opt = tmp_path / "opt"
    for folder in ("alice-mem/.git/objects", "bob-mem/.git", "node/bin"):
        (opt / folder).mkdir(parents=True)
    monkeypatch.setattr(readable, "SYSTEM", (str(opt),))
    said: list[str] = []

    def grants(configured: list[str]) -> list[str]:
        req = readable.Request(command="true", env={"HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"},
                               own=[str(opt / "alice-mem/.git/objects")], memory_root=str(opt / "alice-mem"),
                               common_dir=str(opt / "alice-mem/.git"), configured=configured)
        found = readable.plan(req, said.append)
        return [*found.dirs, *found.files]

    granted = grants([])
    assert str(opt / "alice-mem/.git/objects") in granted
    assert not any(readable.beneath(p, str(opt)) and "alice-mem/.git/objects" not in p for p in granted), granted
    assert str(opt / "node") in grants([str(opt / "node")])  # named, it is read


def test_a_program_is_granted_with_what_it_runs_from(tmp_path: Path) -> None:
    """How agent CLIs are installed: npm (a link into its package, run by node through
    env), pip --user (a python script beside its site-packages), pipx (a venv)."""
    import sys

    from gitmemfs.dream import readable

    def script(path: Path, text: str) -> Path:
        write(path.parent, path.name, text).chmod(0o755)
        return path

    npm = tmp_path / "npm"
    package = npm / "lib/node_modules/@acme/cli"
    script(package / "bin/cli.js", "#!/usr/bin/env node\n")
    write(package, "package.json", "{}")
    (npm / "bin").mkdir(parents=True)
    (npm / "bin/acme").symlink_to(package / "bin/cli.js")
    user = tmp_path / "user"
    script(user / "bin/tool", f"#!{sys.executable}\nimport tool\n")
    (user / "lib/python3.11/site-packages").mkdir(parents=True)
    search = f"{npm / 'bin'}:{user / 'bin'}:/usr/bin:/bin"
    acme = readable.program_paths("acme", search)
    assert str(package) in acme and str(package / "bin/cli.js") in acme
    if shutil.which("node", path=search):
        assert os.path.realpath(shutil.which("node", path=search) or "") in acme  # the interpreter too
    tool = readable.program_paths("tool", search)
    assert str(user / "lib/python3.11/site-packages") in tool and os.path.realpath(sys.executable) in tool
    if sys.prefix != sys.base_prefix:
        assert sys.prefix in tool  # a venv's python reads its pyvenv.cfg
    assert readable.program_paths("no-such-program", search) == []
