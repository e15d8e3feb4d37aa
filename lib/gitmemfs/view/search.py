"""`git memory search`: what do I know about X, now or at any time in the past.

Reads committed trees only, never the work tree:
- at a revision (HEAD by default): one `git grep` over the commit's tree (threaded,
  reads blobs straight from the object store), one `ls-tree` for path matches and
  blob ids, one `cat-file --batch` for the files that matched (descriptions, ranking);
- with `history`: one `git log --raw` lists every version each path ever had, one
  `cat-file --batch` reads each distinct blob once, and the match runs here. Each
  hit reports the newest commit in which that line still lived, so deleted and
  overwritten facts are found too.

Matching: literal by default, case-insensitive unless the query has a capital
(smart case, as ripgrep and vim do). Several words: files holding every word (on
any line); when no file has them all, files holding any of them. `regex`: one
Perl-compatible pattern (git grep -P), read by Python's `re` in history mode.

Ranking: pinned files (`system/`) first, then BM25 (k1 1.2, b 0.75) over the
words of each matched file, with the description counted twice and a bonus for
the exact phrase and for a path match. A small scorer of our own: the candidates
are already in memory after the grep, the formula is ten lines, and a library
(rank-bm25 pulls numpy: ~100 ms of import) would cost more than the whole search
of a typical memory.
"""
from __future__ import annotations

import math
import re
from typing import Any, Iterable, Sequence

from gitmemfs.core import git
from gitmemfs.core.errors import UsageError
from gitmemfs.core.repo import Repo
from gitmemfs.core.revision import resolve
from gitmemfs.core.snapshot import is_hidden, parse_batch, parse_ls_tree

WHERE = ("all", "body", "description", "path")
DEFAULT_LIMIT = 20
MAX_RANKED = 2000  # files read and ranked in full; beyond this, a rough pre-rank picks them
PINNED = "system/"
K1, B = 1.2, 0.75
_WORD = re.compile(r"\w+")
_DESCRIPTION = re.compile(r"[ \t]*description[ \t]*:")


class Hit:
    """One matching line (`line` 0 and `where` "path" for a match on the path alone)."""

    __slots__ = ("line", "text", "where", "commit")

    def __init__(self, line: int, text: str, where: str, commit: str | None = None):
        self.line = line
        self.text = text
        self.where = where
        self.commit = commit  # history mode: the newest commit where this line lived

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"line": self.line, "text": self.text, "in": self.where}
        if self.commit is not None:
            out["commit"] = self.commit
        return out


class FileHits:
    """One file's matches, its description and its rank."""

    __slots__ = ("path", "description", "hits", "score", "commit", "present", "terms", "doc")

    def __init__(self, path: str, description: str = ""):
        self.path = path
        self.description = description
        self.hits: list[Hit] = []
        self.score = 0.0
        self.commit: str | None = None  # history mode: newest commit of any hit
        self.present = True  # history mode: still in the searched revision
        self.terms: set[int] = set()
        self.doc = ""  # the text ranked (history: the newest matching version)

    @property
    def pinned(self) -> bool:
        return self.path.startswith(PINNED)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "description": self.description, "pinned": self.pinned,
                               "score": round(self.score, 4), "hits": [h.as_dict() for h in self.hits]}
        if self.commit is not None:
            out["commit"] = self.commit
            out["present"] = self.present
        return out


class SearchResult:
    """What `search` found: ranked files, each with its matching lines."""

    def __init__(self, query: str, rev: str | None, *, history: bool, where: str, regex: bool,
                 files: list[FileHits], total: int, mode: str):
        self.query = query
        self.rev = rev
        self.history = history
        self.where = where
        self.regex = regex
        self.files = files
        self.total = total  # files that matched before --limit
        self.mode = mode  # "all" (every word), "any" (fallback), "phrase" (one term), "regex"

    @property
    def message(self) -> str:
        if not self.files:
            where = "in the history of " if self.history else "at "
            return (f"No memory matches {self.query!r} {where}{(self.rev or 'HEAD')[:7]}."
                    + ("" if self.history else " Try --history for facts that were deleted or changed."))
        lines = []
        if self.mode == "any":
            lines.append("(no file holds every word; files holding any of them)")
        for f in self.files:
            gone = "" if f.present else "  [deleted or moved since]"
            lines.append(f"{f.path}: {f.description}{gone}" if f.description else f"{f.path}:{gone}")
            for h in f.hits:
                if h.where == "path":
                    continue
                prefix = f"{h.commit[:7]}:" if h.commit else ""
                lines.append(f"{prefix}{f.path}:{h.line}: {h.text}")
        if self.total > len(self.files):
            lines.append(f"... {self.total - len(self.files)} more files match; raise --limit to see them")
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        return {"ok": True, "message": self.message, "query": self.query, "rev": self.rev,
                "history": self.history, "in": self.where, "regex": self.regex, "mode": self.mode,
                "count": self.total, "results": [f.as_dict() for f in self.files]}


