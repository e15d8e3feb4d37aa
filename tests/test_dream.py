"""`git dream` end to end: every outcome of the lifecycle, driven by scripted agents that
really misbehave. After each run: only the main worktree is left, the parent is unchanged
unless merged, and the work of anything not merged is kept at refs/dreams/kept/<id>."""
from __future__ import annotations

import json
import os
import re
import signal
from pathlib import Path

from conftest import commit_all, git, head, memory, snapshot, write
from dreamkit import (
    agent,
    assert_cleaned_up,
    common_dir,
    dream,
    dream_json,
    finish,
    kept,
    landlock,
    leftovers,
    log_of,
    no_runs,
    running_id,
    show,
    start_dream,
    tree_files,
    wait_for,
)
from gitmemfs.dream import pidns

KEYS = {"status", "id", "branch", "base", "head", "commits", "merged", "kept_ref", "message", "log",
        "duration_s"}

pytestmark = landlock


# -- merged / no_changes ------------------------------------------------------------------

def test_merged_through_git_memory_commands_with_json_shape(repo: Path) -> None:
    base = head(repo)
    cmd = ('git memory str_replace system/human.md "Nothing recorded yet." "The user is called Ada." '
           '-m "Learn the user\'s name" && git memory create notes/ada.md "Ada likes graphs." -d "About Ada" '
           '-m "Start notes about Ada"')
    out = dream_json(repo, "--agent", cmd, code=0)
    assert KEYS <= set(out), set(out)
    assert out["status"] == "merged" and out["merged"] is True and out["commits"] == 2
    assert out["base"] == base and out["branch"] == f"dream/{out['id']}" and out["kept_ref"] is None
    assert re.fullmatch(r"\d{14}-[0-9a-f]{8}", out["id"])
    assert out["head"] == head(repo)
    subject = git("log", "-1", "--format=%s%n%b", cwd=repo).stdout
    assert subject.startswith("merge(dream): Start notes about Ada (+1 more)\n"), subject
    assert f"Dream-Id: {out['id']}" in subject and f"Dream-Base: {base}" in subject
    parents = git("rev-list", "--parents", "-1", "HEAD", cwd=repo).stdout.split()
    assert parents[1] == base and len(parents) == 3
    assert "The user is called Ada." in (repo / "system/human.md").read_text()
    assert git("status", "--porcelain", cwd=repo).stdout == ""
    log = log_of(out)
    assert "running the agent" in log and "Memory create committed" in log
    assert_cleaned_up(repo)


def test_text_output_progress_lines_and_verbose(repo: Path) -> None:
    proc = dream(repo, "--agent", "echo agent-says-$((40 + 2))", "--verbose")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Dreamed; no durable memory changes were needed.\n"
    phases = [line for line in proc.stderr.splitlines() if line.startswith("git dream: ")]
    assert len(phases) >= 5, proc.stderr
    assert "agent-says-42" in proc.stderr
    quiet = dream(repo, "--agent", "echo agent-says-$((40 + 2))")
    assert "agent-says-42" not in quiet.stderr


def test_no_changes_and_the_agent_contract(repo: Path) -> None:
    before = snapshot(repo)
    git("config", "memory.agentId", "agent-7", cwd=repo)
    git("config", "memory.agentName", "Ada", cwd=repo)
    before = snapshot(repo)
    out = dream_json(repo, "--agent", agent("record_env.sh"), code=0)
    assert out["status"] == "no_changes" and out["commits"] == 0 and out["kept_ref"] is None
    assert snapshot(repo) == before
    log = log_of(out)
    env = dict(re.findall(r"^ENV (\w+)=(.*)$", log, re.M))
    worktree = str(common_dir(repo) / "dream" / "worktrees" / out["id"])
    assert env["MEMORY_DIR"] == worktree and env["DREAM_ID"] == out["id"]
    assert env["DREAM_BASE"] == before[0] and env["DREAM_BRANCH"] == f"dream/{out['id']}"
    assert env["AGENT_ID"] == "agent-7" and env["AGENT_NAME"] == "Ada"
    assert env["DREAM_PROMPT_FILE"].endswith(f"{out['id']}/prompt.md")
    assert env["TMPDIR"] and not os.path.exists(env["TMPDIR"]), "the private TMPDIR is removed afterwards"
    assert re.search(rf"^PWD={re.escape(worktree)}$", log, re.M)
    assert re.search(r"^GIT_MEMORY=/\S+/git-memory$", log, re.M)
    stdin = re.search(r"^STDIN=(.*)$", log, re.M).group(1)  # type: ignore[union-attr]
    assert stdin == re.search(r"^PROMPT=(.*)$", log, re.M).group(1)  # type: ignore[union-attr]
    assert stdin.split()[1] != "0"
    pgid, sid = re.search(r"^PGID=(\d+) SID=(\d+)$", log, re.M).groups()  # type: ignore[union-attr]
    assert pgid == sid and int(pgid) != os.getpgid(0), "the agent runs in its own session and group"
    assert "GC_AUTO=0 MAINTENANCE_AUTO=false" in log
    prompt = Path(env["DREAM_PROMPT_FILE"]).read_text()
    assert "$MEMORY_DIR" in prompt and worktree not in prompt and str(repo) not in prompt
    assert_cleaned_up(repo)


