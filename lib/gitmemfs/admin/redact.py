"""`git memory redact`: take a string or a file out of every version (a person's command).

A git memory never forgets; this is how a person makes it. The strings (one per line
of a file or of standard input, never in argv) are replaced by `[REDACTED]` in every
version of every file and in every commit message; `--path` removes a file from every
version. The engine is git-filter-repo (its `--replace-text`, `--replace-message` and
`--paths-from-file --invert-paths`), started through the one git runner; every ref of
the repository is rewritten (main, kept dream runs, backups, pending refs), empty
commits are kept so the history keeps its shape, and commit ids named in messages
(`Memory-Undoes:`) are mapped to the new ones. Then everything that could still hold
the old text goes: reflogs expired, unreachable objects pruned, the search index
dropped, finished dream runs' private repositories removed (their kept work lives on
in `refs/dreams/kept/`, rewritten).

A record commit goes on top, naming no secret: a salted SHA-256 of each string and
path (`Memory-Redacted:`), how many versions and commits changed, and
`Memory-Approved: redact` (running this command is the approval; where the person
signs commits, the record is signed and a gate with allowed signers can tell).

Crash safety: git-filter-repo moves the refs in one `update-ref` transaction, so a
kill leaves the old history or the new one. What to do is written first to
`<git-dir>/memory-redact.json` (salted hashes only; the strings are read again from
the same input on a rerun) and removed last, so a rerun after a kill finishes the
clean-up and the record.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import sysconfig
import tempfile
from typing import Any, Iterable, Sequence

from gitmemfs.core import purge
from gitmemfs.core.errors import BusyError, EnvironmentProblem, MemfsError, UsageError
from gitmemfs.core.outcome import Outcome
from gitmemfs.core.repo import Repo

REPLACEMENT = "[REDACTED]"
MIN_TEXT = 4  # shorter strings would rewrite half the memory by accident
STATE = "memory-redact.json"
TRAILER = "Memory-Redacted"
APPROVED = "Memory-Approved"  # the person's approval, as protect records it


def read_texts(data: str) -> list[str]:
    """The strings to redact: one per line (a trailing CR dropped), blank lines skipped."""
    out: list[str] = []
    for line in data.split("\n"):
        line = line[:-1] if line.endswith("\r") else line
        if not line.strip():
            continue
        if len(line) < MIN_TEXT:
            raise UsageError(f"redact: a string to redact must have at least {MIN_TEXT} characters "
                             f"(line {len(out) + 1} has {len(line)}); shorter ones would rewrite unrelated text")
        if REPLACEMENT in line or line in REPLACEMENT:
            raise UsageError(f"redact: a string to redact can't contain or be part of {REPLACEMENT}")
        out.append(line)
    return list(dict.fromkeys(out))


def _salted(salt: str, value: str) -> str:
    return hashlib.sha256(f"{salt}\0{value}".encode()).hexdigest()


class Scan:
    """What a redaction would change: counted, never printed."""

    def __init__(self) -> None:
        self.occurrences = 0  # of the strings, in blobs and messages (every version, reachable or not)
        self.versions: set[str] = set()  # blobs that change (hold a string, or are at a removed path)
        self.commits: list[tuple[str, str]] = []  # (sha, subject) of commits whose content changes
        self.files: set[str] = set()
        self.refs: list[str] = []
        self.messages = 0  # commit messages holding a string

    def empty(self) -> bool:
        return not (self.occurrences or self.versions or self.commits)

    def as_dict(self) -> dict[str, Any]:
        return {"occurrences": self.occurrences, "versions": len(self.versions), "messages": self.messages,
                "commits": [{"commit": c, "subject": s} for c, s in self.commits], "files": sorted(self.files),
                "refs": self.refs}


def scan(repo: Repo, texts: Sequence[str], paths: Sequence[str]) -> Scan:
    """Every object in the store (reachable or not) and every commit, read once."""
    out = Scan()
    needles = [t.encode() for t in texts]
    listed = repo.git("cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)", spool=True)
    blobs = [line.split()[0] for line in listed.out.splitlines() if line.endswith(" blob")]
    data = _read(repo, blobs)
    for oid, body in data.items():
        n = sum(body.count(needle) for needle in needles) if body else 0
        if n:
            out.occurrences += n
            out.versions.add(oid)
    log = repo.git("log", "--all", "--reflog", "--no-renames", "--raw", "-z", "--no-abbrev",
                   "--format=%x01%H%x00%B%x00", spool=True)
    for record in log.raw.split(b"\x01")[1:]:
        sha, _, rest = record.partition(b"\0")
        message, _, raw = rest.partition(b"\0")
        commit = sha.decode()
        hit = False
        n = sum(message.count(needle) for needle in needles)
        if n:
            out.messages += 1
            out.occurrences += n
            hit = True
        fields = raw.lstrip(b"\0\n").split(b"\0")
        for i in range(0, len(fields) - 1, 2):
            meta = fields[i].decode(errors="replace").strip("\n").lstrip(":").split()
            path = fields[i + 1].decode(errors="surrogateescape")
            if len(meta) < 5:
                continue
            if meta[3] in out.versions or meta[2] in out.versions:
                out.files.add(path)
                hit = True
            if any(path == p or path.startswith(p + "/") for p in paths):
                out.files.add(path)
                for oid in (meta[2], meta[3]):
                    if oid.strip("0"):
                        out.versions.add(oid)
                hit = True
        if hit:
            subject = message.decode("utf-8", "replace").split("\n", 1)[0]
            out.commits.append((commit, subject if not any(t in subject for t in texts) else REPLACEMENT))
    if out.commits:
        refs = repo.git("for-each-ref", "--format=%(refname)",
                        *[f"--contains={c}" for c, _ in out.commits[:200]])
        out.refs = refs.lines()
    return out


def _read(repo: Repo, oids: list[str]) -> dict[str, bytes | None]:
    from gitmemfs.core.snapshot import parse_batch

    out: dict[str, bytes | None] = {}
    for start in range(0, len(oids), 5000):
        chunk = oids[start:start + 5000]
        res = repo.git("cat-file", "--batch", "--buffer", input="".join(o + "\n" for o in chunk), spool=True)
        out.update(parse_batch(res.raw, chunk))
    return out


def redact(repo: Repo, texts: Sequence[str], paths: Sequence[str], *, dry_run: bool = False,
           reason: str | None = None) -> Outcome:
    if not texts and not paths:
        raise UsageError("redact: say what to take out: --text-file FILE (or - for standard input) and/or "
                         "--path PATH")
    paths = [_path(p) for p in paths]
    if not repo.has_head():
        raise MemfsError("redact: this memory has no commits yet; nothing to redact")
    with repo.lock(timeout=10):
        if purge.dream_running(repo):
            raise BusyError("redact: a dream is running on this memory; wait for it (git dream list) and "
                            "run redact again")
        return _redact_locked(repo, list(texts), paths, dry_run=dry_run, reason=reason)



def _redact_locked(repo: Repo, texts: list[str], paths: list[str], *, dry_run: bool,
                   reason: str | None) -> Outcome:
    state_path = os.path.join(repo.git_dir, STATE)
    pending = _load(state_path)
    dirty = repo.git("status", "--porcelain", "-z", "--untracked-files=all").zsplit()
    if dirty and not _interrupted_checkout(repo, pending, dirty):
        raise MemfsError("redact: the work tree has uncommitted changes; commit or discard them first")
    found = scan(repo, texts, paths)
    if dry_run:
        return _report(found, dry_run=True)
    if found.empty() and pending is None:
        return Outcome("Nothing to redact: no version and no message holds it.", extra=found.as_dict())
    if pending is None:
        salt = os.urandom(16).hex()
        pending = {"salt": salt, "texts": [_salted(salt, t) for t in texts],
                   "paths": [_salted(salt, p) for p in paths], "versions": len(found.versions),
                   "commits": len(found.commits), "occurrences": found.occurrences, "rewritten": False,
                   "head": repo.git("rev-parse", "HEAD").out.strip()}
        _save(state_path, pending)
    remotes = repo.git("config", "--get-regexp", r"^(remote|branch)\.", check=False).lines()
    if found.commits or found.versions:
        _filter_repo(repo, texts, paths)
    pending["rewritten"] = True
    _save(state_path, pending)
    _restore_remotes(repo, remotes)
    _clean_up(repo)
    commit = _record(repo, pending, reason)
    os.unlink(state_path)
    out = _report(found, dry_run=False) if found.commits else Outcome(
        f"Finished an interrupted redaction: {pending['commits']} commits and {pending['versions']} versions "
        "had changed.", extra={"dry_run": False, "resumed": True})
    out.commit = commit
    return out


def _interrupted_checkout(repo: Repo, pending: dict[str, Any] | None, dirty: list[str]) -> bool:
    """git-filter-repo moves the refs, then checks the new HEAD out: a kill in between
    leaves the old version's files over the new HEAD. When the work tree is exactly
    the tree HEAD had when this redaction began (nothing untracked), that difference is
    ours, and the new HEAD is checked out; anything else is the person's, and stays."""
    old = (pending or {}).get("head")
    if not old or any(entry.startswith("??") for entry in dirty):
        return False
    if repo.git("diff-index", "--quiet", str(old), "--", check=False).code != 0:
        return False
    repo.git("reset", "-q", "--hard", "HEAD")
    return True