class Matcher:
    """The query's terms, matched line by line the same way in git grep and here."""

    def __init__(self, query: str, *, regex: bool):
        if not isinstance(query, str) or not query.strip():
            raise UsageError("search: give a non-empty QUERY, e.g. git memory search 'phone number'")
        if "\n" in query or "\0" in query:
            raise UsageError("search: QUERY must be one line")
        self.query = query
        self.regex = regex
        self.ignore_case = not any(c.isupper() for c in query)
        if regex:
            try:
                self.pattern = re.compile(query, re.IGNORECASE if self.ignore_case else 0)
            except re.error as exc:
                raise UsageError(f"search: not a valid regular expression: {exc}; drop --regex to "
                                 "search for the text literally") from None
            self.terms = [query]
        else:
            words = list(dict.fromkeys(query.split()))
            self.terms = words
            self.phrase = " ".join(query.split())
            if self.ignore_case:
                self.terms = list(dict.fromkeys(w.lower() for w in words))
                self.phrase = self.phrase.lower()

    def grep_args(self, every: bool = False) -> list[str]:
        args = ["-P" if self.regex else "-F"]
        if every and len(self.terms) > 1:
            args.append("--all-match")
        if self.ignore_case:
            args.append("-i")
        for term in self.terms:
            args += ["-e", term]
        return args

    def fold(self, text: str) -> str:
        return text.lower() if self.ignore_case else text

    def line_terms(self, line: str) -> set[int]:
        """Indices of the terms this line holds."""
        if self.regex:
            return {0} if self.pattern.search(line) else set()
        folded = self.fold(line)
        return {i for i, t in enumerate(self.terms) if t in folded}

    def count(self, text: str, i: int) -> int:
        if self.regex:
            return sum(1 for _ in self.pattern.finditer(text))
        return self.fold(text).count(self.terms[i])

    def as_phrase(self) -> Matcher:
        """The same query as one literal term: the exact text, spaces normalised."""
        other = Matcher(self.phrase if not self.ignore_case else " ".join(self.query.split()), regex=False)
        other.terms = [self.phrase]
        other.phrase = self.phrase
        other.ignore_case = self.ignore_case
        return other

    def phrase_in(self, text: str) -> bool:
        return (not self.regex and len(self.terms) > 1
                and self.phrase in " ".join(self.fold(text).split()))


# -- the public entry point -----------------------------------------------------------------

def search(repo: Repo, query: str, paths: Sequence[str] = (), *, regex: bool = False, where: str = "all",
           rev: str | None = None, history: bool = False, limit: int = DEFAULT_LIMIT) -> SearchResult:
    """Search the memory at `rev` (HEAD), or every past version of it with `history`."""
    if where not in WHERE:
        raise UsageError(f"search: --in takes one of {', '.join(WHERE)}, got {where!r}")
    if limit < 1:
        raise UsageError("search: --limit must be at least 1")
    matcher = Matcher(query, regex=regex)
    sha = resolve(repo, rev)
    if sha is None:
        return SearchResult(query, None, history=history, where=where, regex=regex, files=[], total=0,
                            mode="regex" if regex else "all")
    specs = pathspecs(paths)

    def run(m: Matcher, every: bool = True) -> tuple[dict[str, FileHits], int, int]:
        if history:
            return (*_search_history(repo, m, sha, specs, where), 0)
        return _search_tree(repo, m, sha, specs, where, every)

    kept: list[FileHits] = []
    if not regex and len(matcher.terms) > 1:
        # Literal first: the exact text, one cheap pattern. Only when no file holds it,
        # the words: files holding every word, and failing that, any of them.
        phrase = matcher.as_phrase()
        found, n_docs, skipped = run(phrase)
        mode, kept = _combine(phrase, found)
        if kept:
            matcher = phrase
    if not kept:
        found, n_docs, skipped = run(matcher)
        mode, kept = _combine(matcher, found)
        if mode == "any" and not history:
            # The grep asked for files holding every word and found none: ask for any.
            found, n_docs, skipped = run(matcher, every=False)
            mode, kept = _combine(matcher, found)
    _rank(matcher, kept, n_docs)
    kept.sort(key=lambda f: (not f.pinned, -f.score, f.path))
    return SearchResult(query, sha, history=history, where=where, regex=regex, files=kept[:limit],
                        total=len(kept) + skipped, mode=mode)


