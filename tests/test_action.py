"""The composite GitHub Action at the repository root (action.yml), run the way the
runner runs it: each step's `env` with its `${{ }}` expressions evaluated against the
inputs and the event, each `run` script through `bash --noprofile --norc -eo pipefail`
in the workspace (a clone of a test memory), with the GITHUB_* variables a runner sets,
GITHUB_PATH and GITHUB_ENV carried from one step to the next. The install step really
installs the toolkit (from a copy of this checkout) into a venv of its own."""
from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_wheel import OFFLINE, _copy_source

from conftest import ROOT, commit_all, git, head, memfile, memory, write

EXPRESSION = re.compile(r"\$\{\{\s*([A-Za-z_][\w.-]*)\s*\}\}")


def evaluate(text: str, contexts: dict[str, Any]) -> str:
    """`${{ a.b.c }}` property paths, as the runner evaluates them (a missing one is '')."""
    def one(match: re.Match[str]) -> str:
        value: Any = contexts
        for part in match.group(1).split("."):
            value = value.get(part) if isinstance(value, dict) else None
        return "" if value is None else str(value)
    return EXPRESSION.sub(one, text)


class Runner:
    """One job's worth of a runner: a workspace, a temp folder kept between jobs (so the
    toolkit installs once per test module), and the steps of action.yml."""

    def __init__(self, action: Path, runner_temp: Path):
        self.action = action
        self.temp = runner_temp
        self.spec = yaml.safe_load((action / "action.yml").read_text())

    def run(self, workspace: Path, event_name: str, event: dict[str, Any],
            given: dict[str, str] | None = None) -> tuple[int, str, str]:
        """(exit status of the failing step or 0, stdout of every step, the step summary)."""
        files = workspace.parent / f"runner-{event_name}"
        files.mkdir(exist_ok=True)
        event_path = files / "event.json"
        event_path.write_text(json.dumps(event))
        paths, summary = files / "path", files / "summary.md"
        for f in (paths, files / "env", files / "output", summary):
            f.write_text("")
        inputs = {name: str(spec.get("default", "")) for name, spec in self.spec["inputs"].items()}
        inputs.update(given or {})
        contexts = {"inputs": inputs, "github": {"event": event, "event_name": event_name,
                                                  "action_path": str(self.action), "workspace": str(workspace)}}
        base = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_MEMFS", "VIRTUAL_ENV"))}
        base["PATH"] = os.pathsep.join(p for p in base["PATH"].split(os.pathsep)
                                       if p and not Path(p).resolve().is_relative_to(ROOT.resolve()))
        base.update(CI="true", GITHUB_ACTIONS="true", RUNNER_OS="Linux", RUNNER_TEMP=str(self.temp),
                    GITHUB_WORKSPACE=str(workspace), GITHUB_EVENT_NAME=event_name,
                    GITHUB_EVENT_PATH=str(event_path), GITHUB_ACTION_PATH=str(self.action),
                    GITHUB_PATH=str(paths), GITHUB_ENV=str(files / "env"), GITHUB_OUTPUT=str(files / "output"),
                    GITHUB_STEP_SUMMARY=str(summary), GITHUB_SHA=head(workspace))
        out = []
        assert self.spec["runs"]["using"] == "composite"
        for step in self.spec["runs"]["steps"]:
            assert step["shell"] == "bash" and "${{" not in step["run"], "expressions stay out of scripts"
            env = dict(base)
            added = [line for line in paths.read_text().splitlines() if line]
            env["PATH"] = os.pathsep.join([*reversed(added), base["PATH"]])
            env.update(line.split("=", 1) for line in (files / "env").read_text().splitlines() if "=" in line)
            env.update({k: evaluate(str(v), contexts) for k, v in step.get("env", {}).items()})
            script = files / "step.sh"
            script.write_text(step["run"])
            proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=workspace,
                                  env=env, capture_output=True, text=True, timeout=600)
            out.append(proc.stdout)
            if proc.returncode != 0:
                if step["name"].startswith("Install") and any(w in proc.stderr for w in OFFLINE):
                    pytest.skip("pip could not reach the package registry: " + proc.stderr[-300:])
                return proc.returncode, "".join(out) + proc.stderr, summary.read_text()
        return 0, "".join(out), summary.read_text()


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> Runner:
    action = tmp_path_factory.mktemp("action") / "git-memfs"
    _copy_source(action)  # what the runner downloads: the repository at the action's ref
    return Runner(action, tmp_path_factory.mktemp("runner-temp"))


