"""What a newcomer met (issue 24): each wrong answer or internal error, through the
real command, now one clear `error:` line (or the right answer) and nothing changed."""
from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

import pytest

from conftest import commit_all, git, head, memfile, memory, run, snapshot, write


def call(repo: Path, payload: str, *extra: str) -> tuple[int, dict, str]:
    proc = memory("--json", "call", *extra, cwd=repo, input=payload)  # stdin: no argv limit
    return proc.returncode, json.loads(proc.stdout), proc.stderr


def refused_cleanly(proc_out: str) -> None:
    assert "internal error" not in proc_out and "Traceback" not in proc_out, proc_out


# -- JSON inputs ---------------------------------------------------------------------------

def test_duplicate_keys_in_a_call_are_refused_not_last_wins(mem: Path) -> None:
    before = snapshot(mem)
    payload = ('{"command": "view", "command": "delete", "reason": "tidy", '
               '"file_path": "system/contacts.md"}')
    code, out, _ = call(mem, payload)
    assert code == 2 and not out["ok"]
    assert "the key 'command' appears twice in one object" in out["error"]
    assert snapshot(mem) == before and (mem / "system/contacts.md").exists()
    # inside a wrapped call's arguments string too
    inner = json.dumps({"name": "memory", "arguments": payload})
    code, out, _ = call(mem, inner)
    assert code == 2 and "appears twice" in out["error"]
    assert snapshot(mem) == before


@pytest.mark.parametrize("depth", [200, 1000, 100_000])
def test_deeply_nested_json_to_call_is_a_usage_error(mem: Path, depth: int) -> None:
    before = snapshot(mem)
    for payload in ("[" * depth + "]" * depth, '{"a":' * depth + "1" + "}" * depth):
        code, out, err = call(mem, payload)
        assert code == 2, out
        assert out["error"] == ("git memory call: input is not valid JSON: it nests objects and arrays "
                                "more than 64 deep")
        refused_cleanly(out["error"] + err)
    assert snapshot(mem) == before


@pytest.mark.parametrize("number,word", [("NaN", "NaN is not a JSON number"),
                                         ("Infinity", "Infinity is not a JSON number"),
                                         ("1e400", "the number 1e400 is out of range"),
                                         ("1" * 5000, "a number of 5000 digits is too long")])
def test_numbers_json_does_not_have_are_refused(mem: Path, number: str, word: str) -> None:
    before = snapshot(mem)
    code, out, _ = call(mem, '{"command":"insert","reason":"r","file_path":"system/contacts.md",'
                             f'"insert_line":{number},"insert_text":"x"}}')
    assert code == 2 and word in out["error"], out
    assert snapshot(mem) == before


@pytest.mark.parametrize("line", ["1.5", "2.9", "-0.5"])
def test_insert_line_must_be_a_whole_number(mem: Path, line: str) -> None:
    before = snapshot(mem)
    code, out, _ = call(mem, '{"command":"insert","reason":"r","file_path":"system/contacts.md",'
                             f'"insert_line":{line},"insert_text":"x"}}')
    assert code == 1 and out["error"] == (f"memory insert: 'insert_line' must be a whole number of lines, "
                                          f"got {float(line)!r}")
    assert snapshot(mem) == before
    # JSON has one number type: 2.0 is line 2
    code, out, _ = call(mem, '{"command":"insert","reason":"r","file_path":"system/contacts.md",'
                             '"insert_line":2.0,"insert_text":"Ann: +1-555-0123"}')
    assert code == 0, out
    assert (mem / "system/contacts.md").read_text().endswith("Sarah: +1-555-0100\nAnn: +1-555-0123\n"
                                                             "Tom: +1-555-0199\n")


def test_duplicate_keys_in_the_limits_file_are_refused_at_commit(tmp_path: Path) -> None:
    root = tmp_path / "root"
    assert memory("init", "--layout", "letta-root", str(root), cwd=tmp_path).returncode == 0
    # A reviewer reads the first value; Python's json would keep the second.
    write(root, ".memfs.config.json", '{"version": 1, "maxFileCharacters": 100, "maxFileCharacters": 900000}')
    git("add", "-A", cwd=root)
    before = head(root)
    proc = git("commit", "-q", "-m", "limits", cwd=root, check=False,
               env={"GIT_MEMORY_APPROVE": "constraints"})
    assert proc.returncode == 1
    assert ".memfs.config.json: is not valid JSON (the key 'maxFileCharacters' appears twice in one object; " \
           "give each key once)" in proc.stderr
    assert head(root) == before


# -- the command line ----------------------------------------------------------------------

