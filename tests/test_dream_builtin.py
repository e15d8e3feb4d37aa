"""The offline agents builtin:tidy and builtin:notes, run like any agent (sandboxed)."""
from __future__ import annotations

from pathlib import Path

from conftest import ROOT, commit_all, git, memfile, snapshot, write
from dreamkit import assert_cleaned_up, dream_json, landlock, log_of
from gitmemfs.dream.builtin import add_notes, statements, tidy_text

SESSION = ROOT / "examples" / "session.jsonl"


def test_tidy_text_rules() -> None:
    text, fixes = tidy_text("---\ndescription: x\n---\r\n- a\r\n- b  \r\n- a\r\n")
    assert text == "---\ndescription: x\n---\n- a\n- b\n"
    assert fixes == ["convert 4 CRLF line endings to LF", "strip trailing whitespace on 1 line",
                     "drop 1 duplicate list item"]
    hard = "first line   \nsecond line\n"
    assert tidy_text(hard) == ("first line  \nsecond line\n", ["strip trailing whitespace on 1 line"])
    assert tidy_text("kept  \nbreak\n") == ("kept  \nbreak\n", [])
    nested = "- p\n  - x\n- q\n  - x\n- p\n  - y\n"
    assert tidy_text(nested) == (nested, []), "same text under different parents, or with children, stays"
    fenced = "```\n- z\n- z\n```\n"
    assert tidy_text(fenced) == (fenced, [])
    assert tidy_text("- a\n- b\n\n- a\n") == ("- a\n- b\n", ["drop 1 duplicate list item",
                                                             "end with a single newline"])
    assert tidy_text("- a\nparagraph\n- a\n") == ("- a\nparagraph\n- a\n", [])
    assert tidy_text("x") == ("x\n", ["add the final newline"])
    assert tidy_text("") == ("", [])


@landlock
def test_builtin_tidy_commits_each_file_with_a_reason(mem: Path) -> None:
    write(mem, "system/contacts.md", "---\r\ndescription: People I know\r\n---\r\n- Sarah  \r\n- Tom\r\n- Sarah\r\n")
    write(mem, "reference/history/a.md", memfile("History A", "alpha"))
    write(mem, "system/rules.md", memfile("Ground rules", "Never share secrets.   \n", "read_only: true"))
    commit_all(mem, "messy files")
    out = dream_json(mem, "--agent", "builtin:tidy", code=0)
    assert out["status"] == "merged" and out["commits"] == 2
    assert (mem / "system/contacts.md").read_bytes() == b"---\ndescription: People I know\n---\n- Sarah\n- Tom\n"
    assert (mem / "reference/history/a.md").read_text().endswith("alpha\n")
    assert (mem / "system/rules.md").read_text().endswith("secrets.   \n"), "read_only files are left alone"
    log = git("log", "--format=%s%n%(trailers:key=Memory-Op)", "HEAD^1..HEAD^2", cwd=mem).stdout
    assert "Tidy system/contacts.md: convert 6 CRLF line endings to LF, strip trailing whitespace on 1 line, " \
           "drop 1 duplicate list item" in log
    assert "Tidy reference/history/a.md: add the final newline" in log
    assert log.count("Memory-Op: tidy") == 2
    assert "builtin:tidy: 2 commits" in log_of(out)
    again = dream_json(mem, "--agent", "builtin:tidy", code=0)
    assert again["status"] == "no_changes"
    assert_cleaned_up(mem)


@landlock
def test_builtin_tidy_skips_files_it_cannot_fix(repo: Path) -> None:
    write(repo, "system/broken.md", "no frontmatter  \n")
    commit_all(repo, "broken")
    before = snapshot(repo)
    out = dream_json(repo, "--agent", "builtin:tidy", code=0)
    assert out["status"] == "no_changes" and "skipped system/broken.md" in log_of(out)
    assert snapshot(repo) == before


def test_statements_are_explicit_user_statements_only() -> None:
    records = [
        {"role": "user", "timestamp": "2025-03-04T10:00:00.000Z",
         "content": "Please remember that my sister Alice visits tomorrow. I prefer tabs over spaces. "
                    "Do you remember my editor? I remember the old days. You should remember this."},
        {"role": "assistant", "timestamp": "2025-03-04T10:00:01.000Z", "content": "Remember: I prefer cats."},
        {"role": "user", "timestamp": "2025-03-05T08:00:00.000Z", "content": "ok, remember I'm off yesterday"},
    ]
    assert statements(records) == [
        ("2025-03-04", 'Asked me to remember: "My sister Alice visits on 2025-03-05."'),
        ("2025-03-04", "Prefers tabs over spaces."),
        ("2025-03-05", 'Asked me to remember: "I\'m off on 2025-03-04."'),
    ]


def test_add_notes_skips_what_is_already_written() -> None:
    body = "Intro.\n\n## Noted from conversations\n- 2025-01-01: Prefers tabs over spaces.\n"
    new, added = add_notes(body, [("2025-03-04", "Prefers tabs over spaces."), ("2025-03-04", "Prefers tea."),
                                  ("2025-03-04", "Prefers tea.")])
    assert added == ["- 2025-03-04: Prefers tea."]
    assert new == body + "- 2025-03-04: Prefers tea.\n"


@landlock
def test_builtin_notes_from_the_sample_session(repo: Path) -> None:
    out = dream_json(repo, "--from", f"transcript:{SESSION}", "--agent", "builtin:notes", code=0)
    assert out["status"] == "merged" and out["commits"] == 1
    human = (repo / "system/human.md").read_text()
    assert human.startswith("---\ndescription: What I know about the person I work with")
    assert "## Noted from conversations\n" in human
    assert "- 2025-03-04: Prefers short answers with the command first.\n" in human
    assert "- 2025-03-04: Asked me to remember: The staging database is called orbit-stage and lives in " \
           "eu-west-1.\n" in human
    assert "- 2025-03-04: Asked me to remember: \"I'm on call on 2025-03-05, so keep suggestions " \
           "low-risk.\"\n" in human
    assert "which region prod" not in human
    subject = git("log", "-1", "--format=%s", "HEAD^2", cwd=repo).stdout.strip()
    assert subject == "Record 3 statements the user made explicitly (2025-03-04)"
    assert dream_json(repo, "--from", f"transcript:{SESSION}", "--agent", "builtin:notes",
                      code=0)["status"] == "no_payload"


@landlock
def test_builtin_notes_never_duplicates(repo: Path, tmp_path: Path) -> None:
    first = tmp_path / "one.jsonl"
    first.write_text('{"kind": "user", "text": "I prefer dark mode.", "source_message_id": "a", '
                     '"captured_at": "2025-01-02T03:04:05Z"}\n')
    assert dream_json(repo, "--from", f"transcript:{first}", "--agent", "builtin:notes",
                      code=0)["status"] == "merged"
    second = tmp_path / "two.jsonl"
    second.write_text('{"kind": "user", "text": "As I said, I prefer dark mode!", "source_message_id": "b", '
                      '"captured_at": "2025-02-02T03:04:05Z"}\n')
    out = dream_json(repo, "--from", f"transcript:{second}", "--agent", "builtin:notes", code=0)
    assert out["status"] == "no_changes" and "already in system/human.md" in log_of(out)
    assert (repo / "system/human.md").read_text().count("dark mode") == 1


@landlock
def test_builtin_notes_without_a_transcript_does_nothing(repo: Path) -> None:
    out = dream_json(repo, "--agent", "builtin:notes", code=0)
    assert out["status"] == "no_changes" and "no transcript in this pass" in log_of(out)