def pathspecs(paths: Iterable[str]) -> list[str]:
    """Literal pathspecs (a folder matches what is under it)."""
    out = []
    for p in paths:
        p = p.strip().strip("/")
        if not p or p == ".":
            continue
        if p.startswith(":") or "\0" in p or "\n" in p:
            raise UsageError(f"search: not a memory path: {p!r}")
        out.append(f":(literal){p}")
    return out


# -- at one revision ------------------------------------------------------------------------

def _search_tree(repo: Repo, m: Matcher, sha: str, specs: list[str], where: str,
                 every: bool = True) -> tuple[dict[str, FileHits], int, int]:
    """Files matching at `sha`. `every`: only files holding every word (one grep
    with --all-match, which keeps a common word from listing the whole memory)."""
    # The grep is the slow part: it runs in a thread while ls-tree lists the blob ids.
    grep = None
    if where != "path":
        grep = _Background(repo, ["grep", "-n", "-z", "-I", "--no-color", "--full-name", *m.grep_args(every),
                                  sha, "--", *specs])
    listing = repo.git("ls-tree", "-r", "-z", "--full-tree", "--name-only", sha, "--", *specs, spool=True)
    names = listing.raw.decode("utf-8", "replace")
    n_docs = names.count("\0")
    found: dict[str, FileHits] = {}
    if where in ("all", "path"):
        for path, terms in _path_matches(m, names).items():
            if not is_hidden(path):
                fh = found.setdefault(path, FileHits(path))
                fh.terms |= terms
                fh.hits.append(Hit(0, path, "path"))
    lines: dict[str, list[tuple[int, str]]] = {}
    if grep is not None:
        res = grep.result()
        prefix = sha + ":"
        for record in res.raw.decode("utf-8", "replace").split("\n"):
            if not record:
                continue
            parts = record.split("\0", 2)
            if len(parts) != 3 or not parts[1].isdigit():
                continue
            path = parts[0][len(prefix):] if parts[0].startswith(prefix) else parts[0]
            if not is_hidden(path):
                lines.setdefault(path, []).append((int(parts[1]), parts[2]))
    candidates = set(lines) | set(found)
    skipped = 0
    if len(candidates) > MAX_RANKED:
        # A word most files hold: rank only the likeliest files in full (pinned
        # first, then by occurrences on their matching lines), and count the rest.
        def rough(path: str) -> tuple[bool, int]:
            return (not path.startswith(PINNED),
                    -sum(m.count(text, i) for _, text in lines.get(path, ()) for i in range(len(m.terms))))

        ranked = sorted(candidates, key=rough)[:MAX_RANKED]
        skipped = len(candidates) - len(ranked)
        candidates = set(ranked)
        lines = {p: v for p, v in lines.items() if p in candidates}
        found = {p: v for p, v in found.items() if p in candidates}
    # Only the candidates are read, by name (git finds them in the tree): listing
    # 100,000 blob ids and building a dict of them costs more than the grep.
    blobs = _read_blobs(repo, [f"{sha}:{p}" for p in candidates if "\n" not in p])
    for path, matched in lines.items():
        text = _text(blobs.get(f"{sha}:{path}"))
        fh = found.setdefault(path, FileHits(path))
        _classify(m, fh, matched, text, where)
    for path, fh in found.items():
        text = _text(blobs.get(f"{sha}:{path}"))
        fh.description = description_of(text)
        fh.doc = text
    return {p: f for p, f in found.items() if f.terms}, n_docs, skipped


