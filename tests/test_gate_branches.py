"""Issue 34, attack 1 (and its smaller twin): the server keeps the memory's branch.

An agent that can push rewinds the server's main past a person's protection by
deleting `main` and creating it again at an old commit; a plain force push is refused,
so the route is the deletion. The gate refuses deleting a memory branch, and judges
creating one where the memory already has history as the move it is. A person does
either with an approval: a signed push (`git push --signed`) by a key in the server's
allowed signers. Whichever branch the memory lives on is protected, `master` too.
Real bare repositories behind the installed gate, real clones, real `git push`.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Iterator

import pytest
from gitserver import GitServer
from trustkit import allow, keypair

from conftest import gated_server, git, head, memfile, memory, write

needs_ssh_keygen = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs ssh-keygen (OpenSSH)")
DELETE_REFUSED = "refs/heads/main: deleting a memory branch is refused"
CREATE_REFUSED = "refs/heads/main: creating a memory branch where the memory already has history is refused"


def refs(repo: Path) -> str:
    return git("for-each-ref", cwd=repo).stdout


def refused(client: Path, *args: str, server: Path, by_gate: bool = True) -> str:
    before = refs(server)
    proc = git("push", *args, cwd=client, check=False)
    assert proc.returncode != 0, proc.stderr
    assert "hook declined" in proc.stderr or not by_gate, proc.stderr
    assert refs(server) == before
    return proc.stderr


@pytest.fixture
def world(repo: Path, tmp_path: Path) -> dict[str, Path]:
    """A person's memory with a protected file on a gated server that lists the person's
    key (as docs/hooks-and-ci.md sets one up), and an agent's clone of it."""
    keys = tmp_path / "keys"
    keys.mkdir()
    person = keypair(keys, "person")
    allowed = allow(keys / "allowed_signers", "person@example.com", person)
    srv = tmp_path / "srv.git"
    git("init", "-q", "--bare", str(srv), cwd=tmp_path)
    # git's own default for a bare repository: HEAD names master, the memory lives on main
    git("symbolic-ref", "HEAD", "refs/heads/master", cwd=srv)
    assert memory("hooks", "install", cwd=srv).returncode == 0
    git("config", "gpg.ssh.allowedSignersFile", str(allowed), cwd=srv)
    git("config", "receive.certNonceSeed", "a-server-secret", cwd=srv)
    for key, value in (("gpg.format", "ssh"), ("user.signingKey", str(person)), ("user.email", "person@example.com")):
        git("config", key, value, cwd=repo)
    git("remote", "add", "origin", str(srv), cwd=repo)
    git("push", "-q", "-u", "origin", "main", cwd=repo)
    proc = memory("protect", "system/human.md", "-m", "keep it", "--sign", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    git("push", "-q", "origin", "main", cwd=repo)
    agent = tmp_path / "agent"
    git("clone", "-q", "--branch", "main", str(srv), str(agent), cwd=tmp_path)
    return {"person": repo, "srv": srv, "agent": agent, "tmp": tmp_path}


def test_an_agent_cannot_delete_main_and_create_it_again_at_an_old_commit(world: dict[str, Path]) -> None:
    srv, agent = world["srv"], world["agent"]
    protected = git("rev-parse", "main", cwd=srv).stdout.strip()
    old = git("rev-parse", "HEAD~1", cwd=agent).stdout.strip()  # from before the protection
    # The plain force push was refused already; the deletion is refused now too.
    stderr = refused(agent, "--force", "origin", f"{old}:refs/heads/main", server=srv)
    assert "a history rewrite is refused" in stderr
    stderr = refused(agent, "origin", ":main", server=srv)
    assert f"remote: {DELETE_REFUSED}" in stderr, stderr
    assert "git push --signed" in stderr
    assert git("rev-parse", "main", cwd=srv).stdout.strip() == protected
    assert "read_only: true" in git("show", "main:system/human.md", cwd=srv).stdout


def test_the_branch_head_names_cannot_be_planted_beside_the_memory(world: dict[str, Path]) -> None:
    """A server whose HEAD names `master` while the memory lives on `main` (a bare
    repository made with git's default): a new clone would check out whatever an agent
    creates as master, so creating it is judged against main."""
    srv, agent = world["srv"], world["agent"]
    old = git("rev-parse", "HEAD~1", cwd=agent).stdout.strip()
    stderr = refused(agent, "origin", f"{old}:refs/heads/master", server=srv)
    assert "refs/heads/master: creating a memory branch where the memory already has history" in stderr, stderr
    proc = git("push", "origin", "main:refs/heads/master", cwd=agent, check=False)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("branch", ["master", "memory"])
def test_the_branch_the_memory_lives_on_is_protected_whatever_its_name(tmp_path: Path, branch: str) -> None:
    srv = tmp_path / "srv.git"
    git("init", "-q", "--bare", f"--initial-branch={branch}", str(srv), cwd=tmp_path)
    seed = tmp_path / "seed"
    assert memory("init", "-q", str(seed), cwd=tmp_path).returncode == 0
    write(seed, "system/notes.md", memfile("Notes", "one\n"))
    git("add", "-A", cwd=seed)
    git("commit", "-q", "-m", "one", cwd=seed)
    git("push", "-q", str(srv), f"main:{branch}", cwd=tmp_path / "seed")
    assert memory("hooks", "install", cwd=srv).returncode == 0
    person = tmp_path / "person"
    proc = memory("clone", str(srv), str(person), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert git("symbolic-ref", "--short", "HEAD", cwd=person).stdout.strip() == branch
    write(person, "system/notes.md", memfile("Notes", "one\ntwo\n"))
    git("commit", "-q", "-am", "two", cwd=person)
    git("push", "-q", "origin", branch, cwd=person)
    stderr = refused(person, "--force", "origin", f"HEAD~1:refs/heads/{branch}", server=srv)
    assert f"refs/heads/{branch}: a history rewrite is refused" in stderr, stderr
    refused(person, "origin", f":{branch}", server=srv, by_gate=False)  # git's own: HEAD's branch


def test_memory_branch_names_more_branches_to_keep(world: dict[str, Path]) -> None:
    """A memory cloned with --branch from a server whose HEAD names another branch: the
    server says which branch holds it, and that one is kept too."""
    srv, agent = world["srv"], world["agent"]
    git("push", "-q", "origin", "main:refs/heads/notes", cwd=agent)
    git("config", "--add", "memory.branch", "notes", cwd=srv)
    stderr = refused(agent, "--force", "origin", "HEAD~1:refs/heads/notes", server=srv)
    assert "refs/heads/notes: a history rewrite is refused" in stderr, stderr
    stderr = refused(agent, "origin", ":notes", server=srv)
    assert "refs/heads/notes: deleting a memory branch is refused" in stderr, stderr


@needs_ssh_keygen
def test_a_person_deletes_and_recreates_main_with_a_signed_push(world: dict[str, Path]) -> None:
    person, srv, agent = world["person"], world["srv"], world["agent"]
    old = git("rev-parse", "HEAD~1", cwd=person).stdout.strip()
    # The agent cannot sign as the person: an unsigned or other-key push stays refused.
    refused(agent, "origin", ":main", server=srv)
    proc = git("push", "--signed", "origin", ":main", cwd=person, check=False)
    assert proc.returncode == 0, proc.stderr
    assert git("rev-parse", "-q", "--verify", "refs/heads/main", cwd=srv, check=False).returncode != 0
    # The deletion was the person's; making main again at an old commit is the agent's rewind.
    stderr = refused(agent, "origin", f"{old}:refs/heads/main", server=srv)
    assert CREATE_REFUSED in stderr, stderr
    proc = git("push", "--signed", "origin", f"{old}:refs/heads/main", cwd=person, check=False)
    assert proc.returncode == 0, proc.stderr
    assert git("rev-parse", "main", cwd=srv).stdout.strip() == old


# -- issue 39: a server made as docs/hooks-and-ci.md says takes a person's approval -----------

def test_a_server_that_counts_no_approvals_says_its_configuration_is_the_fix(repo: Path, tmp_path: Path) -> None:
    srv = gated_server(repo, tmp_path / "srv.git")
    git("config", "memory.checkScope", "all", cwd=srv)
    assert memory("protect", "system/human.md", "-m", "keep it", cwd=repo).returncode == 0
    stderr = refused(repo, "origin", "main", server=srv)
    assert "cannot be set by the agent" in stderr
    assert (f"note: {head(repo)[:12]} carries Memory-Approved: protect but approves nothing here: this "
            "repository counts no approval recorded in a commit, so the fix is its configuration") in stderr
    assert "Push refused: the fix is this server's configuration (see the note above), not the commits." in stderr
    assert "fix those commits" not in stderr


@needs_ssh_keygen
def test_the_documented_server_recipe_takes_a_persons_signed_protect(repo: Path, tmp_path: Path) -> None:
    """docs/hooks-and-ci.md "On the server", as written there, then the person's side."""
    keys = tmp_path / "keys"
    keys.mkdir()
    person = keypair(keys, "person")
    srv = tmp_path / "srv.git"
    git("init", "-q", "--bare", str(srv), cwd=tmp_path)
    git("remote", "add", "origin", str(srv), cwd=repo)
    git("push", "-q", "origin", "main", cwd=repo)
    recipe = (Path(__file__).parent.parent / "docs/hooks-and-ci.md").read_text()
    block = recipe.split("Install the gate into the bare repository that receives pushes:")[1]
    block = block.split("```sh\n", 1)[1].split("```", 1)[0]
    allowed = tmp_path / "allowed_signers"
    script = block.replace("/srv/git/memory.git", str(srv)).replace("/srv/git/allowed_signers", str(allowed))
    script = script.replace("~/.ssh/id_ed25519.pub", f"{person}.pub").replace("you@example.com", "me@example.com")
    proc = subprocess.run(["sh", "-ec", script], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    for key, value in (("gpg.format", "ssh"), ("user.signingKey", str(person)), ("user.email", "me@example.com")):
        git("config", key, value, cwd=repo)
    assert memory("protect", "system/human.md", "-m", "keep it", "--sign", cwd=repo).returncode == 0
    proc = git("push", "origin", "main", cwd=repo, check=False)
    assert proc.returncode == 0, proc.stderr
    # and an unsigned approval (anyone's) is still refused there
    assert memory("unprotect", "system/human.md", "-m", "lift it", cwd=repo).returncode == 0
    stderr = refused(repo, "origin", "main", server=srv)
    assert "is not signed by a key in gpg.ssh.allowedSignersFile" in stderr


@pytest.fixture
def served(repo: Path, tmp_path: Path) -> Iterator[dict[str, Path | str]]:
    """The person's memory, with a protected file, on a gated smart-HTTP server; an
    agent's clone of it over HTTP."""
    with GitServer(tmp_path / "server", require_auth=False) as server:
        bare = server.add_repo()
        assert memory("hooks", "install", "-q", cwd=bare).returncode == 0
        git("config", "memory.approvalTrailers", "true", cwd=bare)  # no signers: the trailer counts
        url = server.url()
        git("remote", "add", "origin", url, cwd=repo)
        git("push", "-q", "-u", "origin", "main", cwd=repo)
        assert memory("protect", "system/human.md", "-m", "keep it", cwd=repo).returncode == 0
        git("push", "-q", "origin", "main", cwd=repo)
        agent = tmp_path / "agent"
        git("clone", "-q", url, str(agent), cwd=tmp_path)
        yield {"person": repo, "srv": bare, "agent": agent, "url": url}


def test_main_deleted_on_the_server_by_hand_is_created_again_only_from_its_last_tip(
        served: dict[str, Path | str]) -> None:
    """An admin deletes main on the server by hand (not through a push, so the gate sees
    nothing); the agent's push that creates it again at a commit from before the
    protection is refused: every accepted push noted where it left main."""
    srv, agent, person = Path(served["srv"]), Path(served["agent"]), Path(served["person"])
    tip = git("rev-parse", "main", cwd=srv).stdout.strip()
    old = git("rev-parse", "HEAD~1", cwd=agent).stdout.strip()
    git("update-ref", "-d", "refs/heads/main", cwd=srv)
    stderr = refused(agent, "origin", f"{old}:refs/heads/main", server=srv)
    assert CREATE_REFUSED in stderr and tip[:12] in stderr, stderr
    # Created again at its last tip (or a commit after it), it is taken.
    git("push", "-q", "origin", "main", cwd=person)
    assert git("rev-parse", "main", cwd=srv).stdout.strip() == tip


@pytest.mark.parametrize("tag", ["main", "origin/main", "HEAD"])
def test_a_tag_that_would_stand_in_for_the_branch_is_refused(served: dict[str, Path | str], tag: str) -> None:
    """A tag `main` (or `origin/main`) shadows the branch in every clone that fetches it:
    `git rev-parse main`, a CI's `git memory check origin/main..HEAD`, read the tag."""
    srv, agent = Path(served["srv"]), Path(served["agent"])
    old = git("rev-parse", "HEAD~1", cwd=agent).stdout.strip()
    stderr = refused(agent, "origin", f"{old}:refs/tags/{tag}", server=srv)
    assert f"refs/tags/{tag}: a tag named like the memory's branch" in stderr, stderr
    # Any other tag is the agent's to make and delete; one named like it can be deleted.
    git("push", "-q", "origin", f"{old}:refs/tags/v1", cwd=agent)
    git("push", "-q", "origin", ":refs/tags/v1", cwd=agent)
    git("update-ref", f"refs/tags/{tag}", old, cwd=srv)  # made on the server by hand
    git("push", "-q", "origin", f":refs/tags/{tag}", cwd=agent)


def test_a_branch_deleted_by_hand_before_the_gates_first_push_comes_back_only_from_its_tip(
        repo: Path, tmp_path: Path) -> None:
    """A bare repository filled before its gate was installed (docs/hooks-and-ci.md's
    way): main is deleted there by hand before any push went through the gate; a push
    creating it again at a commit from before the protection is refused, because
    installing the gate noted where main stood."""
    write(repo, "system/human.md", memfile("About the human", "Likes tea.\n"))
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "human", cwd=repo)
    old = head(repo)
    assert memory("protect", "system/human.md", "-m", "keep it", cwd=repo).returncode == 0
    srv = gated_server(repo, tmp_path / "srv.git")
    git("config", "memory.approvalTrailers", "true", cwd=srv)  # no signers: the trailer counts
    tip = git("rev-parse", "main", cwd=srv).stdout.strip()
    git("update-ref", "-d", "refs/heads/main", cwd=srv)
    stderr = refused(repo, "origin", f"{old}:refs/heads/main", server=srv)
    assert CREATE_REFUSED in stderr and tip[:12] in stderr, stderr
    git("push", "-q", "origin", "main", cwd=repo)  # at its tip it is taken
    assert git("rev-parse", "main", cwd=srv).stdout.strip() == tip
