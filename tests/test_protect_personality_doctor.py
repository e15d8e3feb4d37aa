"""protect/unprotect, personalities and doctor, end to end through bin/ and real commits."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import commit_all, git, memfile, memory, snapshot, write

PROTECT = {"GIT_MEMORY_APPROVE": "protect"}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "root"
    assert memory("init", "--layout", "letta-root", str(path), cwd=tmp_path).returncode == 0
    return path


def commits(repo: Path) -> int:
    return int(git("rev-list", "--count", "HEAD", cwd=repo).stdout)


# -- protect / unprotect --------------------------------------------------------------

def test_protect_is_the_persons_approval_and_its_commit_records_it(repo: Path) -> None:
    proc = memory("protect", "system/human.md", "-m", "keep it", cwd=repo)  # no variable needed
    assert proc.returncode == 0, proc.stderr
    message = git("log", "-1", "--format=%B", cwd=repo).stdout
    assert "Memory-Op: protect\nMemory-Path: system/human.md\nMemory-Approved: protect\n" in message
    assert git("log", "-1", "--format=%G?", cwd=repo).stdout.strip() == "N"  # unsigned unless asked


def test_protect_and_unprotect_read_only_in_the_letta_layout(repo: Path) -> None:
    proc = memory("protect", "system/human.md", "-m", "keep it", cwd=repo, env=PROTECT)
    assert proc.returncode == 0, proc.stderr
    assert "\nread_only: true\n---\n" in (repo / "system/human.md").read_text()
    assert git("log", "-1", "--format=%s", cwd=repo).stdout.strip() == "keep it"
    proc = memory("str_replace", "system/human.md", "Nothing", "Everything", "-m", "agent edit", cwd=repo)
    assert proc.returncode == 1 and "read_only" in proc.stderr
    proc = memory("unprotect", "system/human.md", "-m", "free it", cwd=repo, env=PROTECT)
    assert proc.returncode == 0, proc.stderr
    assert "read_only" not in (repo / "system/human.md").read_text()
    assert memory("check", "--all", cwd=repo).returncode == 0


def test_protect_in_the_root_layout_says_it_cannot_exist_there(root: Path) -> None:
    # Letta refuses read_only there and any key of .memfs.config.json it does not know,
    # so either record would block every Letta commit (issue 27, item 11).
    before = snapshot(root)
    proc = memory("protect", "persona.md", "-m", "my persona", cwd=root, env=PROTECT)
    assert proc.returncode == 1
    assert "protection cannot exist in the letta-root layout" in proc.stderr
    assert snapshot(root) == before


def test_agents_cannot_add_read_only_through_the_gate_but_protect_can(repo: Path) -> None:
    write(repo, "system/x.md", memfile("x", "", "read_only: true"))
    git("add", "-A", cwd=repo)
    assert git("commit", "-q", "-m", "x", cwd=repo, check=False).returncode == 1
    assert git("commit", "-q", "-m", "x", cwd=repo, check=False, env=PROTECT).returncode == 0


# -- personalities --------------------------------------------------------------------

def test_personality_list_and_show() -> None:
    proc = memory("personality", "list", "--json", cwd=Path.cwd())
    ids = [p["id"] for p in json.loads(proc.stdout)["personalities"]]
    assert ids == ["blank", "memo", "senior", "tutorial"]
    proc = memory("personality", "show", "senior", cwd=Path.cwd())
    assert proc.returncode == 0 and "## persona" in proc.stdout and "senior software engineer" in proc.stdout
    proc = memory("personality", "show", "nope", cwd=Path.cwd())
    assert proc.returncode == 1 and "unknown personality 'nope'" in proc.stderr


@pytest.mark.parametrize("layout", ["letta", "letta-root", "legacy"])
def test_apply_is_one_commit_keeping_frontmatter(tmp_path: Path, layout: str) -> None:
    path = tmp_path / "m"
    args = ["init", str(path)] + (["--layout", layout] if layout == "letta-root" else [])
    assert memory(*args, cwd=tmp_path).returncode == 0
    if layout == "legacy":
        git("mv", "system", "memory", cwd=path)
        (path / "memory/system").mkdir()
        git("mv", "memory/persona.md", "memory/human.md", "memory/system/", cwd=path)
        commit_all(path, "legacy memory/system layout")
    persona = {"letta": "system/persona.md", "letta-root": "persona.md", "legacy": "memory/system/persona.md"}[layout]
    human = persona.replace("persona", "human")
    text = (path / persona).read_text().replace("---\n", "---\nlimit: 5000\n", 1) if layout != "letta-root" \
        else (path / persona).read_text()
    if layout != "letta-root":
        write(path, persona, text)
        commit_all(path, "a limit")
    n = commits(path)
    proc = memory("personality", "apply", "senior", "-m", "be terse", cwd=path)
    assert proc.returncode == 0, proc.stderr
    assert commits(path) == n + 1
    changed = git("show", "--name-only", "--format=", "HEAD", cwd=path).stdout.split()
    assert sorted(changed) == sorted([persona, human])
    new = (path / persona).read_text()
    assert "I am a senior software engineer." in new
    assert "description: How I work as a senior engineer, in my own words.\n" in new
    if layout == "letta-root":
        assert '\nname: "Persona"\n' in new
    else:
        assert "\nlimit: 5000\n" in new
    assert memory("check", "--all", cwd=path).returncode == 0


def test_apply_refuses_a_dirty_repo(repo: Path) -> None:
    write(repo, "untracked.md", "x")
    before = snapshot(repo)
    proc = memory("personality", "apply", "blank", "-m", "reset", cwd=repo)
    assert proc.returncode == 1 and "uncommitted changes" in proc.stderr
    assert snapshot(repo) == before


def test_team_personalities_from_a_folder_and_init_personality(tmp_path: Path) -> None:
    team = tmp_path / "team"
    write(team, "ops.md", "---\nlabel: Ops\ndescription: Our on-call voice\npersona: On call\nhuman: The team\n---\n"
                          "## persona\nI keep systems up.\n\n## human\nThe SRE team.\n")
    path = tmp_path / "m"
    assert memory("init", "--personality", "tutorial", str(path), cwd=tmp_path).returncode == 0
    assert "I am a patient teacher." in (path / "system/persona.md").read_text()
    assert commits(path) == 1
    git("config", "memory.personalityPath", str(team), cwd=path)
    proc = memory("personality", "list", cwd=path)
    assert "ops        Ops — Our on-call voice [team]" in proc.stdout
    assert memory("personality", "apply", "ops", "-m", "on call", cwd=path).returncode == 0
    assert (path / "system/human.md").read_text() == "---\ndescription: The team\n---\nThe SRE team.\n"


# -- doctor ---------------------------------------------------------------------------

def test_doctor_is_clean_on_a_fresh_memory(repo: Path, root: Path) -> None:
    for path in (repo, root):
        proc = memory("doctor", cwd=path)
        assert proc.returncode == 0 and proc.stdout.startswith("No problems:"), proc.stdout


def test_doctor_finds_each_planted_problem(root: Path) -> None:
    write(root, ".memfs.config.json", '{"version": 1, "maxFileCharacters": 300}')
    write(root, "human.md", "---\nname: human\ndescription: d\n---\nsee [[projects/gone]] and [[persona]]\n")
    write(root, "human/MEMORY.md", "# Human\n")
    write(root, "Human.md", "---\nname: Human\ndescription: d\n---\n")
    write(root, "loose/a.md", "x\n")
    write(root, "big.md", "---\nname: big\ndescription: d\n---\n" + "b" * 400)
    write(root, "notes/SKILL.md", "---\nname: s\ndescription: d\n---\n")
    write(root, "skills/empty/README.md", "x\n")
    commit_all(root, "planted problems")
    git("rm", "-q", "persona.md", cwd=root)
    commit_all(root, "no persona")
    proc = memory("doctor", "--json", cwd=root)
    assert proc.returncode == 1
    found = {(p["kind"], p["path"]) for p in json.loads(proc.stdout)["problems"]}
    assert {("rule", "big.md"), ("shadow", "human.md"), ("case", "Human.md"), ("link", "human.md"),
            ("index", "loose/"), ("skill", "notes/SKILL.md"), ("skill", "skills/empty/"),
            ("persona", "persona.md")} <= found
    text = memory("doctor", cwd=root).stdout
    assert "human.md: broken link [[projects/gone]]: no file projects/gone or projects/gone.md\n  fix: " in text
    assert all(p["fix"] for p in json.loads(proc.stdout)["problems"])


def test_a_server_gate_accepts_protect_commits_only_where_it_trusts_approval_trailers(repo: Path,
                                                                                     tmp_path: Path) -> None:
    server = tmp_path / "server.git"
    git("init", "-q", "--bare", str(server), cwd=tmp_path)
    git("remote", "add", "origin", str(server), cwd=repo)
    git("push", "-q", "origin", "main", cwd=repo)
    assert memory("hooks", "install", cwd=server).returncode == 0
    assert memory("protect", "system/human.md", "-m", "keep it", cwd=repo, env=PROTECT).returncode == 0
    assert "Memory-Approved: protect" in git("log", "-1", "--format=%B", cwd=repo).stdout
    proc = git("push", "origin", "main", cwd=repo, check=False)
    assert proc.returncode != 0
    assert "'read_only' is a protected field and cannot be set by the agent" in proc.stderr
    git("config", "memory.approvalTrailers", "true", cwd=server)
    assert git("push", "origin", "main", cwd=repo, check=False).returncode == 0
    # A forged trailer on the client does not get past the client's own hook.
    write(repo, "system/human.md", "x")
    git("add", "-A", cwd=repo)
    proc = git("commit", "-q", "-m", "x\n\nMemory-Approved: protect", cwd=repo, check=False)
    assert proc.returncode == 1
