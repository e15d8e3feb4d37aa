"""The server's merge queue: a push to refs/land/<branch>/<id> is landed on the branch here.

Agents pushing one branch race for it: a push made on the tip it fetched loses when
another lands first, and costs the server a pack and a run of the gate for nothing. So
`git memory sync` pushes its commits to a ref no other push names
(refs/land/<branch>/<random>, with the push option `memory-land`, which is also how it
learns the server lands), where no push can lose a race. The pre-receive gate judges
them as it judges any push, and this post-receive hook lands them on the branch, one
lander at a time (a lock in the repository), which lands every push waiting for the
branch in one go, in turn, and checks them in one run of the validator:

- the branch has not moved: a fast-forward;
- it has: each commit replayed onto its tip (its tree merged with the tip; author,
  committer, dates and message kept), or, when the commits hold merges or signatures
  a replay would lose, one merge commit whose first parent is the tip;
- the branch was redacted since the commits were made, the replay conflicts, or the
  gate refuses what the replay made: nothing lands, and the client's sync replays or
  reports it, as it does a non-fast-forward.

What lands passes the same validator as a push (`check.pushed`, as the move from the
old tip: every replayed commit and tip to tip; if it refuses a batch, each push is
landed alone, so only the one at fault is refused), and moves the branch with a
compare-and-swap (plain git clients still push to the branch itself). The land refs
are deleted either way: the clients keep their commits. Each push's hook says what
happened to it, in one line the client reads from the push's `remote:` lines (the
lander leaves the outcome of another's push in a file under the git dir for it):

    memory-land: landed REF SHA BRANCH        (SHA is the branch's new tip)
    memory-land: conflict REF PATH...
    memory-land: refused REF                  (the gate's lines follow)
    memory-land: stale REF | busy REF | error REF

The server pushes nothing anywhere and moves no ref but the branch.
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import sys
import time

from gitmemfs.core import git
from gitmemfs.core.redact import redact
from gitmemfs.core.visible import visible

PREFIX = "refs/land/"
OPTION = "memory-land"
TAG = "memory-land:"
LOCK = "memory-land.lock"
OUTCOMES = "memory-land"  # in the git dir: the outcome of each push a lander landed for another
LOCK_WAIT = 300.0   # seconds a landing waits for the ones before it
TRIES = 5           # compare-and-swap tries against pushes made straight to the branch
ZERO = ("0" * 40, "0" * 64)
AUTHOR = {"GIT_AUTHOR_NAME": "git memory serve", "GIT_AUTHOR_EMAIL": "serve@localhost",
          "GIT_COMMITTER_NAME": "git memory serve", "GIT_COMMITTER_EMAIL": "serve@localhost"}
REDACT_OP = "^Memory-Op: redact$"
# Commit headers a replay cannot keep: signatures (over the old parents) and merge tags.
UNKEPT = (b"gpgsig", b"gpgsig-sha256", b"mergetag")

LANDED, CONFLICT, REFUSED, STALE, BUSY, ERROR = "landed", "conflict", "refused", "stale", "busy", "error"


class Outcome:
    def __init__(self, state: str, sha: str | None = None, lines: list[str] | None = None):
        self.state, self.sha, self.lines = state, sha, lines or []


def target_of(ref: str) -> str | None:
    """refs/land/<branch>/<id> -> refs/heads/<branch>; None for any other name."""
    if not ref.startswith(PREFIX):
        return None
    branch, _, token = ref[len(PREFIX):].rpartition("/")
    if not branch or not token:
        return None
    target = "refs/heads/" + branch
    if git.run(["check-ref-format", target], check=False).code != 0:
        return None
    return target


def post_receive(cwd: str, updates: list[tuple[str, str, str]]) -> int:
    """Land every refs/land/ ref this push made; one `memory-land:` line each. Never fails."""
    for _old, new, ref in updates:
        if not ref.startswith(PREFIX) or new in ZERO:
            continue
        target = target_of(ref)
        try:
            if target is None:
                git.run(["update-ref", "-d", ref, new], cwd=cwd, check=False)
                out = Outcome(ERROR, lines=["not a landing ref: use refs/land/<branch>/<id>"])
            else:
                with Locked(cwd) as held:
                    out = held.taken(ref) or held.land_all(target, ref)
        except Exception as exc:  # noqa: BLE001 - the client falls back to its own replay
            git.run(["update-ref", "-d", ref, new], cwd=cwd, check=False)
            out = Outcome(ERROR, lines=[f"{type(exc).__name__}: {exc}"])
        _say(out, ref, target)
    return 0


def _say(out: Outcome, ref: str, target: str | None) -> None:
    sys.stderr.write(visible(redact("\n".join(_lines(out, ref, target)))) + "\n")
    sys.stderr.flush()


def _lines(out: Outcome, ref: str, target: str | None) -> list[str]:
    if out.state == LANDED:
        return [f"{TAG} {LANDED} {ref} {out.sha} {target}"]
    if out.state == CONFLICT:
        return [f"{TAG} {CONFLICT} {ref} " + " ".join(out.lines[:20])]
    return [f"{TAG} {out.state} {ref}", *(f"{TAG} | {line}" for line in out.lines)]


class Locked:
    """One lander at a time per repository (flock: released if the hook dies). The
    holder lands every push waiting for that branch, and leaves each other push's
    outcome in a file for its own hook, which takes the lock next."""

    def __init__(self, cwd: str):
        self.cwd = cwd
        git_dir = git.run(["rev-parse", "--absolute-git-dir"], cwd=cwd).out.strip()
        self.path = os.path.join(git_dir, LOCK)
        self.outcomes = os.path.join(git_dir, OUTCOMES)
        self.fd = -1

    def __enter__(self) -> Locked:
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        until = time.monotonic() + LOCK_WAIT
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return self
            except BlockingIOError:
                if time.monotonic() > until:
                    os.close(self.fd)
                    raise TimeoutError(f"other landings held {self.path} for {LOCK_WAIT:g}s") from None
                time.sleep(0.01)

    def __exit__(self, *_: object) -> None:
        os.close(self.fd)  # releases the lock

    def _file(self, ref: str) -> str:
        return os.path.join(self.outcomes, hashlib.sha256(ref.encode()).hexdigest()[:32])

    def taken(self, ref: str) -> Outcome | None:
        """The outcome an earlier lander left for `ref` (read once, then removed)."""
        path = self._file(ref)
        try:
            with open(path, encoding="utf-8") as fh:
                state, sha, *lines = fh.read().split("\n")
        except (OSError, ValueError):
            return None
        os.unlink(path)
        return Outcome(state, sha or None, [line for line in lines if line])

    def land_all(self, target: str, mine: str) -> Outcome:
        """Land every push waiting for `target`, then delete their refs: the outcome of
        `mine`; the others' are left in their files."""
        prefix = PREFIX + target[len("refs/heads/"):] + "/"
        listed = git.run(["for-each-ref", "--format=%(objectname) %(refname)", prefix], cwd=self.cwd).out
        waiting = [(line[:line.index(" ")], line[line.index(" ") + 1:]) for line in listed.splitlines() if " " in line]
        outcomes = land(self.cwd, waiting, target)
        os.makedirs(self.outcomes, mode=0o700, exist_ok=True)
        self._forget_old()
        for ref, out in outcomes.items():
            if ref == mine:
                continue
            tmp = self._file(ref) + ".tmp"
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write("\n".join([out.state, out.sha or "", *out.lines]))
            os.replace(tmp, self._file(ref))
        gone = "".join(f"delete {ref} {tip}\n" for tip, ref in waiting)
        git.run(["update-ref", "--stdin"], cwd=self.cwd, input=gone, check=False)
        return outcomes.get(mine) or Outcome(ERROR, lines=["the landing ref was gone before it could land"])

    def _forget_old(self) -> None:
        """Outcomes no hook came for (it died): kept an hour."""
        now = time.time()
        for name in os.listdir(self.outcomes):
            path = os.path.join(self.outcomes, name)
            try:
                if now - os.stat(path).st_mtime > 3600:
                    os.unlink(path)
            except OSError:
                pass


