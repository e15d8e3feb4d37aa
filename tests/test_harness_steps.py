"""The step trigger's two quick parts: dream.trigger and dream.every read from git's
files without starting git (`trigger.from_files`, held here to `trigger.resolve`,
which asks git), and the step counter, which concurrent Stop hooks never lose a
step of."""
from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from conftest import git
from dreamkit import common_dir
from gitmemfs.dream import trigger


def _git_answer(root: Path, project: Path | None) -> dict[str, str]:
    return {k: v for k, (v, _) in trigger.resolve(str(root), str(project) if project else None).items()}


# (global, project, memory): the dream.* lines of each file; None for no project repository.
CASES = [
    ([], [], []),
    (["trigger = steps"], [], []),
    (["trigger = steps", "every = 7"], ["every = 3"], []),
    (["trigger = steps"], ["trigger = compaction"], ["trigger = commits", "every = 2"]),
    (["trigger = step-count, compaction-event"], ["trigger = nonsense"], []),  # invalid keeps the one below
    (["trigger = steps"], [], ["trigger = nonsense", "every = ten"]),  # a bad every is kept, refused at use
    (["every = 4", "every = 5"], ["trigger  =   steps   # a comment"], ["every"]),  # a bare key
    (["trigger = off"], ["trigger = steps", "trigger = junk"], ["every = 0"]),
    ([], None, ["trigger = compaction", "every = 25"]),
]


def _section(lines: list[str]) -> str:
    return "[dream]\n" + "".join(f"\t{line}\n" for line in lines) if lines else ""


@pytest.mark.parametrize("case", range(len(CASES)))
def test_settings_read_from_the_files_are_what_git_resolves(repo: Path, tmp_path: Path, hermetic: Path,
                                                            case: int) -> None:
    global_lines, project_lines, memory_lines = CASES[case]
    with open(hermetic / ".gitconfig", "a") as fh:
        fh.write(_section(global_lines))
    with open(repo / ".git" / "config", "a") as fh:
        fh.write(_section(memory_lines))
    project = tmp_path / "project"
    project.mkdir()
    if project_lines is not None:
        git("init", "-q", str(project), cwd=tmp_path)
        with open(project / ".git" / "config", "a") as fh:
            fh.write(_section(project_lines))
    inner = project / "src" / "deep"
    inner.mkdir(parents=True)
    for where in (None, project, inner, repo, repo / "system"):
        fast = trigger.from_files(str(repo), str(where) if where else None)
        assert fast is not None, f"the plain case is read from the files ({where})"
        assert fast == _git_answer(repo, where), where
        assert trigger.settings(str(repo), str(where) if where else None) == fast


def test_what_the_files_cannot_settle_is_asked_of_git(repo: Path, tmp_path: Path, hermetic: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    git("init", "-q", str(project), cwd=tmp_path)
    extra = tmp_path / "extra.cfg"
    extra.write_text("[dream]\n\tevery = 9\n")
    # An include in the project's file: git's --file read ignores it, the file reader is not sure.
    with open(project / ".git" / "config", "a") as fh:
        fh.write(f"[include]\n\tpath = {extra}\n[dream]\n\ttrigger = compaction\n")
    assert trigger.from_files(str(repo), str(project)) is None
    assert trigger.settings(str(repo), str(project)) == _git_answer(repo, project) == {"dream.trigger": "compaction"}
    # A quoted value in the memory's own config.
    git("config", "dream.trigger", "steps # not a comment", cwd=repo)
    with open(repo / ".git" / "config") as fh:
        assert '"' in fh.read()
    assert trigger.from_files(str(repo)) is None
    assert trigger.settings(str(repo)) == _git_answer(repo, None)
    git("config", "dream.trigger", "steps", cwd=repo)
    # `git -c` style settings of the calling process: git is run scrubbed of them, so the
    # files alone give its answer.
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "dream.trigger")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "off")
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'dream.every'='3'")
    assert trigger.from_files(str(repo)) == _git_answer(repo, None) == {"dream.trigger": "steps"}


def test_a_project_outside_any_repository_is_settled_without_git(repo: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    git("config", "dream.trigger", "steps", cwd=repo)
    alone = tmp_path / "alone" / "deep"
    alone.mkdir(parents=True)
    odd = tmp_path / "odd"
    (odd / "sub").mkdir(parents=True)
    (odd / "HEAD").write_text("ref: refs/heads/main\n")  # might be a git directory: git decides
    expected = {p: _git_answer(repo, p) for p in (alone, odd / "sub")}
    asked: list[tuple[str, ...]] = []
    real = trigger._git

    def counted(root: str, *args: str):  # type: ignore[no-untyped-def]
        asked.append(args)
        return real(root, *args)

    monkeypatch.setattr(trigger, "_git", counted)
    assert trigger.from_files(str(repo), str(alone)) == expected[alone] == {"dream.trigger": "steps"}
    assert asked == []
    assert trigger.from_files(str(repo), str(odd / "sub")) == expected[odd / "sub"]
    assert [a[0] for a in asked] == ["rev-parse"]


def test_concurrent_stop_hooks_lose_no_step(repo: Path, tmp_path: Path) -> None:
    """Every step is due (dream.every 1) and none can start (the memory is dirty), so
    each hook takes the count and hands it back: concurrent hooks must add to it, not
    write their own count over another's."""
    git("config", "dream.trigger", "steps", cwd=repo)
    git("config", "dream.every", "1", cwd=repo)
    (repo / "scratch.txt").write_text("not committed\n")
    transcript = tmp_path / "session.jsonl"
    transcript.write_text(json.dumps({"type": "user", "message": {"role": "user", "content": "hi"}}) + "\n")
    payload = json.dumps({"session_id": "s1", "transcript_path": str(transcript), "cwd": str(tmp_path),
                          "hook_event_name": "Stop"})
    count = 12
    procs = [subprocess.Popen(["git", "memory", "--memory-dir", str(repo), "hook", "claude-code", "stop"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              cwd=tmp_path) for _ in range(count)]
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write(payload)
        proc.stdin.close()
    answers = []
    for proc in procs:
        assert proc.wait(timeout=120) == 0, proc.stderr.read() if proc.stderr else ""
        assert proc.stdout is not None
        answers.append(proc.stdout.read())
    assert trigger.read_steps(str(common_dir(repo))) == count
    said = [json.loads(a)["systemMessage"] for a in answers if a.strip()]
    assert len(said) == 1 and "uncommitted changes" in said[0], answers  # said once, by one of them
    assert not os.path.exists(common_dir(repo) / "dream" / "logs" / "background.log"), "no dream was started"



SAY_ONCE = """
import os, sys, time
from types import SimpleNamespace
from gitmemfs.harness import events
go = sys.argv[2]
while not os.path.exists(go):
    time.sleep(0.001)
print(events.once(SimpleNamespace(common_dir=sys.argv[1]), "s1", "dirty", "said") or "-")
"""


def test_a_note_is_said_once_when_hooks_ask_at_the_same_moment(repo: Path, tmp_path: Path) -> None:
    """16 processes released at once ask to say the same note for one session: exactly
    one says it (the look and the note are made under one lock), and the file keeps it once."""
    import sys

    go = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", SAY_ONCE, str(common_dir(repo)), str(go)],
                              stdout=subprocess.PIPE, text=True) for _ in range(16)]
    time.sleep(0.5)  # all of them started and waiting
    go.write_text("")
    answers = [proc.communicate(timeout=60)[0].strip() for proc in procs]
    assert answers.count("said") == 1, answers
    lines = (common_dir(repo) / "dream" / "said").read_text().splitlines()
    assert lines == ["s1 dirty"], lines
