"""`git memory compile`: the prompt projection of a commit, ours and upstream's."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import cache_of, commit_all, git, head, memfile, memory, snapshot, write
from gitmemfs.core import redact
from gitmemfs.core.snapshot import _read_any, _read_plain, read_doc
from gitmemfs.view.collation import sort_key

FIXTURE = {
    "system/persona.md": memfile("Who I am", "I am a test agent.\nI keep notes.\n"),
    "system/human.md": memfile("About the human", "Likes tea.\n\n  indented line\n"),
    "system/project.md": memfile("Project overview", "Overview body\n"),
    "system/project/gotchas.md": memfile("Project gotchas", "Use Bun for tests.\n"),
    "system/project/deep/layers.md": memfile("Deep notes", "Layer one\nLayer two\n"),
    "system/café.md": memfile("Where we meet", "Corner table.\n"),
    "system/Zed.md": memfile('"Quoted"', "Zed value\n"),
    "system/fmonly.md": "---\ndescription: only fm\n---",
    "reference/details.md": memfile("Details", "x\n"),
    'reference/say "hi".md': memfile("Greeting", "hi\n"),
    "notes/日本語.md": memfile("Japanese notes", "y\n"),
    "notes/todo.md": "No frontmatter at all\n",
    "skills/pdf/SKILL.md": memfile("PDF skill", "z\n"),
    "profile.png": b"\x89PNG",
    ".gitignore": "*.tmp\n",
}

EXPECTED = """\
Reminder: <projection> contains the local path of the memory file projection.

<self>
<projection>$MEMORY_DIR/system/persona.md</projection>
I am a test agent.
I keep notes.
</self>

<memory>
<café>
  <projection>$MEMORY_DIR/system/café.md</projection>
  <description>Where we meet</description>
  Corner table.
</café>
<fmonly>
  <projection>$MEMORY_DIR/system/fmonly.md</projection>
  <description>only fm</description>
</fmonly>
<human>
  <projection>$MEMORY_DIR/system/human.md</projection>
  <description>About the human</description>
  Likes tea.

    indented line
</human>
<project>
  <projection>$MEMORY_DIR/system/project.md</projection>
  <description>Project overview</description>
  Overview body
  <deep>
    <layers>
      <projection>$MEMORY_DIR/system/project/deep/layers.md</projection>
      <description>Deep notes</description>
      Layer one
      Layer two
    </layers>
  </deep>
  <gotchas>
    <projection>$MEMORY_DIR/system/project/gotchas.md</projection>
    <description>Project gotchas</description>
    Use Bun for tests.
  </gotchas>
</project>
<Zed>
  <projection>$MEMORY_DIR/system/Zed.md</projection>
  <description>Quoted</description>
  Zed value
</Zed>
<external_projection>
$MEMORY_DIR/
├── notes/
│   ├── todo.md
│   └── 日本語.md — Japanese notes
├── reference/
│   ├── details.md — Details
│   └── say "hi".md — Greeting
└── profile.png
</external_projection>
</memory>
"""

# What Letta Code 0.30.25 prints for the same commit (checked against a JavaScript run
# of its compiler): quoted and non-ASCII names dropped, continuation lines not
# indented, quotes kept, no descriptions or non-Markdown files in the index.
EXPECTED_LETTA = """\
Reminder: <projection> contains the local path of the memory file projection.

<self>
<projection>$MEMORY_DIR/system/persona.md</projection>
I am a test agent.
I keep notes.
</self>

<memory>
<fmonly>
  <projection>$MEMORY_DIR/system/fmonly.md</projection>
  <description>only fm</description>
</fmonly>
<human>
  <projection>$MEMORY_DIR/system/human.md</projection>
  <description>About the human</description>
  Likes tea.

  indented line
</human>
<project>
  <projection>$MEMORY_DIR/system/project.md</projection>
  <description>Project overview</description>
  Overview body
  <deep>
    <layers>
      <projection>$MEMORY_DIR/system/project/deep/layers.md</projection>
      <description>Deep notes</description>
      Layer one
Layer two
    </layers>
  </deep>
  <gotchas>
    <projection>$MEMORY_DIR/system/project/gotchas.md</projection>
    <description>Project gotchas</description>
    Use Bun for tests.
  </gotchas>