@pytest.fixture
def pull_request(repo: Path, tmp_path: Path) -> tuple[Path, str]:
    """A memory on a server, a branch of two commits on it, and the runner's checkout of
    that branch: (the workspace, main's commit)."""
    write(repo, ".memfs.config.json", '{"version": 1, "maxFileCharacters": 400}\n')
    commit_all(repo, "limits, set by a person")
    base = head(repo)
    origin = tmp_path / "origin.git"
    git("clone", "-q", "--bare", str(repo), str(origin), cwd=tmp_path)
    work = tmp_path / "work"
    git("clone", "-q", str(origin), str(work), cwd=tmp_path)
    git("switch", "-q", "-c", "topic", cwd=work)
    return work, base


def event_for(work: Path, base: str) -> dict[str, Any]:
    return {"pull_request": {"base": {"sha": base, "ref": "main"}, "head": {"sha": head(work), "ref": "topic"}}}


def test_a_pull_request_that_breaks_the_rules_fails_with_annotations(runner: Runner,
                                                                     pull_request: tuple[Path, str]) -> None:
    work, base = pull_request
    write(work, "reference/good.md", memfile("A good note", "fine\n"))
    commit_all(work, "a good note")
    # One file, two problems: an unknown key, and over the 400 characters allowed.
    write(work, "reference/bad.md", memfile("A bad note", "x" * 500 + "\n", "colour: red"))
    bad = commit_all(work, "a bad note (--no-verify)")
    code, out, summary = runner.run(work, "pull_request", event_for(work, base))
    assert code == 1, out
    errors = [line for line in out.splitlines() if line.startswith("::error ")]
    unknown = ("::error file=reference/bad.md,line=1,title=git memory check::"
               f"{bad[:7]} reference/bad.md: unknown frontmatter key 'colour' (allowed: description read_only limit)")
    assert unknown in errors, out                                         # from the range
    assert unknown.replace(f"{bad[:7]} ", "") in errors, out              # and from the tree
    assert sum("reference/bad.md: is 5" in line and "over maxFileCharacters (400)" in line for line in errors) == 2
    assert len(errors) == 4 and "git memory check --tree " + head(work) in out
    assert "problems" in summary and f"{base}..{head(work)}" in summary


def test_a_clean_pull_request_passes_and_the_inputs_are_used(runner: Runner, pull_request: tuple[Path, str]) -> None:
    work, base = pull_request
    write(work, "reference/good.md", memfile("A good note", "fine\n"))
    commit_all(work, "a good note")
    code, out, summary = runner.run(work, "pull_request", event_for(work, base))
    assert code == 0 and "::error" not in out and "passes every check" in summary, out
    # The inputs: a range of one's own, the layout, a token budget the memory is over.
    code, out, _ = runner.run(work, "push", {"before": "0" * 40, "after": head(work)},
                              {"range": f"{base}..HEAD", "layout": "letta", "budget": "10"})
    assert code == 1 and f"git memory check {base}..HEAD" in out and "git memory tokens --budget 10" in out, out
    assert git("config", "memory.layout", cwd=work).stdout.strip() == "letta"
    # A push that opens a branch (before is all zeros) checks the tree only.
    code, out, _ = runner.run(work, "push", {"before": "0" * 40, "after": head(work)})
    assert code == 0 and "git memory check --tree HEAD" in out and "git memory check " + base not in out, out


def test_a_hostile_file_name_cannot_start_a_workflow_command(runner: Runner, pull_request: tuple[Path, str]) -> None:
    """The file name is the agent's: a newline in it cannot begin a line of its own."""
    work, base = pull_request
    name = "reference/x\n::warning file=a::owned.md"
    write(work, name, "no frontmatter\n")
    commit_all(work, "a hostile name (--no-verify)")
    code, out, _ = runner.run(work, "pull_request", event_for(work, base))
    assert code == 1
    assert not [line for line in out.splitlines() if line.startswith("::warning")], out
    assert memory("check", "--tree", cwd=work).returncode == 1