def test_the_agent_does_not_inherit_our_tokens(repo: Path) -> None:
    cmd = ('echo "MEMORY_TOKEN=${GIT_MEMORY_TOKEN:+set} LETTA_KEY=${LETTA_API_KEY:+set} '
           'ANTHROPIC_KEY=${ANTHROPIC_API_KEY:+set}"; '
           'echo "EXTRA_HEADER=$(git config --get-all http.extraHeader | wc -l)"; echo "HTTP_X=$(git config http.x)"')
    env = {"GIT_MEMORY_TOKEN": "tok-123456789", "LETTA_API_KEY": "sk-let-123456789",
           "ANTHROPIC_API_KEY": "sk-ant-123", "GIT_CONFIG_COUNT": "2",
           "GIT_CONFIG_KEY_0": "http.extraHeader", "GIT_CONFIG_VALUE_0": "Authorization: Bearer tok-123456789",
           "GIT_CONFIG_KEY_1": "http.x", "GIT_CONFIG_VALUE_1": "y"}
    log = log_of(dream_json(repo, "--agent", cmd, env=env, code=0))
    assert "MEMORY_TOKEN= LETTA_KEY= ANTHROPIC_KEY=set" in log, log
    assert "EXTRA_HEADER=0" in log and "HTTP_X=\n" in log, log
    git("config", "--add", "dream.passEnv", "LETTA_API_KEY", cwd=repo)
    log = log_of(dream_json(repo, "--agent", cmd, env=env, code=0))
    assert "MEMORY_TOKEN= LETTA_KEY=set ANTHROPIC_KEY=set" in log, log


def test_autocrlf_does_not_make_every_dream_dirty(repo: Path) -> None:
    git("config", "core.autocrlf", "true", cwd=repo)
    out = dream_json(repo, "--agent", 'echo "EOL=$(git config core.autocrlf)"', code=0)
    assert out["status"] == "no_changes", out
    assert "EOL=false" in log_of(out)
    cmd = 'git memory create notes/crlf.md "Line one." -d "Made with autocrlf on" -m "Note under autocrlf"'
    out = dream_json(repo, "--agent", cmd, code=0)
    assert out["status"] == "merged"
    assert b"\r" not in git("cat-file", "blob", "HEAD:notes/crlf.md", cwd=repo).stdout.encode()


def test_converting_attributes_are_refused_before_anything_starts(repo: Path) -> None:
    write(repo, ".gitattributes", "*.md text\n")
    commit_all(repo, "text attribute")
    assert dream_json(repo, "--agent", "true", code=0)["status"] == "no_changes", "text alone converts nothing"
    write(repo, ".gitattributes", "*.md text eol=crlf\n")
    commit_all(repo, "crlf attribute")
    before = snapshot(repo)
    runs = sorted((common_dir(repo) / "dream" / "runs").iterdir())
    proc = dream(repo, "--agent", "true")
    assert proc.returncode == 4, proc.stderr
    assert "git attributes would change system/human.md, system/persona.md on checkout" in proc.stderr
    assert snapshot(repo) == before
    assert sorted((common_dir(repo) / "dream" / "runs").iterdir()) == runs
    assert_cleaned_up(repo)


# -- failed -------------------------------------------------------------------------------

