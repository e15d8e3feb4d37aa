"""`git memory tokens`: ceil(UTF-8 bytes / 4) of what `compile` prints, per file."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from conftest import commit_all, memfile, memory, snapshot, write

SMALL = {
    "system/persona.md": memfile("Who I am", "I am small.\n"),
    "system/big.md": memfile("A big block", "x" * 4000 + "\n"),
    "system/café.md": memfile("Café", "é" * 100 + "\n"),
    "reference/notes.md": memfile("Some notes", "not in the prompt " * 50 + "\n"),
    "profile.png": b"\x89PNG",
}


@pytest.fixture
def small(repo: Path) -> Path:
    (repo / "system" / "human.md").unlink()
    for rel, text in SMALL.items():
        write(repo, rel, text)
    commit_all(repo)
    return repo


def tokens_json(repo: Path, *args: str) -> dict:
    proc = memory("tokens", "--json", *args, cwd=repo)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def test_total_is_the_estimate_of_the_compiled_prompt(small: Path) -> None:
    prompt = memory("compile", cwd=small).stdout[:-1]  # print adds the final newline
    data = tokens_json(small)
    size = len(prompt.encode("utf-8"))
    assert data["total_bytes"] == size and data["total_tokens"] == math.ceil(size / 4)
    assert data["estimator"] == "ceil(UTF-8 bytes / 4)"
    assert data["ok"] is True and "budget" not in data


def test_each_file_pays_for_its_own_lines(small: Path) -> None:
    files = {f["path"]: f for f in tokens_json(small)["files"]}
    assert list(files) == ["system/big.md", "system/café.md", "system/persona.md",
                           "reference/notes.md", "profile.png"]  # largest first
    big = ("<big>\n  <projection>$MEMORY_DIR/system/big.md</projection>\n"
           "  <description>A big block</description>\n  " + "x" * 4000 + "\n</big>\n")
    assert files["system/big.md"]["bytes"] == len(big)
    assert files["system/big.md"]["tokens"] == math.ceil(len(big) / 4)
    cafe = ("<café>\n  <projection>$MEMORY_DIR/system/café.md</projection>\n"
            "  <description>Café</description>\n  " + "é" * 100 + "\n</café>\n")
    assert files["system/café.md"]["bytes"] == len(cafe.encode())  # bytes, not characters
    # External files cost their index line only, not their content.
    assert files["reference/notes.md"]["bytes"] == len("│   └── notes.md — Some notes\n".encode())
    assert files["profile.png"]["in_context"] is False and files["system/big.md"]["in_context"] is True
    # What no file owns (Reminder, <memory>, folder lines) is structure.
    data = tokens_json(small)
    rest = data["total_bytes"] - sum(f["bytes"] for f in files.values())
    assert rest > 0 and data["structure_tokens"] == math.ceil(rest / 4)


def test_text_report(small: Path) -> None:
    proc = memory("tokens", "--top", "2", cwd=small)
    assert proc.returncode == 0 and proc.stderr == ""
    lines = proc.stdout.splitlines()
    data = tokens_json(small)
    assert lines[0].startswith("Prompt token estimate for ") and lines[0].endswith(" (ceil(UTF-8 bytes / 4))")
    assert lines[1] == f"  Total: {data['total_tokens']:,} tokens"
    assert lines[2].startswith("  system/ blocks: ") and lines[2].endswith(" tokens in 3 files")
    assert lines[3].startswith("  external index: ") and lines[3].endswith(" tokens for 2 files")
    assert lines[4].startswith("  tags and folders: ")
    assert lines[5:] == ["", "Top files:", "    tokens  path",
                         f"  {data['files'][0]['tokens']:>8,}  system/big.md",
                         f"  {data['files'][1]['tokens']:>8,}  system/café.md"]
    assert "Top files:" not in memory("tokens", "--top", "0", cwd=small).stdout


def test_budget_exit_codes(small: Path) -> None:
    total = tokens_json(small)["total_tokens"]
    before = snapshot(small)
    ok = memory("tokens", "--budget", str(total), cwd=small)
    assert ok.returncode == 0 and ok.stderr == ""
    assert f"  Budget: {total:,} tokens (0 to spare)" in ok.stdout
    over = memory("tokens", "--budget", str(total - 1), cwd=small)
    assert over.returncode == 1
    assert f"  Budget: {total - 1:,} tokens (over by 1)" in over.stdout
    assert over.stderr == (f"error: the memory's prompt is over budget ({total:,} > {total - 1:,} tokens); "
                           "move detail out of system/ into external files\n")
    data = tokens_json(small, "--budget", str(total - 1))
    assert data["ok"] is False and data["over_budget"] is True and data["budget"] == total - 1
    assert tokens_json(small, "--budget", str(total))["over_budget"] is False
    quiet = memory("tokens", "-q", "--budget", "1", cwd=small)
    assert quiet.returncode == 1 and "over budget" in quiet.stderr
    assert snapshot(small) == before


def test_budget_follows_the_commit_not_the_work_tree(small: Path) -> None:
    total = tokens_json(small)["total_tokens"]
    write(small, "system/big.md", memfile("A big block", "y" * 40000 + "\n"))
    assert memory("tokens", "--budget", str(total), cwd=small).returncode == 0
    commit_all(small, "grow")
    assert memory("tokens", "--budget", str(total), cwd=small).returncode == 1
    assert memory("tokens", "--budget", str(total), "--rev", "HEAD~1", cwd=small).returncode == 0


@pytest.mark.parametrize("args", [["--budget", "-1"], ["--top", "many"], ["--budget", "1e3"]])
def test_bad_numbers_are_usage_errors(small: Path, args: list[str]) -> None:
    proc = memory("tokens", *args, cwd=small)
    assert proc.returncode == 2 and "expected a non-negative integer" in proc.stderr


def test_empty_repository(tmp_path: Path) -> None:
    memory("init", str(tmp_path / "m"), cwd=tmp_path)
    for rel in ("system/persona.md", "system/human.md"):
        (tmp_path / "m" / rel).unlink()
    commit_all(tmp_path / "m")
    data = tokens_json(tmp_path / "m", "--budget", "0")
    assert (data["total_tokens"], data["files"], data["over_budget"]) == (0, [], False)