def test_view_range_past_the_end_says_so(mem: Path) -> None:
    proc = memory("view", "system/contacts.md", "--range", "5:9", cwd=mem)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr == ("error: memory view: invalid range 5:9: system/contacts.md's body has 2 lines; "
                           "start at 1 to 2\n")
    proc = memory("view", "system/contacts.md", "--range", "2:9", cwd=mem)
    assert proc.returncode == 0 and proc.stdout == "     2\tTom: +1-555-0199\n"


@pytest.mark.parametrize("option", ["--max-lines", "--max-chars", "--max-children"])
def test_tree_refuses_a_negative_budget(mem: Path, option: str) -> None:
    proc = memory("tree", option, "-1", cwd=mem)
    assert proc.returncode == 2 and proc.stdout == ""
    assert f"error: argument {option}: expected a non-negative integer, got '-1'" in proc.stderr


def test_view_is_a_read_it_does_not_wait_for_the_writer_lock(mem: Path) -> None:
    lock = os.open(mem / ".git/memory.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a writer at work
        proc = memory("view", "system/contacts.md", cwd=mem, env={"GIT_MEMORY_LOCK_TIMEOUT": "0.2"})
        assert proc.returncode == 0, proc.stderr
        assert "Sarah: +1-555-0100" in proc.stdout
        proc = memory("view", "system/contacts.md", "-n", cwd=mem, env={"GIT_MEMORY_LOCK_TIMEOUT": "0.2"})
        assert proc.returncode == 0 and "     1\tSarah" in proc.stdout
        # (an edit does wait, and says so)
        proc = memory("delete", "system/contacts.md", "-m", "x", cwd=mem, env={"GIT_MEMORY_LOCK_TIMEOUT": "0.2"})
        assert proc.returncode == 3
    finally:
        os.close(lock)


def test_view_does_not_need_a_clean_tree(mem: Path) -> None:
    write(mem, "system/contacts.md", memfile("People I know", "Sarah: moved\n"))
    proc = memory("view", "system/contacts.md", cwd=mem)
    assert proc.returncode == 0 and "Sarah: moved" in proc.stdout


def test_update_description_keeps_the_rest_of_the_frontmatter_byte_for_byte(repo: Path) -> None:
    text = ("---\n# Who this is, for the agent (kept by a person)\n"
            "description: \"The human I work with\"   # short\n"
            "limit: 5000\n---\nBody stays.\n")
    write(repo, "system/human.md", text)
    commit_all(repo, "a person's frontmatter")
    proc = memory("update_description", "system/human.md", "The person: Sam", "-m", "name", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert (repo / "system/human.md").read_text() == text.replace('"The human I work with"', "'The person: Sam'")
    # plain in, plain out; the comment above and the key after stay
    proc = memory("update_description", "system/human.md", "Sam, the user", "-m", "again", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert (repo / "system/human.md").read_text() == text.replace('"The human I work with"', "Sam, the user")


# -- init and clone where no folder can be -------------------------------------------------

def test_init_and_clone_refuse_a_file_in_the_way(tmp_path: Path, repo: Path) -> None:
    blocker = tmp_path / "afile"
    blocker.write_text("not a folder\n")
    cases = [
        (["init", str(blocker)], f"error: memory init: {blocker} is a file, not a folder; choose a new or "
                                 "empty directory\n"),
        (["init", str(blocker / "sub" / "mem")],
         f"error: memory init: {blocker} is a file, so no folder can be made in its place or under it; "
         "choose another directory\n"),
        (["clone", str(repo), str(blocker / "copy")],
         f"error: git memory clone: {blocker} is a file, so no folder can be made in its place or under it; "
         "choose another directory\n"),
        (["clone", str(repo), str(blocker)],
         f"error: git memory clone: {blocker} exists and is not a directory; choose another DIR\n"),
    ]
    for argv, expected in cases:
        proc = memory(*argv, cwd=tmp_path)
        assert (proc.returncode, proc.stderr) == (1, expected), argv
        assert blocker.read_text() == "not a folder\n"


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc (Linux)")
def test_init_where_the_system_makes_no_folder(tmp_path: Path) -> None:
    proc = memory("init", "/proc/git-memfs-test", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.startswith("error: memory init: cannot create the folder /proc/git-memfs-test: ")
    assert proc.stderr.endswith("; choose a directory you can create and write to\n")


# -- unknown commands that have our own answer ---------------------------------------------

def test_revert_and_grep_point_at_our_commands(repo: Path) -> None:
    proc = memory("revert", "HEAD", cwd=repo)
    assert proc.returncode == 2
    assert "git memory has no revert: use git memory undo COMMIT" in proc.stderr
    assert "git revert" not in proc.stderr
    proc = memory("--json", "grep", "x", cwd=repo)
    assert json.loads(proc.stdout)["use"] == "git memory search 'text'   (--regex for a pattern)"


# -- folders planted where git-memfs keeps its own files (item 10) --------------------------

PLANTED = ["memory.lock", "memory-journal.json", "memory-journal.json.tmp"]
EDITS = {
    "cli": lambda repo: memory("str_replace", "system/contacts.md", "Sarah", "Sara", "-m", "typo", cwd=repo),
    "call": lambda repo: memory("call", json.dumps({"command": "str_replace", "reason": "typo",
                                                    "file_path": "system/contacts.md", "old_string": "Sarah",
                                                    "new_string": "Sara"}), cwd=repo),
    "patch": lambda repo: run("memory-patch", "-m", "typo", "-", cwd=repo, input=(
        "*** Begin Patch\n*** Update File: system/contacts.md\n@@\n-Sarah: +1-555-0100\n+Sara: +1-555-0100\n"
        "*** End Patch\n")),
}


@pytest.mark.parametrize("name", PLANTED)
@pytest.mark.parametrize("entry", sorted(EDITS))
def test_a_folder_planted_in_place_of_our_files_is_refused_clearly(mem: Path, name: str, entry: str) -> None:
    planted = mem / ".git" / name
    if planted.exists():
        planted.unlink()
    planted.mkdir()
    (planted / "keep").write_text("someone's\n")
    before = snapshot(mem)
    proc = EDITS[entry](mem)
    out = proc.stdout + proc.stderr
    refused_cleanly(out)
    assert proc.returncode == 4, out
    assert (f".git/{name} is a folder, but git-memfs keeps a file of its own there; nothing was changed; "
            f"look inside, then remove it (rm -r {planted}) and retry") in out
    assert snapshot(mem) == before and (planted / "keep").exists()
    (planted / "keep").unlink()
    planted.rmdir()
    proc = EDITS[entry](mem)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_view_works_on_a_read_only_mount(mem: Path, tmp_path: Path) -> None:
    import subprocess

    mount = tmp_path / "ro"
    mount.mkdir()
    done = subprocess.run(["mount", "--bind", "-o", "ro", str(mem), str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot bind-mount read-only here (needs CAP_SYS_ADMIN): {done.stderr.decode().strip()}")
    try:
        assert (mount / ".git" / "memory.lock").exists()  # there from init: a writer would open it read-write
        proc = memory("view", "system/contacts.md", cwd=mount)
        assert proc.returncode == 0, proc.stderr
        assert "Sarah: +1-555-0100" in proc.stdout
    finally:
        subprocess.run(["umount", str(mount)], check=True)


# -- the tour: every page's transcript, typed into one shell from an empty folder ---------------

def _pages_with_transcripts() -> list[Path]:
    from test_readme import DOCS, page_blocks

    return [page for page in DOCS if any(not b.skip for b in page_blocks(page))]


@pytest.mark.parametrize("page", _pages_with_transcripts(), ids=lambda p: p.name)
def test_each_page_runs_as_written_in_one_shell_from_an_empty_folder(page: Path, tmp_path: Path) -> None:
    """What a newcomer does: open a terminal in an empty home, type the page's commands
    in order (a `cd` stays in effect, nothing is prepared behind the page), and see what
    the page shows. tests/test_readme.py holds the same text to the same outputs."""
    import subprocess

    from test_readme import masked, page_blocks, pattern

    home = tmp_path / "home" / "me"
    home.mkdir(parents=True)
    (home / ".gitconfig").write_text("[user]\n\tname = Me\n\temail = me@example.com\n"
                                     "[init]\n\tdefaultBranch = main\n")
    env = {**os.environ, "HOME": str(home), "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"), "COLUMNS": "80"}
    env.pop("GIT_MEMFS_PYTHON", None)
    steps = [step for block in page_blocks(page) if not block.skip for step in block.steps]
    marker = "@@git-memfs-step@@"
    script = "exec 2>&1\ncd ~\n" + "".join(f"printf '\\n{marker}\\n'\n{command}\n" for command, _ in steps)
    proc = subprocess.run(["bash", "-c", script], cwd=home, env=env, stdout=subprocess.PIPE, text=True,
                          stdin=subprocess.DEVNULL, timeout=600)
    outputs = proc.stdout.split(f"\n{marker}\n")[1:]
    assert len(outputs) == len(steps), proc.stdout
    wrong = [f"$ {command}\n--- {page.name}\n" + "\n".join(expected) + f"\n--- typed\n{masked(out, home)}"
             for (command, expected), out in zip(steps, outputs)
             if not pattern(expected).fullmatch(masked(out, home))]
    assert not wrong, "\n".join(wrong)