def land(cwd: str, waiting: list[tuple[str, str]], target: str) -> dict[str, Outcome]:
    """Put the commits of each (tip, ref) on `target` in turn, all checked in one run of
    the validator; if it refuses, each push is landed alone, so only the one at fault
    is refused (see the module doc)."""
    for _ in range(TRIES):
        found = git.run(["rev-parse", "-q", "--verify", target + "^{commit}"], cwd=cwd, check=False)
        current = found.out.strip() if found.code == 0 else None
        outcomes, new = _stack(cwd, current, waiting)
        landing = [ref for ref, out in outcomes.items() if out.state == LANDED]
        if new is None or new == current or not landing:
            return outcomes
        refused = _judge(cwd, current, new, target)
        if refused is not None:
            if len(waiting) == 1:
                return {waiting[0][1]: refused}
            alone: dict[str, Outcome] = {}
            for tip, ref in waiting:
                alone.update(land(cwd, [(tip, ref)], target))
            return alone
        res = git.run(["update-ref", "-m", f"land: {len(landing)} push(es)", target, new, current or ""],
                      cwd=cwd, check=False)
        if res.code == 0:
            for ref in landing:
                outcomes[ref].sha = new
            return outcomes
        # a push straight to the branch moved it meanwhile: again, onto the new tip
    return {ref: Outcome(BUSY, lines=[f"{target} kept moving under pushes made straight to it"])
            for _tip, ref in waiting}