def _path_matches(m: Matcher, names: str) -> dict[str, set[int]]:
    """Paths (NUL-separated `names`) holding a term: one scan of the listing per term,
    so only the matching paths cost Python work."""
    out: dict[str, set[int]] = {}
    if m.regex:
        for path in names.split("\0"):
            if path and m.line_terms(path):
                out[path] = {0}
        return out
    folded = m.fold(names)
    for i, term in enumerate(m.terms):
        if "\0" in term:
            continue
        pos = folded.find(term)
        while pos >= 0:
            start = folded.rfind("\0", 0, pos) + 1
            end = folded.find("\0", pos)
            end = len(folded) if end < 0 else end
            out.setdefault(names[start:end], set()).add(i)
            pos = folded.find(term, end)
    return out


class _Background:
    """One git command run in a thread (git releases the GIL: it is another process)."""

    def __init__(self, repo: Repo, args: list[str]):
        import threading

        self._res: git.Result | None = None
        self._exc: BaseException | None = None

        def work() -> None:
            try:
                self._res = repo.git(*args, spool=True, ok=(0, 1))
            except BaseException as exc:  # noqa: BLE001 - re-raised by result()
                self._exc = exc

        self._thread = threading.Thread(target=work, daemon=True)
        self._thread.start()

    def result(self) -> git.Result:
        self._thread.join()
        if self._exc is not None:
            raise self._exc
        assert self._res is not None
        return self._res


def _classify(m: Matcher, fh: FileHits, matched: list[tuple[int, str]], text: str, where: str,
              commit: str | None = None) -> None:
    """Sort a file's matching lines into description and body hits (frontmatter's
    other keys never count) and note the terms each holds."""
    fm_end = frontmatter_end(text)
    for number, line in matched:
        if number <= fm_end:
            if not _DESCRIPTION.match(line):
                continue
            kind = "description"
            shown = line.split(":", 1)[1].strip()
        else:
            kind = "body"
            shown = line.rstrip("\r")
        if where not in ("all", kind):
            continue
        terms = m.line_terms(shown if kind == "description" else line)
        if not terms:
            continue
        fh.terms |= terms
        fh.hits.append(Hit(number, shown, kind, commit))


def frontmatter_end(text: str) -> int:
    """The line number of the closing `---` (0 when there is no frontmatter)."""
    if not text.startswith("---"):
        return 0
    lines = text.split("\n", 200)
    if lines[0].rstrip(" \t\r") != "---":
        return 0
    for i, line in enumerate(lines[1:200], start=2):
        if line.rstrip(" \t\r") == "---":
            return i
    return 0


def description_of(text: str) -> str:
    end = frontmatter_end(text)
    if not end:
        return ""
    for line in text.split("\n", end)[1:end - 1]:
        if _DESCRIPTION.match(line):
            value = line.split(":", 1)[1].strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            return " ".join(value.split())
    return ""


def _text(data: bytes | None) -> str:
    return "" if data is None else data.decode("utf-8", "replace")


def _read_blobs(repo: Repo, oids: Iterable[str]) -> dict[str, bytes | None]:
    """Objects by oid or `rev:path`, through one `cat-file --batch`."""
    wanted = sorted(set(oids))
    if not wanted:
        return {}
    res = repo.git("cat-file", "--batch", "--buffer", input="".join(o + "\n" for o in wanted),
                   spool=len(wanted) > 1000)
    return parse_batch(res.raw, wanted)


# -- every past version ---------------------------------------------------------------------

def history_versions(repo: Repo, sha: str, specs: list[str]) -> tuple[dict[tuple[str, str], str], set[str]]:
    """Every (path, blob) the history of `sha` held, with the newest commit that still
    had it; and the paths present at `sha`. One `git log --raw`, one `ls-tree`."""
    lived: dict[tuple[str, str], str] = {}
    listing = repo.git("ls-tree", "-r", "-z", "--full-tree", sha, "--", *specs, spool=True)
    present = set()
    for e in parse_ls_tree(listing.raw):
        if not is_hidden(e.path):
            lived[(e.path, e.oid)] = sha
            present.add(e.path)
    res = repo.git("log", "--format=%x01%H %P", "--raw", "-z", "--no-abbrev", "--no-renames",
                   "--diff-merges=first-parent", sha, "--", *specs, spool=True)
    zero = "0" * 40
    for record in res.raw.decode("utf-8", "replace").split("\x01"):
        if not record:
            continue
        fields = record.split("\0")
        shas = fields[0].split()
        parent = shas[1] if len(shas) > 1 else None
        i = 1
        while i + 1 < len(fields):
            meta = fields[i].strip("\n")
            path = fields[i + 1]
            i += 2
            if not meta.startswith(":") or is_hidden(path):
                continue
            parts = meta[1:].split(" ")
            if len(parts) < 5:
                continue
            old, new = parts[2], parts[3]
            if new != zero:
                lived.setdefault((path, new), shas[0])  # newest first: keep the first seen
            if old != zero and parent is not None:
                lived.setdefault((path, old), parent)
    return lived, present