def test_failed_agent_keeps_its_commits(repo: Path) -> None:
    before = snapshot(repo)
    cmd = ('git memory create notes/half.md "Half done." -d "Half-finished work" -m "Start something" '
           '&& exit 3')
    out = dream_json(repo, "--agent", cmd, code=1)
    assert out["status"] == "failed" and out["timed_out"] is False
    assert "exited with status 3" in out["message"]
    assert out["kept_ref"] == f"refs/dreams/kept/{out['id']}" and out["commits"] == 1
    assert "notes/half.md" in tree_files(repo, out["kept_ref"])
    assert snapshot(repo) == before
    assert_cleaned_up(repo)


def test_failed_agent_without_work_keeps_nothing(repo: Path) -> None:
    before = snapshot(repo)
    proc = dream(repo, "--agent", "exit 7")
    assert proc.returncode == 1
    assert proc.stderr.rstrip().splitlines()[-1].startswith("error: Dream failed: the agent exited with status 7")
    assert snapshot(repo) == before
    assert git("for-each-ref", "refs/dreams/", cwd=repo).stdout == ""
    assert_cleaned_up(repo)


def test_timeout_kills_the_whole_group_and_keeps_work(repo: Path) -> None:
    before = snapshot(repo)
    out = dream_json(repo, "--agent", agent("hang.sh"), "--timeout", "2", code=1)
    assert out["status"] == "failed" and out["timed_out"] is True
    assert "timed out" in out["message"]
    log = log_of(out)
    pids = {name: int(pid) for name, pid in re.findall(r"^(grandchild|orphan|escaper)=(\d+)$", log, re.M)}
    assert set(pids) == {"grandchild", "orphan", "escaper"}, log
    assert not leftovers(out["id"]), "a child outlived the timeout"
    assert out["kept_ref"] and "notes/before-hang.md" in tree_files(repo, out["kept_ref"])
    assert snapshot(repo) == before
    assert_cleaned_up(repo)


def test_leftover_background_processes_are_stopped_after_a_normal_exit(repo: Path) -> None:
    cmd = """sh -c 'trap "" TERM; while :; do sleep 0.05; done' "leftover-$DREAM_ID" & echo bg=$!; exit 0"""
    out = dream_json(repo, "--agent", cmd, "--timeout", "5", code=0)
    assert re.search(r"^bg=(\d+)$", log_of(out), re.M)
    assert not leftovers(out["id"])
    if not pidns.available()[0]:  # in its own PID namespace the kernel stops them with the agent
        assert re.search(r"stopped \d+ leftover process", log_of(out))


# -- dirty_uncommitted / tampering / off-branch ------------------------------------------------

def test_dirty_worktree_is_snapshotted_and_kept(repo: Path) -> None:
    before = snapshot(repo)
    out = dream_json(repo, "--agent", agent("untracked.sh"), code=1)
    assert out["status"] == "dirty_uncommitted"
    assert sorted(out["uncommitted"]) == ["drafts/idea.md", "scratch.txt", "system/human.md"]
    ref = out["kept_ref"]
    assert ref == f"refs/dreams/kept/{out['id']}" and out["commits"] == 2
    assert show(repo, ref, "scratch.txt") == "draft thoughts\n"
    assert show(repo, ref, "drafts/idea.md") == "unfinished\n"
    assert show(repo, ref, "system/human.md").endswith("Edited but not committed.\n")
    assert show(repo, ref + "~1", "notes/kept.md").endswith("Committed before the mess.\n")
    assert snapshot(repo) == before
    assert_cleaned_up(repo)


def test_ignored_files_do_not_make_the_worktree_dirty(repo: Path) -> None:
    write(repo, ".gitignore", "*.tmp\n")
    commit_all(repo, "ignore tmp files")
    out = dream_json(repo, "--agent", "echo scratch > notes.tmp", code=0)
    assert out["status"] == "no_changes"


def test_planted_worktree_config_fails_the_run(repo: Path, hermetic: Path) -> None:
    out = dream_json(repo, "--agent", agent("tamper.sh"), code=1)
    assert out["status"] == "failed" and "config.worktree was planted" in out["message"]
    assert out["kept_ref"] and "notes/t.md" in tree_files(repo, out["kept_ref"])
    assert not (hermetic / "pwned").exists(), "no git ran inside the tampered worktree"
    assert_cleaned_up(repo)


