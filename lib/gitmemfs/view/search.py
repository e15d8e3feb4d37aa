"""`git memory search`: what do I know about X, now or at any time in the past.

Reads committed trees only, never the work tree.

Ranked (the default): the query is read as words, in any form a person asks it ("When
did Mel paint the sunrise?"). Stop words are dropped from it, every other word is looked
up with its stem in the search index (view/searchindex.py: SQLite FTS5, porter stemming),
and files are ranked by FTS5's BM25 over three fields, the description weighing most,
then the path, then the body. The best candidates are re-ranked by proximity (the share
of the query one line of the file holds) and the exact phrase. Pinned files (`system/`)
compete on their merit unless `pinned` says first or omit. When no word of the query is
in the index (a number fragment, a symbol), the query is matched literally by `git grep`.

Each file shows its best lines (`lines`, default 3) with a line of context, long lines
cut around the match; the total is bounded (`budget` tokens, or the default cap) and
what is left out is counted: "N more lines in M files".

`regex`: one Perl-compatible pattern, by `git grep -P` at a revision (its PCRE match limit
bounds it); in past versions and over paths by Python's `re` in a child process with a
deadline (view/regexbound.py). `history`: every version each path ever had, the newest
commit in which each matching line still lived, ranked by the same index built in memory
over the versions that matched.
"""
from __future__ import annotations

import math
import re
import sqlite3
from typing import Any, Callable, Iterable, Sequence

from gitmemfs.core.errors import MemfsError, UsageError
from gitmemfs.core.repo import Repo
from gitmemfs.core.revision import resolve_with_tree
from gitmemfs.core.snapshot import is_hidden, parse_batch, parse_ls_tree
from gitmemfs.view import regexbound, searchindex
from gitmemfs.view.tokens import estimate

WHERE = ("all", "body", "description", "path")
PINNED_CHOICES = ("rank", "first", "omit")
DEFAULT_LIMIT = 20
DEFAULT_LINES = 3
DEFAULT_BUDGET = 4000  # tokens of output when no budget is given: about 16 KB
MAX_LINE = 300  # characters of one line shown; a longer line is cut around its match
PINNED = "system/"
# Field weights for FTS5's bm25(): the description is what the file is about, the
# path names it, the body is the long tail.
W_PATH, W_DESCRIPTION, W_BODY = 2.0, 4.0, 1.0
K1, B = 1.2, 0.75  # BM25's usual saturation and length normalisation
PROXIMITY, PHRASE = 0.5, 1.3  # re-ranking boosts: one line holding the query; its exact words
RERANK = 50  # candidates re-ranked by proximity and phrase
SMALL = 2000  # up to this many files, every match is scored by BM25F
POOL = 300  # beyond it, the best by FTS5's bm25() are
WEIGHT = {"words": W_PATH, "description": W_DESCRIPTION, "body": W_BODY}
_WORD = re.compile(r"\w+")

# Function words a question is made of: they carry no topic. Dropped from the query
# (unless nothing else is left), never from the index, so a phrase still matches.
STOP = frozenset("""
a about above after again against all am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has have
having he her here hers herself him himself his how i if in into is it its itself just me more most
my myself no nor not now of off on once only or other our ours ourselves out over own same she
should so some such than that the their theirs them themselves then there these they this those
through to too under until up very was we were what when where which while who whom why will with
would you your yours yourself yourselves
""".split())