def _path(raw: str) -> str:
    path = raw.strip().strip("/")
    while path.startswith("./"):
        path = path[2:]
    parts = path.split("/")
    if not path or "\0" in path or "\n" in path or ".." in parts or parts[0] == ".git":
        raise UsageError(f"redact: not a memory path: {raw!r}")
    return path


def _report(found: Scan, *, dry_run: bool) -> Outcome:
    verb = "Would change" if dry_run else "Changed"
    text = (f"{verb} {len(found.commits)} commits, {len(found.versions)} versions of {len(found.files)} files, "
            f"{found.messages} commit messages ({found.occurrences} occurrences); refs: "
            f"{', '.join(found.refs) or 'none'}.")
    if dry_run and found.commits:
        text += "\n" + "\n".join(f"  {c[:7]} {s}" for c, s in found.commits[:50])
        if len(found.commits) > 50:
            text += f"\n  … and {len(found.commits) - 50} more"
    return Outcome(text, extra={"dry_run": dry_run, **found.as_dict()})


def _filter_repo(repo: Repo, texts: list[str], paths: list[str]) -> None:
    """git-filter-repo over every ref; the strings and paths go in through files."""
    # Where pip put git-filter-repo: beside this Python (a venv's bin/, even when started
    # without site.py), or the interpreter's scripts folder.
    here = [os.path.dirname(sys.executable), sysconfig.get_path("scripts")]
    env_path = os.pathsep.join([*here, os.environ.get("PATH", "")])
    if shutil.which("git-filter-repo", path=env_path) is None:
        raise EnvironmentProblem("redact: git-filter-repo is not installed; pip install 'git-memfs[redact]' (or "
                                 "git-filter-repo) into the Python that runs git memory")
    with tempfile.TemporaryDirectory(prefix="memory-redact-", dir=repo.git_dir) as tmp:
        args = ["filter-repo", "--force", "--quiet", "--prune-empty", "never", "--prune-degenerate", "never"]
        if texts:
            expressions = os.path.join(tmp, "expressions")
            with open(os.open(expressions, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w",
                      encoding="utf-8") as fh:
                for t in texts:
                    fh.write(f"regex:{_escape(t)}==>{REPLACEMENT}\n")
            args += ["--replace-text", expressions, "--replace-message", expressions]
        if paths:
            listed = os.path.join(tmp, "paths")
            with open(listed, "w", encoding="utf-8") as fh:
                fh.write("".join(f"{p}\n" for p in paths))
            args += ["--paths-from-file", listed, "--invert-paths"]
        repo.git(*args, timeout=3600, env={"PATH": env_path})


def _escape(text: str) -> str:
    """A literal as a filter-repo regex: re.escape, and '=' escaped too, so the line's
    `==>` separator can't be found inside the string."""
    import re

    return re.escape(text).replace("=", "\\=")


def _restore_remotes(repo: Repo, saved: list[str]) -> None:
    """git-filter-repo drops `origin` (and the branches' upstream settings) to stop an
    accidental push of the new history; this command pushes with a lease itself
    (`--push`), so they come back."""
    have = set(repo.git("config", "--get-regexp", r"^(remote|branch)\.", check=False).lines())
    for line in saved:
        if line in have:
            continue
        key, _, value = line.partition(" ")
        repo.git("config", "--add", key, value)


def _clean_up(repo: Repo) -> None:
    """Everything that may still hold the old text (core/purge.py)."""
    purge.forget_old_history(repo)


def _record(repo: Repo, pending: dict[str, Any], reason: str | None) -> str:
    """The commit that says a redaction happened, on top, naming no secret."""
    trailers = [f"{TRAILER}: text sha256:{pending['salt']}:{h}" for h in pending["texts"]]
    trailers += [f"{TRAILER}: path sha256:{pending['salt']}:{h}" for h in pending["paths"]]
    trailers += [f"Memory-Redacted-Versions: {pending['versions']}",
                 f"Memory-Redacted-Commits: {pending['commits']}",
                 "Memory-Op: redact", f"{APPROVED}: redact"]
    subject = (reason or "").strip() or "Redact what must be forgotten from every version"
    message = subject + "\n\n" + "\n".join(trailers) + "\n"
    # Our git runner turns signing off for every commit; the person's own setting wins here.
    sign = ["-S"] if repo.cfg_bool("commit.gpgsign") else []
    repo.git("commit", "--allow-empty", "-q", *sign, "-F", "-", input=message)
    return repo.git("rev-parse", "HEAD").out.strip()


def _load(path: str) -> dict[str, Any] | None:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        return data if isinstance(data, dict) and "salt" in data else None
    except (OSError, ValueError):
        return None


def _save(path: str, data: dict[str, Any]) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def pushes(repo: Repo) -> Iterable[str]:
    """Where `--push` sends the redacted history: the upstream remote and the mirror."""
    remote = repo.cfg("branch.main.remote")
    if remote:
        yield remote
    mirror = repo.cfg("memory.mirrorUrl") or repo.cfg("letta.memoryRepository.url")
    if mirror:
        yield mirror

