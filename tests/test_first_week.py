"""A person's first week (issue 39): each rough edge, through the command a person
types, now the right answer or one clear `error:` line with the right exit code."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import LIB, ROOT, git, head, memfile, memory, run, snapshot, write
from dreamkit import dream_json, landlock

# -- relative paths are read from where the person typed them ---------------------------------


def test_clone_of_a_relative_path_into_a_subfolder_works_as_git_clone_does(mem: Path, tmp_path: Path) -> None:
    srv = tmp_path / "srv.git"
    git("clone", "-q", "--bare", str(mem), str(srv), cwd=tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    proc = memory("clone", "../srv.git", "sub/c", cwd=work)
    assert proc.returncode == 0, proc.stderr
    clone = work / "sub" / "c"
    assert head(clone) == head(mem)
    # recorded absolute, as git clone records a local path: it works from anywhere
    assert git("config", "remote.origin.url", cwd=clone).stdout.strip() == str(srv)
    assert memory("sync", cwd=clone / "system").returncode == 0


def test_mirror_set_url_to_a_relative_path_pushes_there(mem: Path, tmp_path: Path) -> None:
    mirror = tmp_path / "mirror.git"
    git("init", "-q", "--bare", str(mirror), cwd=tmp_path)
    proc = memory("mirror", "set-url", "../mirror.git", cwd=mem)
    assert proc.returncode == 0, proc.stderr
    assert str(mirror) in proc.stdout
    proc = memory("mirror", "push", cwd=mem / "system")
    assert proc.returncode == 0, proc.stderr
    assert git("rev-parse", "main", cwd=mirror).stdout.strip() == head(mem)


def test_mirror_status_after_set_url_does_not_report_the_old_urls_push(mem: Path, tmp_path: Path) -> None:
    old, new = tmp_path / "old.git", tmp_path / "new.git"
    for bare in (old, new):
        git("init", "-q", "--bare", str(bare), cwd=tmp_path)
    assert memory("mirror", "set-url", str(old), cwd=mem).returncode == 0
    assert memory("mirror", "push", cwd=mem).returncode == 0
    status = json.loads(memory("--json", "mirror", "status", cwd=mem).stdout)
    assert status["last_push"]["ok"] and status["last_push"]["url"] == str(old)
    assert memory("mirror", "set-url", str(new), cwd=mem).returncode == 0
    proc = memory("mirror", "status", cwd=mem)
    assert proc.returncode == 0 and "ok" not in proc.stdout.split("\n")[1], proc.stdout
    assert "No push yet" in proc.stdout
    assert json.loads(memory("--json", "mirror", "status", cwd=mem).stdout)["last_push"] is None
    before = snapshot(mem)
    assert memory("mirror", "push", cwd=mem).returncode == 0
    assert snapshot(mem) == before
    status = json.loads(memory("--json", "mirror", "status", cwd=mem).stdout)
    assert status["last_push"]["ok"] and status["last_push"]["url"] == str(new)


# -- values that were accepted silently ------------------------------------------------------

@pytest.mark.parametrize("argv,code,message", [
    (["log", "--since", "garbage"], 2,
     "error: log: --since takes a date such as '2 weeks ago' or 2026-01-31; git cannot read 'garbage' as one\n"),
    (["search", "alpha", "../"], 2,
     "error: search: '../' is outside the memory; paths start at the memory's top, e.g. system/ or "
     "notes/plans.md\n"),
    (["search", "alpha", "reference/../../x"], 2, "is outside the memory"),
    (["search", "alpha", "/etc"], 2, "is outside the memory"),
    (["check", "HEAD~50..HEAD"], 2,
     "error: git memory check: bad revision range 'HEAD~50..HEAD'; use e.g. origin/main..HEAD\n"),
    (["--memory-dir", "/etc/hostname", "status"], 2,
     "error: memory: /etc/hostname (--memory-dir) is a file, not a folder; name the memory repository's "
     "folder (the one git memory init made)\n"),
])
def test_a_value_that_means_nothing_is_refused(mem: Path, argv: list[str], code: int, message: str) -> None:
    before = snapshot(mem)
    proc = memory(*argv, cwd=mem)
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert message in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
    assert snapshot(mem) == before


def test_log_since_still_takes_what_git_takes(mem: Path) -> None:
    for when in ("2 weeks ago", "2026-01-31", "yesterday", "3.days"):
        proc = memory("log", "--since", when, cwd=mem)
        assert proc.returncode == 0, proc.stderr
    assert "fixture files" in memory("log", "--since", "1 year ago", cwd=mem).stdout
    assert "reference/history/a.md" in memory("search", "alpha", "./reference/", cwd=mem).stdout


@pytest.mark.parametrize("every", ["-3", "0", "ten", "2.5"])
def test_a_bad_dream_every_is_refused_not_read_as_25(mem: Path, every: str) -> None:
    git("config", "dream.trigger", "commits", cwd=mem)
    git("config", "dream.every", every, cwd=mem)
    want = (f"dream.every must be a whole number of memory commits, at least 1, got {every!r}; "
            "set it with git config dream.every 25")
    proc = run("dream", "--auto", cwd=mem)
    assert (proc.returncode, proc.stderr) == (2, f"error: {want}\n")
    # a person's own commit says why no dream starts (the commit is made)
    write(mem, "notes/x.md", memfile("x", "body\n"))
    git("add", "notes/x.md", cwd=mem)
    proc = git("commit", "-q", "-m", "note", "-m", "Memory-Op: create", cwd=mem)
    assert f"warning: no dream started: {want}" in proc.stderr
    runs = mem / ".git" / "dream" / "runs"
    assert not runs.exists() or not list(runs.iterdir())


# -- hooks whose git-memfs went away -----------------------------------------------------------

def _install_elsewhere(mem: Path, tmp_path: Path, what: str) -> Path:
    """Install the hooks from a git-memfs that is then removed: a venv of its own, or a
    copy of the checkout run with our interpreter. Returns what to remove."""
    env = dict(os.environ)
    if what == "venv":
        gone = tmp_path / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(gone)], check=True)
        site = next(gone.glob("lib/python3*/site-packages"))
        (site / "yaml-from-tests.pth").write_text(os.path.dirname(os.path.dirname(__import__("yaml").__file__)))
        env["GIT_MEMFS_PYTHON"] = str(gone / "bin" / "python")
        cmd = [str(ROOT / "bin" / "git-memory")]
    else:
        gone = tmp_path / "checkout"
        shutil.copytree(LIB, gone / "lib", ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copytree(ROOT / "bin", gone / "bin")
        cmd = [str(gone / "bin" / "git-memory")]
    proc = subprocess.run([*cmd, "hooks", "install"], cwd=mem, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert str(gone) in (mem / ".git/hooks/pre-commit").read_text()
    return gone


@pytest.mark.parametrize("what", ["venv", "checkout"])
def test_a_commit_after_the_install_is_gone_says_what_happened_and_how_to_fix_it(
        mem: Path, tmp_path: Path, what: str) -> None:
    shutil.rmtree(_install_elsewhere(mem, tmp_path, what))
    write(mem, "system/contacts.md", memfile("People I know", "Sarah: +1-555-0111\n"))
    before = snapshot(mem)
    proc = git("commit", "-qam", "Sarah's new number", cwd=mem, check=False)
    assert proc.returncode == 1
    assert "cannot run" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    line, = proc.stderr.splitlines()
    assert line.startswith("error: git-memfs pre-commit hook refused the commit: the git-memfs that "
                           "installed it is gone (") and str(tmp_path / what) in line, line
    assert line.endswith("install git-memfs again, then run git memory hooks install in this repository "
                         "(or git memory hooks install from wherever git-memfs is installed now)"), line
    assert snapshot(mem) == before
    assert "The hooks will not all run" in memory("hooks", "status", cwd=mem).stdout
    # the fix it names, from the git-memfs installed now
    assert memory("hooks", "install", cwd=mem).returncode == 0
    proc = git("commit", "-qam", "Sarah's new number", cwd=mem, check=False)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


def test_the_installed_hooks_are_a_few_lines_of_sh(repo: Path) -> None:
    for name in ("pre-commit", "pre-merge-commit", "post-commit"):
        text = (repo / ".git/hooks" / name).read_text()
        assert text.startswith("#!/bin/sh\n") and len(text.splitlines()) <= 20, text


def test_the_portable_hook_without_its_python_says_so(repo: Path) -> None:
    git("config", "core.hooksPath", str(ROOT / "githooks"), cwd=repo)
    write(repo, "notes/x.md", memfile("x", "body\n"))
    git("add", "-A", cwd=repo)
    before = snapshot(repo)
    proc = git("commit", "-qm", "x", cwd=repo, check=False, env={"GIT_MEMFS_PYTHON": "/nonexistent/python3"})
    assert (proc.returncode, proc.stderr) == (1, "error: git-memfs pre-commit hook: cannot find "
                                                 "/nonexistent/python3; install git-memfs or set "
                                                 "GIT_MEMFS_PYTHON to a Python that has it\n")
    assert snapshot(repo) == before


# -- encoding errors in our words: the file, the byte, the fix --------------------------------

def raw_memory(*argv: bytes | str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """`git memory` with arguments as bytes, as a shell passes a Latin-1 name."""
    return subprocess.run(["git", "memory", *argv], cwd=cwd, capture_output=True, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("argv,shown,where", [
    ([b"view", b"notes/\xff.md"], "notes/\\xff.md", "byte 0xff at character 7"),
    ([b"str_replace", b"system/contacts.md", b"Sarah\xe9", b"x", b"-m", b"m"], "Sarah\\xe9",
     "byte 0xe9 at character 6"),
    ([b"create", b"notes/q.md", b"body", b"-d", b"caf\xe9", b"-m", b"m"], "caf\\xe9", "byte 0xe9 at character 4"),
    ([b"search", b"\xff"], "\\xff", "byte 0xff at character 1"),
    ([b"log", b"notes/\xff.md"], "notes/\\xff.md", "byte 0xff at character 7"),
])
def test_an_argument_that_is_not_utf8_is_named_with_its_byte(mem: Path, argv: list[bytes], shown: str,
                                                             where: str) -> None:
    before = snapshot(mem)
    proc = raw_memory(*argv, cwd=mem)
    err = proc.stderr.decode("utf-8")
    assert (proc.returncode, err) == (2, f"error: the argument '{shown}' is not UTF-8 text ({where}); memory "
                                         "paths and text are UTF-8: retype it, or convert it with iconv -t "
                                         "UTF-8\n")
    assert snapshot(mem) == before


def test_a_folder_name_from_the_system_is_shown_as_its_byte(tmp_path: Path) -> None:
    proc = raw_memory(b"--memory-dir", os.fsencode(tmp_path) + b"/caf\xe9", b"status", cwd=tmp_path)
    err = proc.stderr.decode("utf-8")
    assert proc.returncode == 4 and "caf\\xe9" in err and "\\udc" not in err, err


def _committed_bad(mem: Path, rel: str, data: bytes) -> None:
    (mem / rel).write_bytes(data)
    git("add", rel, cwd=mem)
    git("commit", "-q", "--no-verify", "-m", "arrived from elsewhere", cwd=mem)


def test_a_file_with_a_byte_utf8_cannot_read_names_it_everywhere(mem: Path) -> None:
    _committed_bad(mem, "system/latin.md", b"---\ndescription: Caf\xe9 notes\n---\nbody\n")
    before = snapshot(mem)
    proc = memory("str_replace", "system/latin.md", "body", "x", "-m", "m", cwd=mem)
    assert proc.returncode == 1 and proc.stderr == (
        f"error: memory: failed to read system/latin.md: File is not valid UTF-8 text: {mem}/system/latin.md. "
        "The file contains bytes that cannot be decoded as UTF-8 (byte 0xe9 at line 2, column 17); convert the "
        "file to UTF-8 (e.g. iconv -f latin1 -t utf-8) and retry.\n")
    proc = memory("check", cwd=mem)
    assert proc.returncode == 1
    assert "system/latin.md: is not valid UTF-8 (byte 0xe9 at line 2, column 17); convert the file to UTF-8" \
        in proc.stdout
    proc = memory("compile", cwd=mem)
    assert proc.returncode == 0 and "system/latin.md: is not valid UTF-8 (byte 0xe9 at line 2" in proc.stderr
    assert snapshot(mem) == before


@pytest.mark.parametrize("escape", ["\\ud800", "\\q", "\\xZZ"])
def test_a_bad_yaml_escape_is_explained_not_quoted_from_the_parser(mem: Path, escape: str) -> None:
    _committed_bad(mem, "system/esc.md", f'---\ndescription: "bad {escape}"\n---\nbody\n'.encode())
    before = snapshot(mem)
    want = (f"invalid YAML in frontmatter: the escape {escape} on line 2 is not a character YAML can read; "
            "write the character itself, or put the value in single quotes to keep the backslash as it is")
    proc = memory("str_replace", "system/esc.md", "body", "x", "-m", "m", cwd=mem)
    assert proc.returncode == 1 and want in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
    assert "Unicode character escape" not in proc.stderr and "found unknown" not in proc.stderr
    assert f"system/esc.md: {want}" in memory("check", cwd=mem).stdout
    assert snapshot(mem) == before


def test_a_folder_where_a_file_is_expected(mem: Path, tmp_path: Path) -> None:
    (mem / "system/folder.md").mkdir()
    (mem / "system/folder.md/inner.md").write_text(memfile("x", "b\n"))
    git("add", "-A", cwd=mem)
    git("commit", "-q", "--no-verify", "-m", "a folder named like a file", cwd=mem)
    proc = memory("view", "system/folder.md", cwd=mem)
    assert (proc.returncode, proc.stderr) == (1, "error: memory: failed to read system/folder.md: it is a "
                                                 "folder, not a memory file\n")
    before = snapshot(mem)
    proc = run("dream", "--agent", "builtin:tidy", "--to", str(tmp_path), cwd=mem)
    assert proc.returncode == 2 and "Errno" not in proc.stderr, proc.stderr
    assert proc.stderr == (f'error: invalid --to "{tmp_path}": it is a folder; name the document in it, e.g. '
                           f'{tmp_path}/AGENTS.md\n')
    assert snapshot(mem) == before


def test_a_dream_document_with_a_bad_byte_is_named(mem: Path, tmp_path: Path) -> None:
    doc = tmp_path / "AGENTS.md"
    doc.write_bytes(b"# Rules\n\nna\xefve\n")
    proc = run("dream", "--agent", "builtin:tidy", "--to", str(doc), cwd=mem)
    assert "codec can't decode" not in proc.stderr and "Errno" not in proc.stderr, proc.stderr
    assert "byte 0xef at line 3, column 3" in proc.stderr, proc.stderr


# -- builtin:notes keeps no stray quote ---------------------------------------------------------

@landlock
def test_builtin_notes_writes_what_was_quoted_without_stray_quotes(repo: Path, tmp_path: Path) -> None:
    said = ['Please remember: "I\'m on call this weekend."', "Remember: 'The door code is 4711'.",
            "Remember \u201cthe blue door is ours\u201d", 'Remember the word "yes" means go.',
            'I prefer "short answers".']
    session = tmp_path / "session.jsonl"
    session.write_text("".join(json.dumps({"kind": "user", "text": text, "source_message_id": str(n),
                                           "captured_at": "2025-03-04T10:00:00Z"}) + "\n"
                               for n, text in enumerate(said)))
    out = dream_json(repo, "--from", f"transcript:{session}", "--agent", "builtin:notes", code=0)
    assert out["status"] == "merged", out
    notes = (repo / "system/human.md").read_text().split("## Noted from conversations\n", 1)[1].lstrip("\n")
    assert notes == ("- 2025-03-04: Asked me to remember: \"I'm on call this weekend.\"\n"
                     "- 2025-03-04: Asked me to remember: The door code is 4711.\n"
                     "- 2025-03-04: Asked me to remember: The blue door is ours.\n"
                     "- 2025-03-04: Asked me to remember: The word \"yes\" means go.\n"
                     "- 2025-03-04: Prefers short answers.\n")


# -- a dream that changed nothing consumed its transcript: it says so, --reread reads it again --

@landlock
def test_a_dream_that_changes_nothing_says_it_consumed_and_reread_reads_again(repo: Path,
                                                                              tmp_path: Path) -> None:
    session = tmp_path / "session.jsonl"
    session.write_text('{"kind": "user", "text": "What is the weather like?", "source_message_id": "a"}\n'
                       '{"kind": "assistant", "text": "Sunny.", "source_message_id": "b"}\n')
    source = f"transcript:{session}"
    proc = run("dream", "--from", source, "--agent", "builtin:notes", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith(
        f"The 2 message(s) it read from {session} count as read: the next dream starts after them "
        f"(git dream --from {source} --reread reads them again)."), proc.stdout
    assert dream_json(repo, "--from", source, "--agent", "builtin:notes", code=0)["status"] == "no_payload"
    # the same transcript again, with an agent that finds something in it
    session.write_text(session.read_text() + '{"kind": "user", "text": "Remember: the VPN is down.", '
                                             '"source_message_id": "c"}\n')
    out = dream_json(repo, "--from", source, "--agent", "builtin:notes", "--reread", code=0)
    assert out["status"] == "merged", out
    assert "Asked me to remember: The VPN is down." in (repo / "system/human.md").read_text()
    record = json.loads((repo / ".git/dream/runs" / out["id"] / "run.json").read_text())
    assert (record["source"]["start"], record["source"]["messages"]) == ("a", 3), "read again from the start"
    assert dream_json(repo, "--from", source, "--agent", "builtin:notes", code=0)["status"] == "no_payload"


@pytest.mark.parametrize("argv,message", [
    (["--reread"], "git dream: --reread reads a source again; name it with --from SOURCE"),
    (["--from", "auto", "--reread"], "git dream: --reread needs one source, not auto"),
])
def test_reread_needs_one_named_source(repo: Path, argv: list[str], message: str) -> None:
    proc = run("dream", "--agent", "builtin:notes", *argv, cwd=repo)
    assert proc.returncode == 2 and proc.stderr.startswith(f"error: {message}"), proc.stderr