class Hit:
    """One line shown: a match (`where` body, description or path) or its context."""

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
    """One file's lines, its description and its rank. `matches` holds every matching
    line, best first; `_bounded` picks the few shown (`hits`) and their context."""

    __slots__ = ("path", "description", "hits", "score", "commit", "present", "more", "matches", "body", "row")

    def __init__(self, path: str, description: str = ""):
        self.path = path
        self.description = description
        self.hits: list[Hit] = []  # what is shown: a path hit, the best lines and their context
        self.score = 0.0
        self.commit: str | None = None  # history mode: newest commit of any hit
        self.present = True  # history mode: still in the searched revision
        self.more = 0  # matching lines not shown
        self.matches: list[Hit] = []
        self.body: tuple[list[str], int] | None = None  # the body's lines and its first line number
        self.row: tuple[str, int] = ("", 0)  # the path's words and the description's line, for _lines

    @property
    def pinned(self) -> bool:
        return self.path.startswith(PINNED)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "description": self.description, "pinned": self.pinned,
                               "score": round(self.score, 4), "hits": [h.as_dict() for h in self.hits]}
        if self.more:
            out["more_lines"] = self.more
        if self.commit is not None:
            out["commit"] = self.commit
            out["present"] = self.present
        return out


class SearchResult:
    """What `search` found: ranked files, each with its best lines."""

    def __init__(self, query: str, rev: str | None, *, history: bool, where: str, regex: bool,
                 files: list[FileHits], total: int, mode: str, more_lines: int = 0, more_files: int = 0):
        self.query = query
        self.rev = rev
        self.history = history
        self.where = where
        self.regex = regex
        self.files = files
        self.total = total  # files that matched
        self.mode = mode  # "ranked", "literal" (no indexed word in the query) or "regex"
        self.more_lines = more_lines  # matching lines left out of the files shown
        self.more_files = more_files  # matching files not shown (limit or budget)

    @property
    def message(self) -> str:
        if not self.files:
            where = "in the history of " if self.history else "at "
            return (f"No memory matches {self.query!r} {where}{(self.rev or 'HEAD')[:7]}."
                    + ("" if self.history else " Try --history for facts that were deleted or changed."))
        lines = []
        for f in self.files:
            gone = "" if f.present else "  [deleted or moved since]"
            lines.append(f"{f.path}: {f.description}{gone}" if f.description else f"{f.path}:{gone}")
            for h in f.hits:
                if h.where == "path":
                    continue
                prefix = f"{h.commit[:7]}:" if h.commit else ""
                sep = "-" if h.where == "context" else ":"
                lines.append(f"{prefix}{f.path}{sep}{h.line}{sep} {h.text}")
        if self.more_lines:
            holding = sum(1 for f in self.files if f.more)
            lines.append(f"({self.more_lines} more matching lines in {holding} of these files; "
                         "raise --lines or --budget, or view the file)")
        if self.more_files:
            lines.append(f"... {self.more_files} more files match; raise --limit or --budget to see them")
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        return {"ok": True, "message": self.message, "query": self.query, "rev": self.rev,
                "history": self.history, "in": self.where, "regex": self.regex, "mode": self.mode,
                "count": self.total, "more_lines": self.more_lines, "more_files": self.more_files,
                "results": [f.as_dict() for f in self.files]}


# -- the public entry point -----------------------------------------------------------------