</project>
<Zed>
  <projection>$MEMORY_DIR/system/Zed.md</projection>
  <description>"Quoted"</description>
  Zed value
</Zed>
<external_projection>
${MEMORY_DIR}/
├── notes/
│   └── todo.md
└── reference/
    └── details.md
</external_projection>
</memory>
"""


def fill(repo: Path, files: dict[str, str | bytes], message: str = "fixture") -> str:
    for rel, text in files.items():
        write(repo, rel, text)
    return commit_all(repo, message)


@pytest.fixture
def fixture(repo: Path) -> Path:
    fill(repo, FIXTURE)
    return repo


def compile_ok(repo: Path, *args: str, **kw) -> str:  # type: ignore[no-untyped-def]
    proc = memory("compile", *args, cwd=repo, **kw)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_compile_fixture(fixture: Path) -> None:
    assert compile_ok(fixture) == EXPECTED


def test_compile_letta_compat_is_byte_exact(fixture: Path) -> None:
    assert compile_ok(fixture, "--compat", "letta") == EXPECTED_LETTA


def test_compat_keeps_non_ascii_names_when_git_does_not_quote_them(fixture: Path) -> None:
    git("config", "core.quotePath", "false", cwd=fixture)
    out = compile_ok(fixture, "--compat", "letta")
    assert "├── notes/\n│   ├── todo.md\n│   └── 日本語.md\n" in out
    assert 'say "hi".md' not in out and "<café>" in out  # '"' is quoted whatever the setting


def test_upstream_golden_full_example(repo: Path) -> None:
    """reference §1.6, the upstream fixture (its projection part)."""
    git("rm", "-q", "system/human.md", cwd=repo)
    fill(repo, {
        "system/persona.md": memfile("Who I am", "I am a local agent.\n"),
        "system/project/gotchas.md": memfile("Project gotchas", "Use Bun for tests.\n"),
        "reference/details.md": memfile("Details", "Details body\n"),
    })
    golden = """\
Reminder: <projection> contains the local path of the memory file projection.

<self>
<projection>$MEMORY_DIR/system/persona.md</projection>
I am a local agent.
</self>

<memory>
<project>
  <gotchas>
    <projection>$MEMORY_DIR/system/project/gotchas.md</projection>
    <description>Project gotchas</description>
    Use Bun for tests.
  </gotchas>
</project>
<external_projection>
${MEMORY_DIR}/
└── reference/
    └── details.md
</external_projection>
</memory>
"""
    assert compile_ok(repo, "--compat", "letta") == golden
    ours = compile_ok(repo)
    assert ours == golden.replace("${MEMORY_DIR}/", "$MEMORY_DIR/").replace(
        "└── details.md", "└── details.md — Details")


def test_upstream_golden_parser_quirks(repo: Path) -> None:
    """reference §1.6, second golden: empty body, no frontmatter, leaf and parent,
    BOM/CRLF, frontmatter only, list-valued description, case-insensitive order."""
    git("rm", "-q", "system/persona.md", cwd=repo)
    fill(repo, {
        "system/empty.md": memfile("Empty body", ""),
        "system/nodesc.md": "No frontmatter here\n",
        "system/project.md": memfile("Project overview", "Overview body\n"),
        "system/project/gotchas.md": memfile("Project gotchas", "Use Bun for tests.\n"),
        "system/human.md": memfile("About the human", "Likes tea.\n\n  indented line\n"),
        "system/Zed.md": memfile('"quoted"', "z\n"),
        "system/fmonly.md": "---\ndescription: only fm\n---",
        "system/bom.md": b"\xef\xbb\xbf---\r\ndescription: BOM and CRLF\r\n---\r\nbody one\r\nbody two\r\n",
        "system/list.md": "---\ndescription:\n  - a\n  - b\n---\nlisted\n",
    })
    letta = compile_ok(repo, "--compat", "letta")
    start = letta.index("<empty>")
    assert letta[start:].startswith("""\
<empty>
  <projection>$MEMORY_DIR/system/empty.md</projection>
  <description>Empty body</description>