def _search_history(repo: Repo, m: Matcher, sha: str, specs: list[str],
                    where: str) -> tuple[dict[str, FileHits], int]:
    lived, present = history_versions(repo, sha, specs)
    order = _commit_order(repo, sha)
    blobs = _read_blobs(repo, [oid for _, oid in lived])
    found: dict[str, FileHits] = {}
    newest: dict[tuple[str, str, str], int] = {}
    # The newest versions first, so each distinct hit keeps its newest commit.
    for (path, oid), commit in sorted(lived.items(), key=lambda kv: order.get(kv[1], 1 << 30)):
        fh = found.get(path) or FileHits(path)
        fh.present = path in present
        before = len(fh.hits)
        if where in ("all", "path") and not any(h.where == "path" for h in fh.hits):
            terms = m.line_terms(path)
            if terms:
                fh.terms |= terms
                fh.hits.append(Hit(0, path, "path", commit))
        if where != "path":
            text = _text(blobs.get(oid))
            matched = [(n, line) for n, line in enumerate(text.split("\n"), start=1) if m.line_terms(line)]
            if matched:
                fresh = FileHits(path)
                _classify(m, fresh, matched, text, where, commit)
                for h in fresh.hits:
                    key = (h.where, h.text, path)
                    if key in newest:
                        continue
                    newest[key] = order.get(commit, 0)
                    fh.hits.append(h)
                fh.terms |= fresh.terms
                if not fh.doc:
                    fh.description = description_of(text)
                    fh.doc = text
        if len(fh.hits) > before and fh.commit is None:
            fh.commit = commit
        if fh.hits and not fh.doc:  # the newest version with a hit describes the file
            fh.doc = _text(blobs.get(oid))
            fh.description = description_of(fh.doc)
        if fh.hits:
            found[path] = fh
    for fh in found.values():
        fh.hits.sort(key=lambda h: (order.get(h.commit or "", 0), h.line))
    return found, max(len(present), 1)


def _commit_order(repo: Repo, sha: str) -> dict[str, int]:
    """Commit -> position in the history of `sha`, newest first (0)."""
    res = repo.git("rev-list", sha, spool=True)
    return {c: i for i, c in enumerate(res.out.split())}


# -- combining terms and ranking ------------------------------------------------------------

def _combine(m: Matcher, found: dict[str, FileHits]) -> tuple[str, list[FileHits]]:
    if m.regex:
        return "regex", list(found.values())
    if len(m.terms) == 1:
        return "phrase", list(found.values())
    every = set(range(len(m.terms)))
    both = [f for f in found.values() if f.terms >= every]
    if both:
        return "all", both
    return "any", list(found.values())


def _rank(m: Matcher, files: list[FileHits], n_docs: int) -> None:
    """BM25 over each file's words; df counted among the files that matched any term."""
    if not files:
        return
    docs = [f.doc for f in files]
    lengths = [max(len(_WORD.findall(d)), 1) for d in docs]
    avgdl = sum(lengths) / len(lengths)
    n = max(n_docs, len(files))
    df = [sum(1 for f in files if i in f.terms) for i in range(len(m.terms))]
    for f, doc, dl in zip(files, docs, lengths):
        score = 0.0
        desc = f.description
        for i in range(len(m.terms)):
            if i not in f.terms:
                continue
            idf = math.log(1 + (n - df[i] + 0.5) / (df[i] + 0.5))
            tf = m.count(doc, i) + m.count(desc, i)  # the description counts twice
            if tf == 0 and any(h.where == "path" for h in f.hits):
                tf = 1
            score += idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * dl / avgdl))
        if m.phrase_in(doc):
            score *= 1.5
        elif len(m.terms) > 1 and any(len(m.line_terms(h.text)) == len(m.terms) for h in f.hits):
            score *= 1.3  # every word on one line: near each other, likely one fact
        if any(h.where == "path" for h in f.hits):
            score += 0.5
        f.score = score