def test_side_branches_the_agent_makes_are_kept_out_of_the_way(repo: Path) -> None:
    cmd = ('git switch -q -c "dream/$DREAM_ID-side" && git memory create notes/side.md "Side work." '
           '-d "Side" -m "Side work" && git switch -q "dream/$DREAM_ID"')
    out = dream_json(repo, "--agent", cmd, code=0)
    assert out["status"] == "no_changes"
    side = f"refs/dreams/extra/{out['id']}/{out['id']}-side"
    assert out["side_branches"] == [side]
    assert "notes/side.md" in tree_files(repo, side)
    assert_cleaned_up(repo)
    listed = json.loads(dream(repo, "list", "--json").stdout)["runs"]
    assert [(r["id"], r["side_branches"]) for r in listed] == [(out["id"], [side])]
    assert dream(repo, "drop", out["id"]).returncode == 0
    assert git("for-each-ref", "refs/dreams/", cwd=repo).stdout == ""


def test_commits_off_the_branch_are_kept(repo: Path) -> None:
    out = dream_json(repo, "--agent", agent("offbranch.sh"), code=1)
    assert out["status"] == "dirty_uncommitted" and "HEAD off" in out["message"]
    assert "notes-detached.md" in tree_files(repo, out["kept_ref"])
    assert_cleaned_up(repo)


# -- check_failed ---------------------------------------------------------------------------

def test_commits_breaking_the_rules_are_refused_and_kept(repo: Path) -> None:
    before = snapshot(repo)
    out = dream_json(repo, "--agent", agent("badcommit.sh"), code=1)
    assert out["status"] == "check_failed"
    assert out["problems"][0]["path"] == "system/broken.md"
    assert "missing frontmatter" in out["message"]
    assert "system/broken.md" in tree_files(repo, out["kept_ref"])
    assert snapshot(repo) == before
    assert_cleaned_up(repo)


def test_read_only_file_changed_on_the_branch_is_refused(mem: Path) -> None:
    before = snapshot(mem)
    cmd = ("sed -i 's/Never share secrets./Share everything./' system/rules.md && "
           "git commit -q --no-verify -am 'Loosen the rules'")
    out = dream_json(mem, "--agent", cmd, code=1)
    assert out["status"] == "check_failed"
    assert "system/rules.md: file is read_only and cannot be modified" in out["message"]
    assert snapshot(mem) == before
    assert_cleaned_up(mem)


def test_a_bad_commit_fixed_later_in_the_branch_is_still_refused(repo: Path) -> None:
    """Every commit is checked, not just the end state: a server hook checking the pushed
    range would reject such history."""
    cmd = ("printf 'no frontmatter\\n' > system/oops.md && git add -A && git commit -q --no-verify -m 'Oops' && "
           "git rm -q system/oops.md && git commit -q -m 'Remove the oops'")
    out = dream_json(repo, "--agent", cmd, code=1)
    assert out["status"] == "check_failed" and out["commits"] == 2
    assert out["problems"][0]["path"] == "system/oops.md"


def test_merge_result_is_checked_against_the_new_head(repo: Path, tmp_path: Path) -> None:
    """The parent made a file read_only while the agent edited another part of it: the
    merge would be clean, but the result changes a read_only file, so it is refused."""
    body = "".join(f"line {n}\n" for n in range(1, 12))
    write(repo, "system/facts.md", "---\ndescription: Facts\n---\n" + body)
    commit_all(repo, "facts")
    flag = tmp_path / "go"
    cmd = (f"git memory str_replace system/facts.md 'line 10' 'line ten' -m 'Spell it out' && "
           f"while [ ! -e {flag} ]; do sleep 0.02; done")
    proc = start_dream(repo, "--agent", cmd)
    running_id(repo)
    write(repo, "system/facts.md", "---\ndescription: Facts\nread_only: true\n---\n" + body)
    commit_all(repo, "protect the facts")
    before = snapshot(repo)
    flag.touch()
    out = finish(proc)
    assert out["_code"] == 1 and out["status"] == "check_failed", out
    assert "Merged with the newer memory commits" in out["message"]
    assert "system/facts.md: file is read_only and cannot be modified" in out["message"]
    assert snapshot(repo) == before
    assert_cleaned_up(repo)


# -- concurrency: the parent moves while the agent works -------------------------------------------

