"""The agent recipes in examples/agents/, run against stand-ins for the real CLIs: the
stand-ins check they got the prompt on stdin and the flags the recipe promises, then edit
memory the way the real agent would (through `git memory`)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import ROOT, write
from dreamkit import dream_json, landlock, log_of

RECIPES = ROOT / "examples" / "agents"
pytestmark = landlock

# A stand-in agent CLI: logs its argv, insists the prompt came on stdin, reads its own
# configuration as the real CLI would (and a private key, which it must not get), then commits.
FAKE = """#!/bin/sh
echo "ARGV: $0 $*"
prompt=$(cat)
case "$prompt" in *"Dream pass: reflect and tidy"*) echo "GOT PROMPT";; *) echo "NO PROMPT"; exit 9;; esac
cat "$HOME/{config}" || exit 8
cat "$HOME/.ssh/id_ed25519" 2>/dev/null && echo "READ THE KEY"
git memory create notes/{name}.md "Written by {name}." -d "From the {name} recipe" -m "Note from {name}"
"""
# Where each real CLI keeps the configuration it reads (see the recipes' headers).
CONFIG = {"claude": ".claude/settings.json", "codex": ".codex/config.toml", "letta": ".letta/settings.json",
          "llm": ".config/io.datasette.llm/keys.json"}

CALLS = [
    {"command": "create", "reason": "Remember the deploy day", "file_path": "notes/deploys.md",
     "description": "Deploy habits", "file_text": "Deploys happen on Tuesdays."},
    {"command": "str_replace", "reason": "Broken call", "file_path": "notes/missing.md", "old_string": "a",
     "new_string": "b"},
]
FAKE_LLM = "#!/bin/sh\necho \"ARGV: $*\" >&2\ncat > /dev/null\ncat \"$HOME/{config}\" >&2 || exit 8\n" \
    "echo 'Here are my calls:'\n" + "".join(
    f"echo '{json.dumps(call)}'\n" for call in CALLS)


@pytest.fixture
def fakebin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hermetic: Path) -> Path:
    folder = tmp_path / "fakebin"
    folder.mkdir()
    for name in ("claude", "codex", "letta"):
        (folder / name).write_text(FAKE.replace("{name}", name).replace("{config}", CONFIG[name]))
    (folder / "llm").write_text(FAKE_LLM.replace("{config}", CONFIG["llm"]))
    for name, rel in CONFIG.items():
        write(hermetic, rel, f"CONFIG OF {name}\n")
    write(hermetic, ".ssh/id_ed25519", "PRIVATE KEY\n")
    for tool in folder.iterdir():
        tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return folder


@pytest.mark.parametrize("name,flags", [
    ("claude", "-p --output-format text --permission-mode acceptEdits"),
    ("codex", "exec --sandbox danger-full-access --skip-git-repo-check --ephemeral -"),
    ("letta", "-p --yolo"),
])
def test_cli_recipes(repo: Path, fakebin: Path, name: str, flags: str) -> None:
    recipe = {"claude": "claude-code.sh", "codex": "codex.sh", "letta": "letta.sh"}[name]
    out = dream_json(repo, "--agent", f"sh {RECIPES / recipe}", code=0)
    log = log_of(out)
    assert f"ARGV: {fakebin / name} {flags}" in log and "GOT PROMPT" in log, log
    assert f"CONFIG OF {name}" in log and "READ THE KEY" not in log, log
    assert out["status"] == "merged" and (repo / f"notes/{name}.md").exists()


def test_llm_recipe_turns_answers_into_validated_commits(repo: Path, fakebin: Path) -> None:
    out = dream_json(repo, "--agent", f"sh {RECIPES / 'llm.sh'}", code=0)
    log = log_of(out)
    assert "--no-log -s" in log and "CONFIG OF llm" in log
    assert '"ok": false' in log, "the broken call is refused and reported"
    assert out["status"] == "merged" and out["commits"] == 1
    assert (repo / "notes/deploys.md").read_text().endswith("Deploys happen on Tuesdays.\n")
