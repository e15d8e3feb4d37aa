"""`git memory call`: the upstream and Anthropic tool-call JSON, end to end."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import git, head, memfile, memory, snapshot


def call(repo: Path, obj: Any, *extra: str, stdin: bool = False) -> tuple[int, dict[str, Any]]:
    payload = obj if isinstance(obj, str) else json.dumps(obj)
    if stdin:
        proc = memory("call", *extra, cwd=repo, input=payload)
    else:
        proc = memory("call", payload, *extra, cwd=repo)
    assert proc.stderr == "", proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def test_letta_create_and_str_replace(repo: Path) -> None:
    code, out = call(repo, {"command": "create", "reason": "Remember Sarah", "file_path": "system/contacts.md",
                            "description": "Contacts memory", "file_text": "Sarah: +1-555-0100"})
    assert code == 0 and out["ok"] and out["paths"] == ["system/contacts.md"]
    assert out["commit"] == head(repo) and out["message"] == f"Memory create committed ({out['commit'][:7]})."
    code, out = call(repo, {"command": "str_replace", "reason": "New number", "file_path": "system/contacts.md",
                            "old_string": "0100", "new_string": "0111"}, stdin=True)
    assert code == 0, out
    assert (repo / "system/contacts.md").read_text().endswith("Sarah: +1-555-0111\n")
    assert git("log", "-1", "--format=%s", cwd=repo).stdout.strip() == "New number"


def test_letta_every_command(mem: Path) -> None:
    steps = [
        {"command": "insert", "file_path": "system/contacts.md", "insert_line": 1, "insert_text": "Ann: 1"},
        {"command": "update_description", "file_path": "system/contacts.md", "description": "People"},
        {"command": "rename", "old_path": "system/contacts.md", "new_path": "reference/contacts.md"},
        {"command": "delete", "file_path": "reference/history"},
    ]
    for step in steps:
        code, out = call(mem, {**step, "reason": f"do {step['command']}"})
        assert code == 0 and out["ok"], out
    assert (mem / "reference/contacts.md").read_text().startswith("---\ndescription: People\n---\nAnn: 1\n")
    assert not (mem / "reference/history").exists()
    code, out = call(mem, {"command": "view", "reason": "look", "file_path": "reference/contacts.md"})
    assert code == 0 and "Ann: 1" in out["message"]


def test_required_parameters_by_key_presence(mem: Path) -> None:
    before = snapshot(mem)
    code, out = call(mem, {"file_path": "system/x.md", "command": None})
    assert code == 1 and out == {"ok": False, "code": 1, "error":
                                 "memory tool missing required parameters: command, reason. "
                                 "Received parameters: file_path, command"}
    code, out = call(mem, {"command": "create", "reason": " "})
    assert out["error"] == "memory: 'reason' must be a non-empty string"
    code, out = call(mem, {"command": "rename", "reason": "r", "file_path": "system/contacts.md",
                           "new_path": "x"})
    assert out["error"] == "memory rename: 'old_path' must be a non-empty string"
    code, out = call(mem, {"command": "explode", "reason": "r"})
    assert out["error"] == "Unsupported memory command: explode"
    code, out = call(mem, {"command": "insert", "reason": "r", "file_path": "system/contacts.md",
                           "insert_line": "2", "insert_text": "x"})
    assert out["error"] == "memory insert: 'insert_line' must be a number"
    code, out = call(mem, {"command": "insert", "reason": "r", "file_path": "system/contacts.md",
                           "insert_line": True, "insert_text": "x"})
    assert out["error"] == "memory insert: 'insert_line' must be a number"
    assert snapshot(mem) == before


def test_invalid_json_and_non_object(mem: Path) -> None:
    before = snapshot(mem)
    code, out = call(mem, "{not json")
    assert code == 2 and out["ok"] is False and "not valid JSON" in out["error"]
    code, out = call(mem, "[1, 2]")
    assert code == 2 and "expected a JSON object" in out["error"]
    assert snapshot(mem) == before


def test_tool_call_wrappers(mem: Path) -> None:
    args = {"command": "str_replace", "reason": "wrapped", "file_path": "system/contacts.md",
            "old_string": "Tom", "new_string": "Thomas"}
    code, out = call(mem, {"name": "memory", "input": args})
    assert code == 0, out
    args = {**args, "old_string": "Thomas", "new_string": "Tom"}
    code, out = call(mem, {"name": "memory", "arguments": json.dumps(args)})
    assert code == 0, out


def test_insert_line_takes_whole_numbers_only(repo: Path) -> None:
    (repo / "notes").mkdir()
    (repo / "notes/n.md").write_text(memfile("N", "a\nb\n"))
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "n", cwd=repo)
    code, out = call(repo, '{"command":"insert","reason":"r","file_path":"notes/n.md",'
                           '"insert_line":2.9,"insert_text":"x"}')
    assert code == 1 and "'insert_line' must be a whole number of lines, got 2.9" in out["error"], out
    code, out = call(repo, '{"command":"insert","reason":"r","file_path":"notes/n.md",'
                           '"insert_line":1e400,"insert_text":"z"}')
    assert code == 2 and "the number 1e400 is out of range" in out["error"], out
    code, out = call(repo, '{"command":"insert","reason":"r","file_path":"notes/n.md",'
                           '"insert_line":2.0,"insert_text":"x"}')
    assert code == 0, out
    assert (repo / "notes/n.md").read_text() == memfile("N", "a\nx\nb\n")


# -- Anthropic's memory tool ------------------------------------------------------------------

def anth(repo: Path, obj: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    return call(repo, obj, "--schema", "anthropic")


def test_anthropic_create_view_and_edit(repo: Path) -> None:
    code, out = anth(repo, {"command": "create", "path": "/memories/notes.md", "file_text": "line 1\nline 2\n"})
    assert code == 0 and out["message"] == "File created successfully at: /memories/notes.md"
    assert (repo / "notes.md").read_text() == "---\ndescription: Memory block notes\n---\nline 1\nline 2\n"
    assert git("log", "-1", "--format=%s", cwd=repo).stdout.strip() == "create /memories/notes.md"
    code, out = anth(repo, {"command": "view", "path": "/memories/notes.md"})
    assert out["message"] == ("Here's the content of /memories/notes.md with line numbers:\n"
                              "     1\tline 1\n     2\tline 2\n     3\t")  # the reference shows the empty tail
    code, out = anth(repo, {"command": "view", "path": "/memories/notes.md", "view_range": [2, 2]})
    assert out["message"].endswith("     2\tline 2") and "line 1" not in out["message"]
    code, out = anth(repo, {"command": "str_replace", "path": "/memories/notes.md", "old_str": "line 2",
                            "new_str": "second", "reason": "rename line"})
    assert code == 0 and out["message"] == ("The memory file has been edited. Here is the snippet showing the "
                                            "change (with line numbers):\n     1\tline 1\n     2\tsecond\n     3\t")
    assert git("log", "-1", "--format=%s", cwd=repo).stdout.strip() == "rename line"
    code, out = anth(repo, {"command": "insert", "path": "/memories/notes.md", "insert_line": 0,
                            "insert_text": "zeroth"})
    assert code == 0 and out["message"] == "The file /memories/notes.md has been edited."
    assert (repo / "notes.md").read_text().endswith("---\nzeroth\nline 1\nsecond\n")


def test_anthropic_errors(repo: Path) -> None:
    anth(repo, {"command": "create", "path": "/memories/a.md", "file_text": "x\nx\n"})
    anth(repo, {"command": "create", "path": "/memories/b.md", "file_text": "b"})
    before = snapshot(repo)
    cases = [
        ({"command": "create", "path": "/memories/a.md", "file_text": "y"},
         "File /memories/a.md already exists"),
        ({"command": "str_replace", "path": "/memories/a.md", "old_str": "q", "new_str": "z"},
         "No replacement was performed, old_str `q` did not appear verbatim in /memories/a.md."),
        ({"command": "str_replace", "path": "/memories/a.md", "old_str": "x", "new_str": "z"},
         "No replacement was performed. Multiple occurrences of old_str `x` in lines: 1, 2. "
         "Please ensure it is unique"),
        ({"command": "insert", "path": "/memories/a.md", "insert_line": 3, "insert_text": "z"},
         "Invalid `insert_line` parameter: 3. It should be within the range [0, 2]."),
        ({"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/b.md"},
         "The destination /memories/b.md already exists"),
        ({"command": "view", "path": "/memories/nope.md"},
         "The path /memories/nope.md does not exist. Please provide a valid path."),
        ({"command": "delete", "path": "/memories"}, "Cannot delete the /memories directory itself"),
        ({"command": "view", "path": "/etc/passwd"}, "Path must start with /memories, got: /etc/passwd"),
        ({"command": "create", "path": "/memories/../x.md", "file_text": "y"},
         "Path /memories/../x.md would escape /memories directory"),
        ({"command": "create", "path": "/memories/.git/config", "file_text": "y"}, "names git's own data"),
    ]
    for obj, message in cases:
        code, out = anth(repo, obj)
        assert code != 0 and out["ok"] is False and message in out["error"], (obj, out)
    assert snapshot(repo) == before


def test_anthropic_delete_rename_and_listing(repo: Path) -> None:
    anth(repo, {"command": "create", "path": "/memories/projects/a.md", "file_text": "a"})
    code, out = anth(repo, {"command": "view", "path": "/memories"})
    assert out["message"].startswith("Here're the files and directories up to 2 levels deep in /memories, "
                                     "excluding hidden items:\n")
    assert "\t/memories/projects/a.md" in out["message"] and ".git" not in out["message"]
    code, out = anth(repo, {"command": "rename", "old_path": "/memories/projects/a.md",
                            "new_path": "/memories/projects/b.md"})
    assert out["message"] == "Successfully renamed /memories/projects/a.md to /memories/projects/b.md"
    code, out = anth(repo, {"command": "delete", "path": "/memories/projects"})
    assert code == 0 and out["message"] == "Successfully deleted /memories/projects"
    assert not (repo / "projects").exists()