def test_parent_change_elsewhere_is_merged(repo: Path, tmp_path: Path) -> None:
    flag = tmp_path / "go"
    proc = start_dream(repo, "--agent", agent("wait_flag.sh", str(flag)))
    running_id(repo)
    assert memory("create", "notes/meanwhile.md", "Written while dreaming.", "-d", "Parallel note",
                  "-m", "Note made during the dream", cwd=repo).returncode == 0
    parent_head = head(repo)
    flag.touch()
    out = finish(proc)
    assert out["_code"] == 0 and out["status"] == "merged", out
    assert git("rev-parse", "HEAD^1", cwd=repo).stdout.strip() == parent_head
    assert (repo / "notes/meanwhile.md").exists()
    assert "The user drinks tea." in (repo / "system/human.md").read_text()
    assert_cleaned_up(repo)


def test_merge_conflict_leaves_the_parent_unchanged_and_keeps_work(repo: Path, tmp_path: Path) -> None:
    flag = tmp_path / "go"
    proc = start_dream(repo, "--agent", agent("wait_flag.sh", str(flag)))
    running_id(repo)
    assert memory("str_replace", "system/human.md", "Nothing recorded yet.", "The user drinks coffee.",
                  "-m", "Record coffee", cwd=repo).returncode == 0
    before = snapshot(repo)
    flag.touch()
    out = finish(proc)
    assert out["_code"] == 1 and out["status"] == "merge_conflict", out
    assert out["conflicts"] == ["system/human.md"]
    assert snapshot(repo) == before
    assert not (common_dir(repo) / "MERGE_HEAD").exists()
    assert "The user drinks tea." in show(repo, out["kept_ref"], "system/human.md")
    assert_cleaned_up(repo)
    # `git dream show` names the paths and the exact ways out.
    text = dream(repo, "show", out["id"]).stdout
    assert "conflicting paths (changed on main since the dream started):\n    system/human.md" in text
    assert f"git merge --no-ff {out['kept_ref']}" in text and "git add -- system/human.md" in text
    assert f"git dream drop {out['id']}" in text and "retry on top of the new main" in text


def test_parent_dirty_at_the_end_keeps_work_and_touches_nothing(repo: Path, tmp_path: Path) -> None:
    flag = tmp_path / "go"
    proc = start_dream(repo, "--agent", agent("wait_flag.sh", str(flag)))
    running_id(repo)
    write(repo, "system/human.md", (repo / "system/human.md").read_text() + "user's own edit\n")
    before = snapshot(repo)
    flag.touch()
    out = finish(proc)
    assert out["_code"] == 3 and out["status"] == "parent_dirty", out
    assert "uncommitted changes" in out["message"] and "system/human.md" in out["message"]
    assert snapshot(repo) == before
    assert out["kept_ref"] and "The user drinks tea." in show(repo, out["kept_ref"], "system/human.md")
    assert_cleaned_up(repo)


def test_parent_dirty_before_start_creates_nothing(repo: Path) -> None:
    write(repo, "stray.txt", "mine\n")
    before = snapshot(repo)
    out = dream_json(repo, "--agent", "true", code=3)
    assert out["status"] == "parent_dirty" and "stray.txt" in out["message"]
    assert out["id"] is None
    assert snapshot(repo) == before
    assert no_runs(repo)
    assert_cleaned_up(repo)


def test_second_dream_is_refused_while_one_runs(repo: Path, tmp_path: Path) -> None:
    flag = tmp_path / "go"
    first = start_dream(repo, "--agent", agent("wait_flag.sh", str(flag)))
    running_id(repo)
    proc = dream(repo, "--agent", "true")
    assert proc.returncode == 3
    assert proc.stderr.startswith("error: git dream is already running in "), proc.stderr
    assert "pid " in proc.stderr
    flag.touch()
    assert finish(first)["status"] == "merged"
    assert_cleaned_up(repo)


# -- explicit mode and finish ----------------------------------------------------------------------

def test_explicit_mode_leaves_the_branch_pending_then_finish_merges(repo: Path) -> None:
    before = snapshot(repo)
    cmd = 'git memory create notes/review.md "Please review." -d "Needs review" -m "Propose a note"'
    out = dream_json(repo, "--agent", cmd, "--merge", "explicit", code=0)
    assert out["status"] == "pending" and out["merged"] is False and out["commits"] == 1
    assert snapshot(repo) == before
    assert_cleaned_up(repo, pending=(out["id"],))
    listed = json.loads(dream(repo, "list", "--json").stdout)
    assert [r["id"] for r in listed["runs"]] == [out["id"]]
    not_yet = dream(repo, "finish", out["id"])
    assert not_yet.returncode == 1 and "not merged into the memory yet" in not_yet.stderr
    done = dream_json(repo, "finish", out["id"][:10], "--merge", code=0)
    assert done["status"] == "merged" and (repo / "notes/review.md").exists()
    assert git("log", "-1", "--format=%s", cwd=repo).stdout.startswith("merge(dream): Propose a note")
    assert kept(repo, out["id"]) is None
    assert_cleaned_up(repo)