def _stack(cwd: str, current: str | None, waiting: list[tuple[str, str]]) -> tuple[dict[str, Outcome], str | None]:
    """Each push's commits onto the tip the ones before it made: (outcomes, new tip)."""
    outcomes: dict[str, Outcome] = {}
    new = current
    # Redaction records on the branch (usually none): a push made before one is stale.
    records = git.run(["rev-list", "--grep", REDACT_OP, current], cwd=cwd).lines() if current else []
    for tip, ref in waiting:
        made: str | Outcome
        if new is None:
            made = tip
        else:
            found = git.run(["merge-base", new, tip], cwd=cwd, check=False)
            base = found.out.strip() if found.code == 0 else ""
            if base == tip:
                outcomes[ref] = Outcome(LANDED, new)  # already there (a retried push)
                continue
            if not base:
                made = Outcome(STALE, lines=["these commits share no history with the branch"])
            elif base == new:
                made = tip
            elif any(not _is_ancestor(cwd, record, tip) for record in records):
                # the branch was redacted after these commits were made: replaying them could undo it
                made = Outcome(STALE, lines=["the branch was redacted since these commits were made"])
            else:
                made = _onto(cwd, new, tip)
        if isinstance(made, Outcome):
            outcomes[ref] = made
            continue
        new = made
        outcomes[ref] = Outcome(LANDED, new)
    return outcomes, new


def _judge(cwd: str, current: str | None, new: str, target: str) -> Outcome | None:
    """The validator on the move of `target` from `current` to `new`: None if it passes."""
    from gitmemfs.gate import check  # the gate's engine: only when there is something to land

    report = check.pushed(cwd, [(current or ZERO[0], new, target)])
    if report.ok:
        return None
    return Outcome(REFUSED, lines=[f"the gate refused these commits as landed on {target}:", *report.lines()])


def _is_ancestor(cwd: str, a: str, b: str) -> bool:
    return git.run(["merge-base", "--is-ancestor", a, b], cwd=cwd, check=False).code == 0


def _onto(cwd: str, current: str, tip: str) -> str | Outcome:
    """The commits of `tip` that `current` lacks, brought onto `current`: the new tip."""
    listed = git.run(["rev-list", "--reverse", "--topo-order", "--parents", tip, "--not", current], cwd=cwd)
    commits = [line.split() for line in listed.out.splitlines() if line.strip()]
    raws = _commits(cwd, [parts[0] for parts in commits])
    if any(len(parts) != 2 for parts in commits) or any(_unkept(raw) for raw in raws.values()):
        return _merge(cwd, current, tip, len(commits))
    parent = current
    for parts in commits:
        tree = _merged_tree(cwd, current, parts[0])
        if isinstance(tree, Outcome):
            return tree
        parent = _rewrite(cwd, raws[parts[0]], tree, parent)
    return parent


def _commits(cwd: str, shas: list[str]) -> dict[str, bytes]:
    """The raw commit objects, read by one `cat-file --batch`."""
    out = git.run(["cat-file", "--batch"], cwd=cwd, input="".join(f"{sha}\n" for sha in shas)).raw
    found: dict[str, bytes] = {}
    at = 0
    for sha in shas:
        eol = out.index(b"\n", at)
        size = int(out[at:eol].split()[2])
        found[sha] = out[eol + 1:eol + 1 + size]
        at = eol + 1 + size + 1
    return found


def _merged_tree(cwd: str, current: str, commit: str) -> str | Outcome:
    res = git.run(["merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", current, commit],
                  cwd=cwd, check=False, ok=(0, 1))
    if res.code not in (0, 1):
        raise git.GitError(res.argv, res.code, res.raw, res.err_raw)
    fields = res.out.split("\0")
    if res.code == 1:
        return Outcome(CONFLICT, lines=sorted({f for f in fields[1:] if f}))
    return fields[0].strip()


def _unkept(raw: bytes) -> bool:
    head = raw.partition(b"\n\n")[0]
    return any(line.split(b" ", 1)[0] in UNKEPT for line in head.split(b"\n"))


def _rewrite(cwd: str, raw: bytes, tree: str, parent: str) -> str:
    """The commit `raw` with a new tree and parent, every other byte kept."""
    head, sep, message = raw.partition(b"\n\n")
    lines = [line for line in head.split(b"\n") if not line.startswith((b"tree ", b"parent "))]
    text = b"\n".join([b"tree " + tree.encode(), b"parent " + parent.encode(), *lines]) + sep + message
    return git.run(["hash-object", "-t", "commit", "-w", "--stdin"], cwd=cwd, input=text).out.strip()


def _merge(cwd: str, current: str, tip: str, count: int) -> str | Outcome:
    tree = _merged_tree(cwd, current, tip)
    if isinstance(tree, Outcome):
        return tree
    message = (f"merge(land): {count} commit(s) onto the branch\n\n"
               "git memory serve merged instead of replaying: the commits hold merges or signatures, "
               "which a replay would lose.\n")
    return git.run(["commit-tree", "-p", current, "-p", tip, tree], cwd=cwd, input=message, env=AUTHOR).out.strip()