def search(repo: Repo, query: str, paths: Sequence[str] = (), *, regex: bool = False, where: str = "all",
           rev: str | None = None, history: bool = False, limit: int = DEFAULT_LIMIT,
           lines: int = DEFAULT_LINES, budget: int | None = None, pinned: str = "rank") -> SearchResult:
    """Search the memory at `rev` (HEAD), or every past version of it with `history`."""
    if where not in WHERE:
        raise UsageError(f"search: --in takes one of {', '.join(WHERE)}, got {where!r}")
    if pinned not in PINNED_CHOICES:
        raise UsageError(f"search: --pinned takes one of {', '.join(PINNED_CHOICES)}, got {pinned!r}")
    for name, value in (("--limit", limit), ("--lines", lines), ("--budget", budget)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise UsageError(f"search: {name} must be a positive whole number")
    if not isinstance(query, str) or not query.strip():
        raise UsageError("search: give a non-empty QUERY, e.g. git memory search 'phone number'")
    if "\n" in query or "\0" in query:
        raise UsageError("search: QUERY must be one line")
    found_rev = resolve_with_tree(repo, rev)
    sha, tree = found_rev if found_rev else (None, None)
    mode = "regex" if regex else "ranked"
    total: int | None = None
    if sha is None:
        return SearchResult(query, None, history=history, where=where, regex=regex, files=[], total=0, mode=mode)
    specs = pathspecs(paths)
    timeout = regexbound.timeout_of(repo.cfg("memory.regexTimeout"))
    if regex:
        regexbound.compile_checked(query, _smart_case(query))
        found = (_regex_history(repo, query, sha, specs, where, timeout) if history
                 else _regex_tree(repo, query, sha, specs, where, timeout))
    elif history:
        found = _words_history(repo, Query(query), sha, specs, where)
    else:
        assert tree is not None
        ranked = _ranked(repo, Query(query), tree, specs, where, pinned)
        if ranked is None:
            mode, found = "literal", _literal_tree(repo, query, sha, specs, where)
        else:
            found, total = ranked
    if pinned == "omit":
        found = [f for f in found if not f.pinned]
    found.sort(key=lambda f: (pinned == "first" and not f.pinned, -f.score, f.path))
    return _bounded(query, sha, found, len(found) if total is None else total, history=history, where=where,
                    regex=regex, mode=mode, limit=limit, lines=lines, budget=budget)


def pathspecs(paths: Iterable[str]) -> list[str]:
    """Literal pathspecs (a folder matches what is under it)."""
    out = []
    for given in paths:
        p = given.strip().strip("/")
        if p.startswith(":") or "\0" in p or "\n" in p:
            raise UsageError(f"search: not a memory path: {p!r}")
        if ".." in p.split("/") or given.startswith("/"):  # it would match nothing, silently
            raise UsageError(f"search: {given!r} is outside the memory; paths start at the memory's top, "
                             "e.g. system/ or notes/plans.md")
        p = "/".join(part for part in p.split("/") if part not in ("", "."))  # ./reference/ is reference/
        if not p:
            continue
        out.append(f":(literal){p}")
    return out


def _prefixes(specs: list[str]) -> list[str]:
    return [s[len(":(literal)"):] for s in specs]


def _under(path: str, prefixes: list[str]) -> bool:
    return not prefixes or any(path == p or path.startswith(p + "/") for p in prefixes)


def _smart_case(pattern: str) -> bool:
    """A regex is case-insensitive unless it has a capital (smart case, as ripgrep)."""
    return not any(c.isupper() for c in pattern)


# -- the query ------------------------------------------------------------------------------

class Query:
    """A query read as words: the content words (stop words dropped unless nothing else is
    left), their stems in the index's own tokenizer, and the phrase they make."""

    def __init__(self, text: str):
        self.text = text
        words = list(dict.fromkeys(w.lower() for w in _WORD.findall(text)))
        content = [w for w in words if w not in STOP]
        self.words = content or words
        self.phrase = " ".join(self.words) if len(content) >= 2 else ""
        self.stems: list[str] = list(self.words)
        self._line: re.Pattern[str] | None = None
        self._term_of: dict[str, int] = {}
        self.idf: list[float] = [1.0] * len(self.words)

    def fts(self, where: str) -> str:
        terms = " OR ".join(f'"{w}"' for w in self.words)  # \w+ words: nothing to escape
        column = {"all": "", "path": "words", "description": "description", "body": "body"}[where]
        return f"{column} : ({terms})" if column else terms

    def learn(self, con: sqlite3.Connection) -> None:
        """The words' stems, from the index's own tokenizer."""
        con.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.q USING fts5(x, tokenize='{searchindex.TOKENIZER}')")
        con.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.qv USING fts5vocab(temp, q, 'instance')")
        con.execute("DELETE FROM temp.q")
        con.executemany("INSERT INTO temp.q(rowid, x) VALUES (?, ?)", enumerate(self.words, start=1))
        stem_of = {doc: term for term, doc in con.execute("SELECT term, doc FROM temp.qv")}
        self.stems = [stem_of.get(i, w) for i, w in enumerate(self.words, start=1)]
        self._line = None

    def _pattern(self) -> re.Pattern[str]:
        if self._line is None:
            alts: dict[str, int] = {}
            for i, (word, stem) in enumerate(zip(self.words, self.stems)):
                for alt in (word, stem):
                    if alt and alt not in alts:
                        alts[alt] = i
            self._term_of = alts
            ordered = sorted(alts, key=len, reverse=True)
            self._line = re.compile(r"\b(" + "|".join(re.escape(a) for a in ordered) + ")", re.IGNORECASE)
        return self._line

    def terms_in(self, text: str) -> set[int]:
        """Indices of the query words that `text` holds in some form (word or stem, at a
        word's start: `paint` finds painted and paintings)."""
        return {self._term_of[m.group(1).lower()] for m in self._pattern().finditer(text)
                if m.group(1).lower() in self._term_of}

    def counts(self, text: str) -> dict[int, int]:
        """How often each query word occurs in `text`, in any of its forms."""
        out: dict[int, int] = {}
        for m in self._pattern().finditer(text):
            i = self._term_of.get(m.group(1).lower())
            if i is not None:
                out[i] = out.get(i, 0) + 1
        return out

    def weight(self, terms: set[int]) -> float:
        return sum(self.idf[i] for i in terms)

    def span(self, text: str) -> int | None:
        m = self._pattern().search(text)
        return m.start() if m else None


# -- ranked, at one revision ----------------------------------------------------------------

def _ranked(repo: Repo, q: Query, tree: str, specs: list[str], where: str,
            pinned: str) -> tuple[list[FileHits], int] | None:
    """Files ranked by the index at `tree`; None when the query has no word."""
    if not q.words:
        return None
    for attempt in (1, 2):
        index = searchindex.Index.open(repo)
        try:
            con = index.at(tree).con
            for check in (1, 2):
                con.execute("BEGIN")  # one snapshot for the queries below, whatever writers do meanwhile
                try:
                    found = _rank_in(con, q, where, _prefixes(specs), pinned)
                    if index.confirm([f.path for f in found[0]]) or check == 2:
                        return found
                finally:
                    con.execute("COMMIT")
                index.rebuild(tree)  # a row is not its blob's text: written behind our back
        except sqlite3.DatabaseError:
            index.discard()  # damaged while in use: built again once
            if attempt == 2:
                raise
        finally:
            index.close()
    return None


def _rank_in(con: sqlite3.Connection, q: Query, where: str, prefixes: list[str], pinned: str,
             commit: str | None = None) -> tuple[list[FileHits], int]:
    """The files FTS5 matches (any query word, by its stem), ranked by BM25F: each word's
    count in the three fields, weighted and length-normalised per field, through BM25's
    saturation, times the word's idf; then the best by proximity and phrase. In a memory
    of up to SMALL files every match is scored so; in a larger one, the POOL best by
    FTS5's own bm25() are. FTS5's bm25() is not the final score: it sets idf to ~0 for a
    word in more than half the files, which in a memory of twenty files ties every
    common word at zero."""
    q.learn(con)
    n_docs, *avg = con.execute("SELECT count(*), avg(len_words), avg(len_description), avg(len_body) "
                               "FROM docs").fetchone()
    average = dict(zip(searchindex.COLUMNS, (max(a or 0.0, 1.0) for a in avg)))
    con.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.vr USING fts5vocab(main, fts, 'row')")
    df = []
    for stem in q.stems:
        row = con.execute("SELECT doc FROM temp.vr WHERE term = ?", (stem,)).fetchone()
        df.append(row[0] if row else 0)
    q.idf = [math.log(1 + (n_docs - d + 0.5) / (d + 0.5)) for d in df]
    where_sql, params = _filters(prefixes, pinned == "omit")
    match = q.fts(where)
    total = con.execute(f"SELECT count(*) FROM fts JOIN docs d ON d.id = fts.rowid WHERE fts MATCH ?{where_sql}",
                        (match, *params)).fetchone()[0]
    if not total:
        return [], 0
    pool_sql = (f"SELECT d.id FROM fts JOIN docs d ON d.id = fts.rowid WHERE fts MATCH ?{where_sql} "
                f"ORDER BY bm25(fts, {W_PATH}, {W_DESCRIPTION}, {W_BODY})")
    if n_docs <= SMALL:
        ids = [r[0] for r in con.execute(pool_sql, (match, *params))]
    else:
        ids = [r[0] for r in con.execute(pool_sql + f" LIMIT {POOL}", (match, *params))]
        if pinned == "first":
            ids += [r[0] for r in con.execute(pool_sql.replace(" ORDER BY", f" AND {_PINNED_SQL} ORDER BY")
                                              + f" LIMIT {POOL}", (match, *params))]
    files = []
    for chunk in _chunks(sorted(set(ids)), 500):
        marks = ",".join("?" * len(chunk))
        for row in con.execute("SELECT path, words, description, desc_line, body, body_line, len_words, "
                               f"len_description, len_body FROM docs WHERE id IN ({marks})", chunk):
            files.append(_scored(q, row, where, average, commit))
    files.sort(key=lambda f: (pinned == "first" and not f.pinned, -f.score, f.path))
    top = files[:RERANK]
    total_weight = sum(q.idf) or 1.0
    for fh in top:
        _lines(q, fh, where)
        best = max((q.weight(q.terms_in(h.text)) for h in fh.matches), default=0.0)
        fh.score *= 1 + PROXIMITY * best / total_weight
        if q.phrase and fh.body is not None and q.phrase in " ".join(
                _WORD.findall((fh.description + " " + "\n".join(fh.body[0])).lower())):
            fh.score *= PHRASE
    top.sort(key=lambda f: (pinned == "first" and not f.pinned, -f.score, f.path))
    return top, total


_PINNED_SQL = f"substr(d.path, 1, {len(PINNED)}) = '{PINNED}'"


def _filters(prefixes: list[str], omit_pinned: bool) -> tuple[str, list[str]]:
    """SQL for `docs d`: under one of `prefixes` (a file or a folder), pinned files left out."""
    sql, params = "", []
    if prefixes:
        sql += " AND (" + " OR ".join("d.path = ? OR substr(d.path, 1, ?) = ?" for _ in prefixes) + ")"
        for p in prefixes:
            params += [p, str(len(p) + 1), p + "/"]
    if omit_pinned:
        sql += f" AND NOT {_PINNED_SQL}"
    return sql, params


def _scored(q: Query, row: tuple[Any, ...], where: str, average: dict[str, float],
            commit: str | None) -> FileHits:
    """A file with its BM25F score; its lines are read only if it makes the top (`_lines`)."""
    path, words, description, desc_line, body, body_line, *lengths = row
    fh = FileHits(path, description)
    fh.commit = commit
    column_of = {"all": None, "path": "words", "description": "description", "body": "body"}[where]
    counts: dict[int, float] = {}
    for column, text, length in zip(searchindex.COLUMNS, (words, description, body), lengths):
        if column_of in (None, column):
            norm = WEIGHT[column] / (1 - B + B * length / average[column])
            for i, n in q.counts(text).items():
                counts[i] = counts.get(i, 0.0) + n * norm
    fh.score = sum(q.idf[i] * tf * (K1 + 1) / (tf + K1) for i, tf in counts.items())
    fh.body = (body.split("\n"), body_line)
    fh.row = (words, desc_line)
    return fh


def _lines(q: Query, fh: FileHits, where: str) -> None:
    """The file's matching lines, best first, and a path hit."""
    words, desc_line = fh.row
    assert fh.body is not None
    body, body_line = fh.body
    matched = _matching_lines(q, fh.description, desc_line, "\n".join(body), body_line, where)
    if where in ("all", "path") and q.terms_in(words):
        fh.hits.append(Hit(0, fh.path, "path", fh.commit))
    matched.sort(key=lambda m: (-q.weight(m[2]), m[0]))
    fh.matches = [Hit(n, _cut(text, q.span(text)), kind, fh.commit) for n, text, _, kind in matched]


def _chunks(items: list[int], size: int) -> Iterable[list[int]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _matching_lines(q: Query, description: str, desc_line: int, body: str, body_line: int,
                    where: str) -> list[tuple[int, str, set[int], str]]:
    """(line number, text, query words it holds, where) for every line holding one."""
    found = []
    if where in ("all", "description") and description:
        terms = q.terms_in(description)
        if terms:
            found.append((desc_line, description, terms, "description"))
    if where in ("all", "body"):
        for n, line in enumerate(body.split("\n"), start=body_line):
            if line:
                terms = q.terms_in(line)
                if terms:
                    found.append((n, line.rstrip("\r"), terms, "body"))
    return found


def _cut(text: str, at: int | None) -> str:
    """A line as shown: whole when short, else MAX_LINE characters around its match."""
    if len(text) <= MAX_LINE:
        return text
    start = max(0, (at or 0) - MAX_LINE // 3)
    piece = text[start:start + MAX_LINE]
    return ("…" if start else "") + piece + ("…" if start + MAX_LINE < len(text) else "")


# -- literal and regex, at one revision -----------------------------------------------------

def _literal_tree(repo: Repo, query: str, sha: str, specs: list[str], where: str) -> list[FileHits]:
    """The query as one literal text (case-insensitive), for queries with no indexed word."""
    needle = " ".join(query.split()).lower()
    return _grep_tree(repo, ["-F", "-i", "-e", needle], sha, specs, where,
                      lambda names: [p for p in names if needle in p.lower()],
                      lambda description: needle in description.lower())


def _regex_tree(repo: Repo, pattern: str, sha: str, specs: list[str], where: str,
                timeout: float) -> list[FileHits]:
    ignore_case = _smart_case(pattern)

    def paths(names: list[str]) -> list[str]:
        hits = regexbound.matching_lines(pattern, names, ignore_case=ignore_case, timeout=timeout)
        return [names[i] for i in hits]

    def described(description: str) -> bool:
        return bool(regexbound.matching_lines(pattern, [description], ignore_case=ignore_case, timeout=timeout))

    return _grep_tree(repo, ["-P", *(["-i"] if ignore_case else []), "-e", pattern], sha, specs, where, paths,
                      described)


def _grep_tree(repo: Repo, how: list[str], sha: str, specs: list[str], where: str,
               path_match: Callable[[list[str]], list[str]],
               described: Callable[[str], bool]) -> list[FileHits]:
    """Files whose lines `git grep {how}` matches at `sha` (and whose paths `path_match`
    picks), each scored by its number of matching lines. A match on the description line
    counts when the description itself matches (`described`), not its key."""
    lines: dict[str, list[int]] = {}
    if where != "path":
        res = repo.git("grep", "-n", "-z", "-I", "--no-color", "--full-name", *how, sha, "--", *specs,
                       spool=True, check=False)
        if res.code not in (0, 1):
            err = res.err.strip()
            if "limit" in err.lower() or "pcre" in err.lower():
                raise MemfsError("search: the regular expression hit PCRE2's match limit (git grep -P) "
                                 "before it could be decided; nested repeats such as (a+)+ backtrack "
                                 "without end: simplify the pattern")
            raise MemfsError(f"search: git grep failed: {err.splitlines()[-1] if err else res.code}")
        prefix = sha + ":"
        for record in res.raw.decode("utf-8", "replace").split("\n"):
            parts = record.split("\0", 2)
            if len(parts) == 3 and parts[1].isdigit():
                path = parts[0][len(prefix):] if parts[0].startswith(prefix) else parts[0]
                if not is_hidden(path):
                    lines.setdefault(path, []).append(int(parts[1]))
    by_path: set[str] = set()
    if where in ("all", "path"):
        listing = repo.git("ls-tree", "-r", "-z", "--full-tree", "--name-only", sha, "--", *specs, spool=True)
        names = [n for n in listing.raw.decode("utf-8", "replace").split("\0") if n and not is_hidden(n)]
        by_path = set(path_match(names))
    blobs = _read_blobs(repo, [f"{sha}:{p}" for p in set(lines) | by_path if "\n" not in p])
    out = []
    for path in set(lines) | by_path:
        text = _text(blobs.get(f"{sha}:{path}"))
        fh = _file_from_lines(path, text, lines.get(path, []), where, None, described)
        if path in by_path:
            fh.hits.append(Hit(0, path, "path"))
        if fh.matches or fh.hits:
            fh.score = len(fh.matches) + (0.5 if path in by_path else 0.0)
            out.append(fh)
    return out


def _file_from_lines(path: str, text: str, numbers: list[int], where: str, commit: str | None,
                     described: Callable[[str], bool]) -> FileHits:
    """A file's matches from the numbers of its matching lines: the description line counts
    as the description, body lines as the body, other frontmatter never."""
    description, desc_line, body, body_line = searchindex.split_frontmatter(text)
    fh = FileHits(path, description)
    fh.commit = commit
    all_lines = text.split("\n")
    for n in sorted(set(numbers)):
        if desc_line and n == desc_line and where in ("all", "description") and described(description):
            fh.matches.append(Hit(n, _cut(description, 0), "description", commit))
        elif n >= body_line and where in ("all", "body") and n <= len(all_lines):
            fh.matches.append(Hit(n, _cut(all_lines[n - 1].rstrip("\r"), 0), "body", commit))
    fh.body = (body.split("\n"), body_line)
    return fh


# -- every past version -----------------------------------------------------------------------

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
            if new.strip("0"):
                lived.setdefault((path, new), shas[0])  # newest first: keep the first seen
            if old.strip("0") and parent is not None:
                lived.setdefault((path, old), parent)
    return lived, present


def _versions(repo: Repo, sha: str, specs: list[str]) -> tuple[list[tuple[str, str, str, str]], set[str]]:
    """(path, blob, newest commit, text) of every version, newest first; present paths."""
    lived, present = history_versions(repo, sha, specs)
    order = {c: i for i, c in enumerate(repo.git("rev-list", sha, spool=True).out.split())}
    blobs = _read_blobs(repo, [oid for _, oid in lived])
    ranked = sorted(lived.items(), key=lambda kv: order.get(kv[1], 1 << 30))
    return [(path, oid, commit, _text(blobs.get(oid))) for (path, oid), commit in ranked], present


def _merge_versions(found: dict[str, FileHits], path: str, fresh: FileHits, present: set[str]) -> None:
    """Add one version's matches to the file's: each distinct line once, at its newest."""
    fh = found.get(path)
    if fh is None:
        fh = found[path] = fresh
        fh.present = path in present
        fh.body = None  # its lines come from several versions: no context in history
        return
    seen = {(h.where, h.text) for h in fh.matches}
    for h in fresh.matches:
        if (h.where, h.text) not in seen:
            seen.add((h.where, h.text))
            fh.matches.append(h)
    if not fh.hits and fresh.hits:
        fh.hits = list(fresh.hits)


def _words_history(repo: Repo, q: Query, sha: str, specs: list[str], where: str) -> list[FileHits]:
    versions, present = _versions(repo, sha, specs)
    scratch = searchindex.scratch()
    try:
        q.learn(scratch)  # the stems; the weights come once the matching versions are in
        found: dict[str, FileHits] = {}
        newest_text: dict[str, tuple[str, str]] = {}
        for path, oid, commit, text in versions:
            description, desc_line, body, body_line = searchindex.split_frontmatter(text)
            matched = _matching_lines(q, description, desc_line, body, body_line, where)
            fresh = FileHits(path, description)
            fresh.commit = commit
            fresh.matches = [Hit(n, _cut(t, q.span(t)), kind, commit) for n, t, _, kind in matched]
            if where in ("all", "path") and q.terms_in(searchindex.path_words(path)):
                fresh.hits.append(Hit(0, path, "path", commit))
            if fresh.matches or fresh.hits:
                newest_text.setdefault(path, (oid, text))
                _merge_versions(found, path, fresh, present)
        for path, (oid, text) in newest_text.items():
            searchindex.add(scratch, path, oid, text)
        scores = {fh.path: fh.score for fh in _rank_in(scratch, q, where, [], "rank")[0]}
    finally:
        scratch.close()
    for fh in found.values():
        fh.score = scores.get(fh.path, 0.0)
        fh.matches.sort(key=lambda h: -q.weight(q.terms_in(h.text)))  # stable: newest first within a weight
    return list(found.values())


def _regex_history(repo: Repo, pattern: str, sha: str, specs: list[str], where: str,
                   timeout: float) -> list[FileHits]:
    versions, present = _versions(repo, sha, specs)
    ignore_case = _smart_case(pattern)
    matched = regexbound.matching_lines(pattern, [text for _, _, _, text in versions], ignore_case=ignore_case,
                                        timeout=timeout)
    by_path: set[str] = set()
    if where in ("all", "path"):
        names = sorted({path for path, _, _, _ in versions})
        by_path = {names[i] for i in regexbound.matching_lines(pattern, names, ignore_case=ignore_case,
                                                               timeout=timeout)}
    descriptions = sorted({searchindex.split_frontmatter(text)[0] for _, _, _, text in versions} - {""})
    matching = regexbound.matching_lines(pattern, descriptions, ignore_case=ignore_case, timeout=timeout)
    described_ok = {descriptions[i] for i in matching}

    def described(description: str) -> bool:
        return description in described_ok

    found: dict[str, FileHits] = {}
    for i, (path, _oid, commit, text) in enumerate(versions):
        fresh = _file_from_lines(path, text, matched.get(i, []), where, commit, described)
        if path in by_path:
            fresh.hits.append(Hit(0, path, "path", commit))
        if fresh.matches or fresh.hits:
            _merge_versions(found, path, fresh, present)
    for fh in found.values():
        fh.score = len(fh.matches) + (0.5 if fh.hits else 0.0)
    return list(found.values())


# -- what is shown ----------------------------------------------------------------------------

def _bounded(query: str, sha: str, found: list[FileHits], total: int, *, history: bool, where: str, regex: bool,
             mode: str, limit: int, lines: int, budget: int | None) -> SearchResult:
    """The first `limit` files, each with its best `lines` lines and a line of context
    around each, within `budget` tokens (DEFAULT_BUDGET when none is given)."""
    cap = budget or DEFAULT_BUDGET
    used = 0
    shown: list[FileHits] = []
    more_lines = 0
    for fh in found:
        if len(shown) >= limit:
            break
        header = len(fh.path) + len(fh.description) + 4
        picked = fh.matches[:lines]
        while True:
            hits = _with_context(fh, picked)
            cost = estimate(header + sum(len(fh.path) + len(h.text) + 12 for h in hits))
            if used + cost <= cap or not picked or (not shown and len(picked) == 1):
                break
            picked = picked[:-1]
        if used + cost > cap and shown:
            break
        used += cost
        fh.hits = [h for h in fh.hits if h.where == "path"] + hits
        fh.more = len(fh.matches) - len(picked)
        more_lines += fh.more
        shown.append(fh)
        if used >= cap:
            break
    return SearchResult(query, sha, history=history, where=where, regex=regex, files=shown, total=total,
                        mode=mode, more_lines=more_lines, more_files=total - len(shown))


def _with_context(fh: FileHits, picked: list[Hit]) -> list[Hit]:
    """The picked lines, and the body line before and after each, in file order."""
    if not picked:
        return []
    by_line = {h.line: h for h in picked}
    if fh.body is not None:
        body, first = fh.body
        for h in picked:
            if h.where != "body":
                continue
            for n in (h.line - 1, h.line + 1):
                i = n - first
                if n not in by_line and 0 <= i < len(body) and body[i].strip():
                    by_line[n] = Hit(n, _cut(body[i].rstrip("\r"), 0), "context", h.commit)
    if fh.body is None:  # history: lines of several versions, newest first
        return list(picked)
    return [by_line[n] for n in sorted(by_line)]


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