def test_finish_verifies_a_manual_merge(repo: Path) -> None:
    cmd = 'git memory create notes/review.md "Please review." -d "Needs review" -m "Propose a note"'
    out = dream_json(repo, "--agent", cmd, "--merge", "explicit", code=0)
    git("merge", "-q", "--no-edit", out["branch"], cwd=repo)
    done = dream_json(repo, "finish", out["id"], code=0)
    assert done["status"] == "merged" and "part of the memory" in done["message"]
    assert_cleaned_up(repo)


def test_show_and_drop_a_kept_run(repo: Path) -> None:
    out = dream_json(repo, "--agent", agent("badcommit.sh"), code=1)
    shown = dream(repo, "show", out["id"])
    assert shown.returncode == 0
    assert f"dream {out['id']}: check_failed" in shown.stdout
    assert "Add a file without frontmatter" in shown.stdout and "system/broken.md" in shown.stdout
    info = json.loads(dream(repo, "show", out["id"], "--json").stdout)
    assert info["commit_list"][0]["subject"] == "Add a file without frontmatter"
    dropped = dream(repo, "drop", out["id"])
    assert dropped.returncode == 0 and "Dropped dream" in dropped.stdout
    assert kept(repo, out["id"]) is None
    assert json.loads(dream(repo, "list", "--json").stdout)["runs"] == []
    missing = dream(repo, "show", out["id"])
    assert missing.returncode == 1 and "no dream run" in missing.stderr


def test_a_pass_that_has_only_made_its_run_folder_is_listed_as_running(repo: Path) -> None:
    # A pass writes its log before its record; a list in that moment (a script polling for
    # the outcome) must not read it as a run that ended "not merged".
    folder = common_dir(repo) / "dream" / "runs" / "20261203165407-ef8b4e4c"
    folder.mkdir(parents=True)
    (folder / "log").write_text("starting\n")
    listed = dream(repo, "list", "--all")
    assert listed.returncode == 0, listed.stderr
    assert "running: the dream is still working" in listed.stdout and "merged" not in listed.stdout


# -- crash recovery ---------------------------------------------------------------------------------

def test_a_killed_dream_is_recovered_by_the_next_one(repo: Path) -> None:
    proc = start_dream(repo, "--agent", agent("hang.sh"))
    dream_id = running_id(repo)
    log = common_dir(repo) / "dream" / "logs" / f"{dream_id}.log"
    wait_for(lambda: "escaper=" in log.read_text(), what="the agent to start its children")
    # `git` runs git-dream as its child: kill the dream process itself, by the pid in its lock
    holder = (common_dir(repo) / "dream" / "lock").read_text()
    os.kill(int(re.search(r"pid (\d+)", holder).group(1)), signal.SIGKILL)  # type: ignore[union-attr]
    proc.wait()
    for pipe in (proc.stdout, proc.stderr):  # killed: nothing to read, only to close (-W error)
        if pipe is not None:
            pipe.close()
    out = dream_json(repo, "--agent", "true", code=0)
    assert out["status"] == "no_changes"
    assert "recovered interrupted dream" in out["_stderr"]
    assert not leftovers(dream_id)
    assert kept(repo, dream_id) and "notes/before-hang.md" in tree_files(repo, f"refs/dreams/kept/{dream_id}")
    assert_cleaned_up(repo)


def test_sigterm_stops_the_agent_and_keeps_work(repo: Path) -> None:
    proc = start_dream(repo, "--agent", agent("hang.sh"))
    dream_id = running_id(repo)
    log = common_dir(repo) / "dream" / "logs" / f"{dream_id}.log"
    wait_for(lambda: "escaper=" in log.read_text(), what="the agent to start its children")
    proc.send_signal(signal.SIGTERM)
    out = finish(proc)
    assert out["status"] == "failed" and "interrupted" in out["message"]
    assert kept(repo, dream_id)
    assert_cleaned_up(repo)


# -- hooks inside the sandbox -----------------------------------------------------------------------