</empty>
<fmonly>
  <projection>$MEMORY_DIR/system/fmonly.md</projection>
  <description>only fm</description>
</fmonly>
<human>
  <projection>$MEMORY_DIR/system/human.md</projection>
  <description>About the human</description>
  Likes tea.

  indented line
</human>
<list>
  <projection>$MEMORY_DIR/system/list.md</projection>
  listed
</list>
<nodesc>
  <projection>$MEMORY_DIR/system/nodesc.md</projection>
  No frontmatter here
</nodesc>
<project>
  <projection>$MEMORY_DIR/system/project.md</projection>
  <description>Project overview</description>
  Overview body
  <gotchas>
""")
    assert "<bom>\n  <projection>$MEMORY_DIR/system/bom.md</projection>\n  <description>BOM and CRLF</description>\n" \
           "  body one\nbody two\n</bom>" in letta
    assert letta.index("<fmonly>") < letta.index("<Zed>")
    assert '<description>"quoted"</description>' in letta
    ours = compile_ok(repo)
    assert "<description>quoted</description>" in ours  # real YAML
    assert "  body one\n  body two\n</bom>" in ours
    assert "<list>\n  <projection>$MEMORY_DIR/system/list.md</projection>\n  listed\n</list>" in ours


def test_compile_reads_the_commit_not_the_work_tree(fixture: Path) -> None:
    write(fixture, "system/human.md", memfile("Changed", "Uncommitted edit\n"))
    write(fixture, "system/new.md", memfile("Untracked", "untracked\n"))
    (fixture / "system" / "persona.md").unlink()
    git("add", "system/new.md", cwd=fixture)  # staged is not committed either
    assert compile_ok(fixture) == EXPECTED
    assert compile_ok(fixture, "--compat", "letta") == EXPECTED_LETTA


def test_rev_reads_an_older_commit(fixture: Path) -> None:
    first = head(fixture)
    fill(fixture, {"system/human.md": memfile("About the human", "Prefers coffee now.\n")}, "coffee")
    assert "Prefers coffee now." in compile_ok(fixture)
    assert compile_ok(fixture, "--rev", first) == EXPECTED
    assert compile_ok(fixture, "--rev", "HEAD~1") == EXPECTED


def test_unknown_rev_is_refused(fixture: Path) -> None:
    before = snapshot(fixture)
    proc = memory("compile", "--rev", "no-such-branch", cwd=fixture)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr == ("error: unknown revision 'no-such-branch'; give a commit such as HEAD, HEAD~3 "
                           "or a commit id (git log lists them)\n")
    proc = memory("compile", "--rev=--all", cwd=fixture)
    assert proc.returncode == 2 and "not a revision: '--all'" in proc.stderr
    assert snapshot(fixture) == before


def test_no_commits_compiles_to_nothing(git_repo) -> None:  # type: ignore[no-untyped-def]
    git("config", "memory.repo", "true", cwd=git_repo.workspace)   # a plain repo, declared memory
    proc = memory("compile", cwd=git_repo.workspace)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def test_not_a_memory_repo(git_repo) -> None:  # type: ignore[no-untyped-def]
    proc = memory("compile", cwd=git_repo.workspace)
    assert proc.returncode == 4 and "not a memory repository" in proc.stderr


def test_only_skills_compiles_to_nothing_but_letta_prints_the_reminder(repo: Path) -> None:
    git("rm", "-q", "system/persona.md", "system/human.md", cwd=repo)
    fill(repo, {"skills/pdf/SKILL.md": memfile("PDF", "steps\n"), "profile.png": b"PNG"})
    # The external projection lists profile.png for us; upstream only knows .md files.
    assert compile_ok(repo) == ("Reminder: <projection> contains the local path of the memory file projection."
                                "\n\n<memory>\n<external_projection>\n$MEMORY_DIR/\n└── profile.png\n"
                                "</external_projection>\n</memory>\n")
    assert compile_ok(repo, "--compat", "letta") == (
        "Reminder: <projection> contains the local path of the memory file projection.\n")
    git("rm", "-q", "profile.png", cwd=repo)
    commit_all(repo)
    assert compile_ok(repo) == ""


def test_json_structure(fixture: Path) -> None:
    git("config", "memory.checkScope", "letta", cwd=fixture)
    fill(fixture, {"system/rules.md": memfile("Ground rules", "Be kind.\n", "read_only: true")})
    data = json.loads(compile_ok(fixture, "--json"))
    assert data["ok"] is True and data["revision"] == head(fixture)
    labels = [b["label"] for b in data["blocks"]]
    assert labels == ["system/café", "system/fmonly", "system/human", "system/persona", "system/project",
                      "system/project/deep/layers", "system/project/gotchas", "system/rules", "system/Zed"]
    rules = next(b for b in data["blocks"] if b["label"] == "system/rules")
    assert rules == {"label": "system/rules", "path": "system/rules.md", "description": "Ground rules",
                     "value": "Be kind.", "read_only": True}
    human = next(b for b in data["blocks"] if b["label"] == "system/human")
    assert human["value"] == "Likes tea.\n\n  indented line" and human["read_only"] is False
    assert data["external"] == [
        {"path": "notes/todo.md", "description": ""},
        {"path": "notes/日本語.md", "description": "Japanese notes"},
        {"path": "profile.png", "description": ""},
        {"path": "reference/details.md", "description": "Details"},
        {"path": 'reference/say "hi".md', "description": "Greeting"},
    ]
    assert data["problems"] == []
    assert data["projection"] + "\n" == compile_ok(fixture)
    letta = json.loads(compile_ok(fixture, "--json", "--compat", "letta"))
    assert letta["projection"] + "\n" == compile_ok(fixture, "--compat", "letta")
    assert letta["blocks"] == data["blocks"]


def test_absolute_paths(fixture: Path) -> None:
    out = compile_ok(fixture, "--absolute")
    root = git("rev-parse", "--show-toplevel", cwd=fixture).stdout.strip()
    assert f"<projection>{root}/system/persona.md</projection>" in out
    assert f"\n{root}/\n├── notes/" in out and "$MEMORY_DIR" not in out


def test_broken_files_still_compile_with_a_warning(repo: Path) -> None:
    fill(repo, {
        "system/colon.md": "---\ndescription: Note: about colons\nread_only: true\n---\nStill shown.\n",
        "system/open.md": "---\ndescription: never closed\nbody\n",
        "system/utf16.md": "---\ndescription: wide\n---\nhello\n".encode("utf-16"),
        "system/latin1.md": b"---\ndescription: Caf\xe9\n---\nna\xefve\n",
        "notes/broken.md": "---\ndescription: [unclosed\n---\nbody\n",
    })
    proc = memory("compile", cwd=repo)
    assert proc.returncode == 0
    out = proc.stdout
    assert "<colon>\n  <projection>$MEMORY_DIR/system/colon.md</projection>\n" \
           "  <description>Note: about colons</description>\n  Still shown.\n</colon>" in out
    assert "<open>\n  <projection>$MEMORY_DIR/system/open.md</projection>\n  ---\n" \
           "  description: never closed\n  body\n</open>" in out
    assert "<utf16>\n  <projection>$MEMORY_DIR/system/utf16.md</projection>\n</utf16>" in out
    assert "<description>Caf\ufffd</description>\n  na\ufffdve" in out
    assert "└── broken.md — [unclosed" in out
    warnings = proc.stderr.splitlines()
    assert [w.split(":")[1].strip() for w in warnings] == [
        "system/colon.md", "system/latin1.md", "system/open.md", "system/utf16.md"]
    assert all(w.startswith("warning: ") and w.endswith("(git memory check --all lists every problem)")
               for w in warnings)
    assert "invalid YAML in frontmatter: mapping values are not allowed" in warnings[0]
    assert "has UTF-16LE BOM; convert the file to UTF-8" in warnings[3]
    assert memory("compile", "-q", cwd=repo).stderr == ""
    data = json.loads(memory("compile", "--json", cwd=repo).stdout)
    colon = next(b for b in data["blocks"] if b["label"] == "system/colon")
    assert colon["read_only"] is True and colon["description"] == "Note: about colons"
    assert {p["path"] for p in data["problems"]} == {
        "system/colon.md", "system/latin1.md", "system/open.md", "system/utf16.md", "notes/broken.md"}


def test_bad_compat_value(fixture: Path) -> None:
    proc = memory("compile", "--compat", "claude", cwd=fixture)
    assert proc.returncode == 2 and "invalid choice: 'claude'" in proc.stderr


# --- building blocks --------------------------------------------------------------------

# Sorted by Node 20's String.prototype.localeCompare (ICU, en-US): the order upstream
# produces and we reproduce on every machine.
ICU_ORDER = [
    "\ta", " a", "_x", "-y", "–a", "—", "—x", ",a", ";a", ":a", "!a", "?a", "¿a", "…", "..b", ".a",
    "'a", "\"a", "«a", "(a", ")a", "[a", "@a", "*a", "/a", "\\a", "&a", "#a", "%a", "`a", "^a",
    "©a", "+a", "<a", "=a", ">a", "|a", "~a", "$a", "€a", "1", "٣", "a", "ae", "æ", "af", "b", "e",
    "E", "é", "f", "fmonly", "item10", "item9", "n", "ñ", "o", "ø", "resume", "résumé", "Résumé",
    "ss", "ß", "st", "x\ty", "x y", "z", "Zed", "Ω", "а", "中",
]


def test_collation_matches_icu_root() -> None:
    shuffled = sorted(ICU_ORDER, key=lambda s: (len(s) * 7919 + sum(map(ord, s))) % 101)
    assert sorted(shuffled, key=sort_key) == ICU_ORDER


PLAIN_SAMPLES = [
    b"---\ndescription: Plain words here\n---\nbody\n",
    b"---\ndescription: null\nread_only: yes\n---\n\n\nbody\n  more\n\n",
    b"---\ndescription: 2024 notes, with commas [and] {braces} & more!\nlimit: 500\n---\nb\n",
    b"---\ndescription: Caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac\nread_only: false\n---\n",
    b"---\ndescription: ~\n---\nx",
    b"---\ndescription: trailing spaces   \nread_only: TRUE\n---\nx\n",
    b"---\ndescription: it's \"fine\" here\n---\nx\n",
    b"---\n---\nno keys\n",
]
NOT_PLAIN_SAMPLES = [
    b"---\ndescription: Note: colon\n---\nx\n",
    b"---\ndescription: 'quoted'\n---\nx\n",
    b"---\ndescription: a # comment\n---\nx\n",
    b"---\ndescription: >\n  folded\n  text\n---\nx\n",
    b"---\ndescription: x\ndescription: y\n---\nx\n",
    b"---\r\ndescription: crlf\r\n---\r\nx\r\n",
    b"---\ndescription: -dash\n---\nx\n",
    b"---\ndescription:\tTab\n---\nx\n",
    b"---\ndescription: bad \xff byte\n---\nx\n",
    b"---\ndescription: \x01control\n---\nx\n",
    b"---\ndescription: a\xc2\x85b\n---\nx\n",
]


@pytest.mark.parametrize("data", PLAIN_SAMPLES + NOT_PLAIN_SAMPLES)
def test_fast_frontmatter_path_agrees_with_yaml(data: bytes) -> None:
    """The fast reader takes only what YAML reads the same way, and gives the same."""
    fast = _read_plain("a.md", data, True)
    full = _read_any("a.md", data, True)
    if data in PLAIN_SAMPLES:
        assert fast is not None
        assert (fast.description, fast.value, fast.read_only, fast.problem) == (
            full.description, full.value, full.read_only, full.problem)
    else:
        assert fast is None
    doc = read_doc("a.md", data)
    assert (doc.description, doc.value) == (full.description, full.value)


def test_redaction_fast_skip_changes_nothing() -> None:
    """compile output goes through redact(); its substring pre-check must never skip
    a pattern that would have matched."""
    samples = [
        "Authorization: Bearer abcdef", "AUTHORIZATION: token xyz", "user PASSWORD=hunter2 here",
        "pa\u017fsword=hunter2", "https://user:pw@host/x", "HTTPS://u@h", "ghp_" + "a" * 20,
        "xghp_" + "a" * 20, "github_pat_" + "b" * 20, "glpat-" + "c" * 20, "sk-let-abc", "plain text",
        "\u0130authorization: basic zz", "authorızation: basic zz", "password is here",
    ]
    for text in samples:
        expected = text
        for pattern, repl, _ in redact.patterns():
            expected = pattern.sub(repl, expected)
        assert redact.redact(text) == expected, text


# --- the description cache of large memories -----------------------------------------

def many_notes(repo: Path, count: int = 1000) -> None:
    for i in range(count):
        write(repo, f"notes/d{i // 100}/n{i:04d}.md", memfile(f"Note {i}", "body\n"))
    commit_all(repo, "many notes")


def test_a_small_memory_keeps_no_cache(repo: Path) -> None:
    """Under 1,000 external files every description is read; nothing is kept, nowhere."""
    fill(repo, {"notes/a.md": memfile("A", "body\n")})
    assert "a.md — A" in compile_ok(repo)
    assert not cache_of(repo).exists()
    assert not (repo / ".git" / "memory-descriptions.cache").exists()


def test_description_cache_end_to_end(repo: Path) -> None:
    many_notes(repo)
    cache = cache_of(repo) / "descriptions"
    first = compile_ok(repo)
    lines = cache.read_text().splitlines()
    assert lines[0] == "git-memfs descriptions 1" and len(lines) == 1001
    assert "│   ├── n0000.md — Note 0" in first
    assert compile_ok(repo) == first  # served from the cache
    # A new blob is read, and the cache follows the commit.
    fill(repo, {"notes/d0/n0000.md": memfile("Note zero, renamed", "body\n"),
                "notes/d0/broken.md": "---\ndescription: a: b\n---\nx\n"})
    second = compile_ok(repo)
    assert "│   ├── n0000.md — Note zero, renamed" in second and "│   ├── broken.md — a: b" in second
    text = cache.read_text()
    assert "\tNote zero, renamed\n" in text and "\tNote 0\n" not in text
    assert "\ta: b\n" not in text  # files with problems are read every time
    assert compile_ok(repo, "--rev", "HEAD~1") == first


def test_description_cache_is_used_and_checked(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gitmemfs.core import snapshot as snapshots
    from gitmemfs.view import compile as compiler

    fill(repo, {"notes/a.md": memfile("Real description", "x\n")})
    monkeypatch.setattr(compiler, "CACHE_MIN_FILES", 1)
    oid = git("rev-parse", "HEAD:notes/a.md", cwd=repo).stdout.strip()
    cache = repo / ".git" / "test.cache"

    def index() -> str:
        text = compiler.project(snapshots.load(str(repo)), cache=str(cache))[0].text
        return text[text.index("<external_projection>"):]

    assert "└── a.md — Real description" in index()
    assert cache.read_text() == f"git-memfs descriptions 1\n{oid}\tReal description\n"
    cache.write_text(f"git-memfs descriptions 1\n{oid}\tFrom the cache\nnot a line\n")
    assert "└── a.md — From the cache" in index()  # a blob id names its content
    cache.write_text(f"git-memfs descriptions 0\n{oid}\tOld format\n")
    assert "└── a.md — Real description" in index()
    cache.unlink()
    cache.mkdir()  # cannot be written: compile goes on without it
    assert "└── a.md — Real description" in index()
    assert list(cache.iterdir()) == [] and not list(cache.parent.glob("test.cache.*.tmp"))


def test_spooled_git_runs_keep_the_runner_contract(repo: Path) -> None:
    """run(spool=True) (temp files instead of pipes, for megabytes of output)."""
    from gitmemfs.core import git as runner

    oid = git("rev-parse", "HEAD:system/persona.md", cwd=repo).stdout.strip()
    res = runner.run(["cat-file", "--batch"], cwd=repo, input=oid + "\n", spool=True)
    assert res.raw.startswith(f"{oid} blob ".encode()) and b"\ndescription: " in res.raw
    with pytest.raises(runner.GitError) as err:
        runner.run(["cat-file", "-p", "HEAD:no-such-file"], cwd=repo, spool=True)
    assert "no-such-file" in err.value.stderr and err.value.exit_code == 128
    assert runner.run(["rev-parse", "HEAD"], cwd=repo, spool=True).out.strip() == head(repo)