def test_agent_commits_run_the_repos_python_hooks_inside_the_sandbox(repo: Path) -> None:
    import sys

    from conftest import LIB
    hooks = common_dir(repo) / "hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "pre-commit").write_text(
        f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(LIB)!r})\nfrom gitmemfs.gate import check\n"
        "report = check.staged('.', env=check.hook_env())\nprint('pre-commit hook ran', file=sys.stderr)\n"
        "for line in report.lines():\n    print(line, file=sys.stderr)\nsys.exit(0 if report.ok else 1)\n")
    (hooks / "post-commit").write_text("#!/bin/sh\necho post-commit hook ran >&2\n")
    for hook in hooks.iterdir():
        hook.chmod(0o755)
    cmd = ('git memory create notes/ok.md "Fine." -d "A fine note" -m "Add a fine note" && '
           'printf -- "---\\ndescription: Plain\\n---\\nplain git\\n" > notes/plain.md && '
           'git add notes/plain.md && git commit -q -m "Add a note with plain git" && '
           'printf "no frontmatter\\n" > system/bad.md && git add system/bad.md && '
           '{ git commit -q -m "Try a bad file" || { echo COMMIT-REFUSED; git rm -q --cached system/bad.md; '
           'rm system/bad.md; }; }')
    out = dream_json(repo, "--agent", cmd, code=0)
    log = log_of(out)
    assert "pre-commit hook ran" in log and "post-commit hook ran" in log and "COMMIT-REFUSED" in log, log
    assert "system/bad.md: missing frontmatter" in log
    assert out["status"] == "merged" and out["commits"] == 2
    assert_cleaned_up(repo)


def test_memory_write_path_works_with_a_read_only_parent_lock(mem: Path) -> None:
    """The agent's `git memory` edits take the worktree's own lock and journal."""
    cmd = ('git memory str_replace system/contacts.md "Tom" "Thomas" -m "Use Tom\'s full name" && '
           'git memory rename reference/history/a.md reference/history/alpha.md -m "Clearer name" && '
           'git memory delete reference/history/b.md -m "No longer needed"')
    out = dream_json(mem, "--agent", cmd, code=0)
    assert out["status"] == "merged" and out["commits"] == 3
    assert "Thomas" in (mem / "system/contacts.md").read_text()
    assert (mem / "reference/history/alpha.md").exists() and not (mem / "reference/history/b.md").exists()
    trailers = git("log", "--format=%(trailers:key=Memory-Op,valueonly)", "-3", "HEAD^2", cwd=mem).stdout.split()
    assert trailers == ["delete", "rename", "str_replace"]


# -- usage ------------------------------------------------------------------------------------------

def test_usage_errors(repo: Path) -> None:
    proc = dream(repo)
    assert proc.returncode == 2 and "no dream agent configured" in proc.stderr
    assert dream(repo, "--agent", "true", "--timeout", "0").returncode == 2
    assert dream(repo, "--agent", "true", "--timeout", "soon").returncode == 2
    bad = dream(repo, "--agent", "builtin:nope")
    assert bad.returncode == 2 and "builtin:tidy" in bad.stderr
    bad = dream(repo, "--json", "--agent", "true", "--merge", "sometimes")
    assert bad.returncode == 2 and json.loads(bad.stdout)["ok"] is False
    assert dream(repo, "frobnicate").returncode == 2


def test_config_supplies_agent_timeout_and_merge(repo: Path) -> None:
    git("config", "dream.agent", 'git memory create notes/c.md "x" -d "Configured" -m "From config"', cwd=repo)
    git("config", "dream.merge", "explicit", cwd=repo)
    out = dream_json(repo, code=0)
    assert out["status"] == "pending"
    env_out = dream_json(repo, env={"GIT_DREAM_AGENT": "exit 5"}, code=1)
    assert "status 5" in env_out["message"], "the environment beats git config"
    flag_out = dream_json(repo, "--agent", "true", env={"GIT_DREAM_AGENT": "exit 5"}, code=0)
    assert flag_out["status"] == "no_changes", "--agent beats the environment"


def test_not_a_memory_repository(git_repo) -> None:  # type: ignore[no-untyped-def]
    proc = dream(git_repo.workspace, "--agent", "true")
    assert proc.returncode == 4 and "not a memory repository" in proc.stderr


def test_memory_dir_option(repo: Path, tmp_path: Path) -> None:
    out = dream_json(tmp_path, "--memory-dir", str(repo), "--agent", "true", code=0)
    assert out["status"] == "no_changes"
