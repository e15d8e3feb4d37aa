"""`git memory sync` (DESIGN §7).

Every network call goes through `network.Network` (credentials from `auth`,
transient failures retried). Sync runs under the writer lock, fetches first,
never force-pushes and never resets local commits away. When the remote has
commits we lack (known after the fetch, or learned from a rejected push), the
local commits are brought onto it, with the old head kept at
refs/memory/backup/<utc>: rebased when they are a straight line, merged when
they hold merges (a dream's `merge(dream)` commit and its trailers must survive,
and so must the ids the dream state refers to). The result is checked with the
shared validator and pushed; a rebase or merge that conflicts changes nothing.

Many agents share one server: a push refused because the remote moved meanwhile
(or because another push held the branch's lock) is tried again, with jittered
exponential backoff, until it lands or the deadline passes (memory.syncDeadline,
60 s by default): fetch, replay on the new tip, check, push. Every refusal
carries the server's own `remote:` lines. A history that shares no commit with
the remote's is never pushed as it is (that would split one memory in two): its
commits are replayed onto the remote's, or, when they conflict, left as they were.

A server that lands pushes itself (`git memory serve`: a merge queue, serve/land.py;
it shows refs/memory/landing) takes them at a ref no other push names,
refs/land/<branch>/<random>, so no push loses a race: it replays them onto the branch
through its gate and says so in one `memory-land:` line; sync then fetches what landed. Anything else the server says
(a conflict, a redaction since) sends sync down the path above for that sync. A
server that stops landing is told by the push option it lacks (or by its silence
after taking the ref, which sync then deletes); what a server said is remembered for a
day.
"""
from __future__ import annotations

import datetime
import hashlib
import json
import os
import secrets
import time
from typing import Any, Callable, Mapping

from gitmemfs.core import git, rules, writer
from gitmemfs.core.errors import MemfsError, UsageError
from gitmemfs.core.redact import redact
from gitmemfs.core.repo import Repo
from gitmemfs.gate import check
from gitmemfs.remote import auth as authmod
from gitmemfs.remote.backoff import Backoff
from gitmemfs.remote.network import Network, RemoteError, rejection, remote_lines, scrub

Notify = Callable[[str], None]
SYNC_RECORD = "memory-sync.json"
BACKUP_PREFIX = "refs/memory/backup/"

# -- sync -------------------------------------------------------------------------------

SKIPPED, CONFLICT, DIRTY, CLEAN, PULLED, PUSHED = "skipped", "conflict", "dirty", "clean", "pulled", "pushed"
PUSH_FAILED, FETCH_FAILED, CHECK_FAILED = "push_failed", "fetch_failed", "check_failed"
UNRELATED = "unrelated"
DONE_STATES = (SKIPPED, CLEAN, PULLED, PUSHED)

DEADLINE_KEY = "memory.syncDeadline"
DEADLINE = 60.0            # seconds a sync may keep retrying a push the remote's movement refused
# Rejections that mean "the remote moved after our fetch": fetch, replay, push again.
MOVED = frozenset({"fetch first", "non-fast-forward", "stale info"})
# Rejections that may mean another push held or moved the branch as ours landed; the
# server's lines tell contention ("is at X but expected Y", a held lock) from a real fault.
LOCKED = frozenset({"failed to update ref", "failed to lock", "cannot lock ref", "incorrect old value provided",
                    "failed to write", "reference already exists"})
CONTENTION_WORDS = ("but expected", "file exists", "unable to lock", "incorrect old value")

# The server's merge queue (serve/land.py names the same ref, option and line).
LAND_PREFIX = "refs/land/"
LAND_OPTION = "memory-land"
LAND_TAG = "memory-land:"
LAND_MARKER = "refs/memory/landing"  # a server that lands has it (a symbolic ref to its branch)
LAND_KEY = "memory.syncLanding"   # false: always push to the branch itself
LAND_FORGET = 86400.0             # seconds what a server said about landing is remembered
NO_PUSH_OPTIONS = "does not support push options"


class SyncResult:
    """One sync outcome: a state of DESIGN §7 plus what was done. The JSON object
    always has the same keys."""

    def __init__(self, state: str, message: str, **fields: Any):
        self.state = state
        self.message = message
        self.code = 0 if state in DONE_STATES else 1
        self.fields: dict[str, Any] = {
            "branch": None, "upstream": None, "ahead": None, "behind": None, "pushed": [],
            "pulled": 0, "rebased": False, "merge_commit": None, "backup_ref": None, "conflicts": [], "dirty": [],
            "encoding_issues": [], "problems": [], "error": None, "retries": 0,
            "remote_lines": [], "push_attempts": 0, "rejections": {},
        }
        self.fields.update(fields)

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.code == 0, "state": self.state, "message": self.message, **self.fields}


class _Upstream:
    def __init__(self, remote: str, merge: str, tracking: str | None, url: str):
        self.remote = remote        # e.g. origin
        self.merge = merge          # e.g. refs/heads/main on the remote
        self.tracking = tracking    # e.g. refs/remotes/origin/main (None: no fetch refspec maps it)
        self.url = url

    @property
    def name(self) -> str:
        short = self.merge[len("refs/heads/"):] if self.merge.startswith("refs/heads/") else self.merge
        return f"{self.remote}/{short}"


def upstream_of(repo: Repo, branch: str) -> _Upstream | None:
    remote = repo.cfg(f"branch.{branch}.remote")
    merge = repo.cfg(f"branch.{branch}.merge")
    if not remote or not merge:
        return None
    tracking = merge if remote == "." else tracking_ref(repo.cfg_all(f"remote.{remote}.fetch"), merge)
    url_res = repo.git("remote", "get-url", remote, check=False)
    url = url_res.out.strip() if url_res.code == 0 else remote
    return _Upstream(remote, merge, tracking, url)


def tracking_ref(refspecs: list[str], merge: str) -> str | None:
    """Where the remote's `merge` ref lands locally under these fetch refspecs (as git
    maps it; works before the first fetch and on an unborn branch)."""
    for spec in refspecs:
        src, _, dst = spec.lstrip("+").partition(":")
        if spec.startswith("^") or not dst:
            continue
        if "*" in src:
            head, _, tail = src.partition("*")
            if merge.startswith(head) and merge.endswith(tail) and len(merge) >= len(head) + len(tail):
                return dst.replace("*", merge[len(head):len(merge) - len(tail)], 1)
        elif src == merge:
            return dst
    return None


def deadline_of(repo: Repo, given: float | None = None) -> float:
    """How long a sync keeps retrying a push the remote's movement refused: `given`
    (--deadline), else memory.syncDeadline, else 60 s."""
    if given is not None:
        if not given > 0:
            raise UsageError("git memory sync: --deadline must be a number of seconds above 0")
        return float(given)
    raw = repo.cfg(DEADLINE_KEY)
    if raw is None or not raw.strip():
        return DEADLINE
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0 or value != value or value == float("inf"):
        raise UsageError(f"{DEADLINE_KEY} is {raw!r}; give seconds above 0 (git config {DEADLINE_KEY} 60)")
    return value


def sync(repo: Repo, *, env: Mapping[str, str] | None = None, notify: Notify | None = None,
         deadline: float | None = None) -> SyncResult:
    """Fetch, then bring the branch and its upstream together (DESIGN §7)."""
    seconds = deadline_of(repo, deadline)
    with repo.lock():
        writer.recover(repo)
        now = time.time()
        job = _Sync(repo, env, notify, seconds, Backoff(load_record(repo).get("contention"), now))
        result = job.run()
        save_record(repo, last_sync={"state": result.state, "time": time.time(),
                                      "error": result.fields.get("error")},
                    contention=job.backoff.record(time.time()))
    return result


class _Sync:
    def __init__(self, repo: Repo, env: Mapping[str, str] | None, notify: Notify | None,
                 deadline: float = DEADLINE, backoff: Backoff | None = None):
        self.repo = repo
        self.backoff = backoff or Backoff()
        self.env = env
        self.notify = notify
        self.deadline = deadline
        self.started = time.monotonic()
        self.attempts = 0                     # pushes tried
        self.rejections: dict[str, int] = {}  # why the remote refused them, counted
        self.net: Network | None = None
        self.up: _Upstream | None = None
        self.branch: str | None = None
        self.backup: str | None = None        # the head before sync moved it (a ref)
        self.rebased = False                  # HEAD is the local commits rebased onto the remote
        self.merge_commit: str | None = None  # HEAD is this merge of the local commits with the remote
        self.moved: str | None = None         # the line saying sync moved onto a redacted history
        self.joined = False                   # a history unrelated to the remote's was replayed onto it
        self.landing: bool | None = None      # push to the server's merge queue (None: not asked yet)
        self.replayed = False                 # the server replayed our commits onto newer ones

    def result(self, state: str, message: str, **fields: Any) -> SyncResult:
        fields.setdefault("branch", self.branch)
        if self.up is not None:
            fields.setdefault("upstream", self.up.name)
            ahead, behind = counts(self.repo, self.up.tracking)
            fields.setdefault("ahead", ahead)
            fields.setdefault("behind", behind)
        if self.net is not None:
            fields["retries"] = self.net.retries
        fields.setdefault("backup_ref", self.backup)
        fields.setdefault("rebased", self.rebased)
        fields.setdefault("merge_commit", self.merge_commit)
        fields["push_attempts"] = self.attempts
        fields["rejections"] = dict(self.rejections)
        return SyncResult(state, f"{self.moved} {message}" if self.moved else message, **fields)

    def run(self) -> SyncResult:
        repo = self.repo
        what = writer.operation_in_progress(repo)
        conflicts = conflicted_paths(repo)
        if what or conflicts:
            listed = f" (conflicted: {', '.join(conflicts[:10])})" if conflicts else ""
            doing = what or "a merge"
            return self.result(CONFLICT, f"Cannot sync: {doing} is in progress in {repo.root}{listed}. "
                                         "Resolve it and commit (or abort it), then sync again.",
                               conflicts=conflicts)
        head, branch, dirty = writer.status(repo)
        if branch is None:
            raise MemfsError("git memory sync: HEAD is detached; check out a branch (git switch main) "
                             "and sync again")
        self.branch = branch
        self.up = upstream_of(repo, branch)
        if self.up is None:
            return self.result(SKIPPED, f"Nothing to sync: branch {branch} has no upstream. Set one with "
                                        f"git push -u origin {branch}, or git branch --set-upstream-to "
                                        f"origin/{branch}.")
        creds = authmod.for_remote(self.up.url, repo.cfg("memory.authScheme"), env=self.env)
        self.net = Network(self.up.url, creds, notify=self.notify)
        if self.backoff.busy and not dirty and counts(repo, self.up.tracking)[0]:
            time.sleep(self.backoff.first())   # others pushed lately: do not all fetch at once
        before = self.tracking_sha()
        failed = self.fetch()
        if failed is not None:
            return failed
        from gitmemfs.remote import redaction_sync  # status imports this module; it needs none of that

        self.moved = redaction_sync.follow(repo, self.up.tracking, before)  # the remote redacted its history
        if self.moved:
            head, branch, dirty = writer.status(repo)
        if dirty:
            issues = writer.encoding_issues(repo.root, dirty)
            shown = ", ".join(dirty[:10]) + (f", and {len(dirty) - 10} more" if len(dirty) > 10 else "")
            text = f"Cannot sync: {len(dirty)} uncommitted change(s) in {repo.root}: {shown}."
            if issues:
                text += " Dirty markdown encoding issue(s): " + "; ".join(issues) + "."
            return self.result(DIRTY, text + " Commit or discard them, then sync again.",
                               dirty=dirty, encoding_issues=issues)
        ahead, behind = counts(repo, self.up.tracking)
        if ahead == 0 and behind == 0:
            return self.result(CLEAN, f"Memory is in sync with {self.up.name}.")
        if ahead == 0:
            repo.git("merge", "--ff-only", "-q", self.tracking_sha() or "")
            return self.result(PULLED, f"Pulled {behind} commit(s) from {self.up.name} (fast-forward).",
                               pulled=behind)
        assert head is not None
        refused = self.unrelated() or (self.unsent() if behind else None)
        if refused is not None:
            return refused
        if self.joined and counts(repo, self.up.tracking)[0] == 0:  # it only held what the remote has
            return self.result(PULLED, f"This history shared no commit with {self.up.name}, and every local "
                                       f"commit was already there: now on {self.up.name} (the old head is kept "
                                       f"at {self.backup}).", pulled=behind)
        if behind:  # the remote moved: bring the local commits onto it before pushing
            failed = self.integrate(head)
            if failed is not None:
                return failed
        return self.push(head)

    def unrelated(self) -> SyncResult | None:
        """A history that shares no commit with the remote's would, pushed, make a
        second memory beside the first (an init made before the server had one, a
        clone that missed the server's branch): replay it onto the remote's branch,
        or, when the branch is new there and another memory holds the remote, refuse."""
        assert self.up is not None
        tip = self.tracking_sha()
        if tip is not None:
            if self.repo.git("merge-base", "HEAD", tip, check=False).code == 0:
                return None
            return self.replay_unrelated(tip)
        # The branch is new on the remote: fine, unless the remote holds another memory.
        theirs = self.remote_branches()
        refs = [f"refs/remotes/{self.up.remote}/{name}" for name in theirs]
        if not refs or any(self.repo.git("merge-base", "HEAD", ref, check=False).code == 0 for ref in refs):
            return None
        theirs = [f"{self.up.remote}/{name}" for name in theirs]
        shown = ", ".join(theirs[:10])
        return self.result(UNRELATED, f"Refusing to push: {self.branch} shares no commit with {shown} on "
                                      f"{redact(self.up.url)}, so pushing it would split the memory in two. "
                                      "Clone the server's memory (git memory clone URL --branch NAME) and "
                                      "make the edits there; to publish this history as a separate branch "
                                      f"anyway, git push -u {self.up.remote} {self.branch}.")

    def unsent(self) -> SyncResult | None:
        """This clone redacted its history and the remote still has the old one: that is
        no conflict to merge, but a push only `redact --push` makes (issue 39)."""
        from gitmemfs.remote import redaction_sync

        assert self.up is not None
        record = redaction_sync.unsent(self.repo, self.up.tracking)
        if record is None:
            return None
        return self.result(PUSH_FAILED, f"Not synced: {self.up.name} still has the history your redaction "
                                        f"({record[:7]}) rewrote; send it with git memory redact --push (the one "
                                        "push that replaces history). Nothing was changed.",
                           error="redaction not pushed")

    def replay_unrelated(self, tip: str) -> SyncResult | None:
        """A memory started here before the remote had its own: replay the local
        commits onto the remote's history (the old head kept under refs/memory/backup/),
        checked and pushed as any rebase is. A commit the remote already holds (the
        same `git memory init` files) becomes empty and is dropped. Only a conflict,
        or merges a replay would flatten, leaves it to a person, with what to run."""
        assert self.up is not None
        repo = self.repo
        count = repo.git("rev-list", "--count", "HEAD").out.strip()
        by_hand = (f"Resolve by hand: git rebase --root --onto {self.up.name}, fix the files, git add them, "
                   "git rebase --continue, then git memory sync")
        shared = f"{self.branch} shares no commit with {self.up.name} on {redact(self.up.url)}"
        if repo.git("rev-list", "--count", "--merges", "HEAD").out.strip() != "0":
            return self.result(UNRELATED, f"Cannot sync: {shared}, and its history holds merges, which a "
                                          f"replay onto it would flatten. Nothing was changed. {by_hand} (or "
                                          f"git rebase --rebase-merges --root --onto {self.up.name}).")
        if self.backup is None:
            self.backup = backup_ref(repo, repo.git("rev-parse", "HEAD").out.strip())
        author = repo.author()
        res = repo.git(*(author.config() if author else []), "-c", "rebase.autoStash=false",
                       "-c", "rebase.updateRefs=false", "rebase", "-q", "--no-verify", "--empty=drop",
                       "--root", "--onto", tip, check=False)
        if res.code != 0:
            conflicts = conflicted_paths(repo)
            if writer.operation_in_progress(repo):
                repo.git("rebase", "--abort", check=False)
            listed = ", ".join(conflicts[:10]) if conflicts else "(git: " + redact(res.err.strip()[:300]) + ")"
            return self.result(UNRELATED, f"Cannot sync: {shared}, and replaying its {count} commit(s) onto it "
                                          f"conflicts in {listed}. Nothing was changed (your head is also kept "
                                          f"at {self.backup}). {by_hand}.", conflicts=conflicts)
        self.rebased, self.merge_commit, self.joined = True, None, True
        return None

    def remote_branches(self) -> list[str]:
        assert self.up is not None
        prefix = f"refs/remotes/{self.up.remote}/"
        names = self.repo.git("for-each-ref", "--format=%(refname)", prefix).lines()
        return sorted(n[len(prefix):] for n in names if n != prefix + "HEAD")

    def tracking_sha(self) -> str | None:
        assert self.up is not None
        if not self.up.tracking:
            return None
        res = self.repo.git("rev-parse", "-q", "--verify", self.up.tracking + "^{commit}", check=False)
        return res.out.strip() or None if res.code == 0 else None

    def fetch(self) -> SyncResult | None:
        assert self.up is not None and self.net is not None
        try:
            self.net.run(["fetch", "-q", "--no-recurse-submodules", self.up.remote], cwd=self.repo.root,
                         label="git memory sync: fetch")
        except RemoteError as exc:
            return self.result(FETCH_FAILED, f"{exc.message}. Nothing was changed.", error=exc.message)
        save_record(self.repo, last_fetch=time.time())
        return None

    def check_range(self, base: str | None) -> SyncResult | None:
        """Refuse to push commits that break the memory rules.

        The first push of a branch (no remote base) judges the tree at HEAD, not the
        whole local history. Setting read_only is forgiven here: a person protects a
        file by committing it past the hooks, and only restricts the agent by it; the
        server's own gate, if it has one, still decides.
        """
        if base:
            report = check.commit_range(self.repo.root, f"{base}..HEAD")
            report.problems = [p for p in report.problems if p.message != rules.READ_ONLY_SET]
        else:
            report = check.tree(self.repo.root, "HEAD")
        if report.ok:
            return None
        listed = "; ".join(report.lines()[:10])
        return self.result(CHECK_FAILED, f"Refusing to push: {len(report.problems)} problem(s) in the commits "
                                         f"to push: {listed}. Fix them (rewrite or drop those commits), then "
                                         "sync again.", problems=[p.as_dict() for p in report.problems])

    def push(self, head: str) -> SyncResult:
        """Check and push; while the remote's movement is why a push is refused, wait
        (jittered, growing), fetch, replay our commits on the new tip and try again,
        until it lands or the deadline passes. Never a force push."""
        assert self.up is not None and self.net is not None
        longest = 0.0  # the longest round so far (fetch, replay, check, push): one more must fit
        started = time.monotonic()
        while True:
            base = self.tracking_sha()
            refused = self.check_range(base)
            if refused is not None:
                return refused
            commits = self.repo.git("rev-list", "--reverse", f"{base}..HEAD" if base else "HEAD").lines()
            if base and self.lands():
                self.attempts += 1
                landed = self.land(head, commits)
                if landed is not None:
                    return landed
                continue  # the server did not land it: the branch itself, as below
            refspec = f"refs/heads/{self.branch}:{self.up.merge}"
            self.attempts += 1
            try:
                res = self.net.run(["push", "--porcelain", self.up.remote, refspec], cwd=self.repo.root,
                                   label="git memory sync: push", action="push to", accept=_push_answered)
            except RemoteError as exc:
                return self.result(PUSH_FAILED, f"{exc.message}. Your commits are kept locally.",
                                   error=exc.message, remote_lines=exc.remote)
            rejected = rejection(res)
            if rejected is None:
                self.backoff.landed()
                return self.result(PUSHED, self.pushed_message(len(commits)), pushed=commits)
            said = remote_lines(res.err)
            self.rejections[rejected] = self.rejections.get(rejected, 0) + 1
            if not _contended(rejected, said):
                return self.refused(rejected, said)
            wait = self.backoff.refused()
            longest = max(longest, time.monotonic() - started)
            left = self.deadline - (time.monotonic() - self.started)
            if wait + longest >= left:  # another round would end past the deadline
                return self.result(PUSH_FAILED, f"Push to {self.up.name} failed: the branch stayed busy for "
                                                f"{self.deadline:g}s (other pushes kept landing or held its lock; "
                                                f"{self.attempts} push(es) refused, last: {rejected}); your "
                                                "commits are kept locally. Run git memory "
                                                f"sync again (or allow longer: git config {DEADLINE_KEY} "
                                                "SECONDS)." + _said(said),
                                   error=f"rejected: {rejected}", remote_lines=said)
            time.sleep(wait)
            started = time.monotonic()
            failed = self.fetch()
            if failed is not None:
                return failed
            ahead, behind = counts(self.repo, self.up.tracking)
            if ahead == 0:  # what we pushed is there already (an earlier try landed after all)
                self.backoff.landed()
                self.repo.git("merge", "--ff-only", "-q", self.tracking_sha() or "")
                return self.result(PUSHED, self.pushed_message(len(commits)), pushed=commits)
            if behind:
                failed = self.unrelated() or self.integrate(head)
                if failed is not None:
                    return failed

    # -- the server's merge queue ----------------------------------------------------------

    def lands(self) -> bool:
        """Whether to push to the server's merge queue: unless memory.syncLanding is false.
        Whether a server lands is asked once a day (`ls-remote` of its marker ref,
        before the first push: no pack, no run of its gate) and kept in the sync record."""
        if self.landing is not None:
            return self.landing
        assert self.up is not None and self.net is not None
        setting = (self.repo.cfg(LAND_KEY) or "true").strip().lower()
        if setting in ("false", "no", "off", "0"):
            self.landing = False
            return False
        known = _landing_record(self.repo).get(_url_key(self.up.url))
        if isinstance(known, dict) and isinstance(known.get("time"), (int, float)) \
                and 0 <= time.time() - known["time"] < LAND_FORGET:
            self.landing = bool(known.get("lands"))
            return self.landing
        try:
            res = self.net.run(["ls-remote", self.up.remote, LAND_MARKER], cwd=self.repo.root,
                               label="git memory sync: ls-remote")
        except RemoteError:
            self.landing = False  # asked again next time
            return False
        self.remember_landing(bool(res.out.strip()))
        return bool(self.landing)

    def remember_landing(self, lands: bool) -> None:
        assert self.up is not None
        self.landing = lands
        known = {k: v for k, v in _landing_record(self.repo).items()
                 if isinstance(v, dict) and isinstance(v.get("time"), (int, float))
                 and 0 <= time.time() - v["time"] < LAND_FORGET}
        known[_url_key(self.up.url)] = {"lands": lands, "time": time.time()}
        save_record(self.repo, landing=known)

    def land(self, head: str, commits: list[str]) -> SyncResult | None:
        """Push to a ref of our own that the server lands on the branch; then fetch what
        landed. None: push to the branch itself instead (the loop in push() goes on)."""
        assert self.up is not None and self.net is not None and self.branch is not None
        short = self.up.merge[len("refs/heads/"):] if self.up.merge.startswith("refs/heads/") else ""
        if not short:
            self.landing = False
            return None
        ref = f"{LAND_PREFIX}{short}/{secrets.token_hex(8)}"
        try:
            res = self.net.run(["push", "--porcelain", "-o", LAND_OPTION, self.up.remote,
                                f"refs/heads/{self.branch}:{ref}"], cwd=self.repo.root,
                               label="git memory sync: push", action="push to", accept=_push_answered)
        except RemoteError as exc:
            if NO_PUSH_OPTIONS in str(exc.message):  # git said so before sending anything
                self.attempts -= 1
                self.remember_landing(False)
                return None
            return self.result(PUSH_FAILED, f"{exc.message}. Your commits are kept locally.",
                               error=exc.message, remote_lines=exc.remote)
        said = remote_lines(res.err)
        rejected = rejection(res)
        if rejected is not None:  # the gate (or another hook) refused the commits themselves
            self.rejections[rejected] = self.rejections.get(rejected, 0) + 1
            return self.refused(rejected, said)
        state, landed = _landing(res.err, ref)
        if state is None:  # it kept the ref and said nothing: not a server that lands
            self.net.run(["push", "-q", self.up.remote, f":{ref}"], cwd=self.repo.root,
                         label="git memory sync: push", action="push to", accept=lambda _res: True)
            self.remember_landing(False)
            return None
        if state == "refused":
            self.rejections["landing refused"] = self.rejections.get("landing refused", 0) + 1
            return self.result(PUSH_FAILED, f"Push to {self.up.name} failed: the server's gate refused the "
                                            "commits as they would land. Your commits are kept locally."
                                            + _said(said), error="rejected: landing refused", remote_lines=said)
        before = self.tracking_sha()
        failed = self.fetch()
        if failed is not None:
            return failed
        if state != "landed" or landed is None or not self.has_landed(landed):
            # A conflict, a redaction since, a busy branch: this sync replays and pushes itself.
            self.rejections[f"landing {state}"] = self.rejections.get(f"landing {state}", 0) + 1
            self.landing = False
            from gitmemfs.remote import redaction_sync

            moved = redaction_sync.follow(self.repo, self.up.tracking, before)
            self.moved = self.moved or moved
            ahead, behind = counts(self.repo, self.up.tracking)
            if behind:
                return self.unrelated() or self.integrate(head)
            return None
        ahead, behind = counts(self.repo, self.up.tracking)
        if ahead and behind:  # replayed by the server: our copies are there already, and drop out
            self.replayed = True
            failed = self.integrate(head)
            if failed is not None:
                return failed
            ahead, behind = counts(self.repo, self.up.tracking)
        if ahead:
            self.landing = False
            return None  # something of ours is not on the branch yet: push it to the branch
        if behind:
            self.repo.git("merge", "--ff-only", "-q", self.tracking_sha() or "")
        self.backoff.landed()
        return self.result(PUSHED, self.landed_message(len(commits)), pushed=commits)

    def has_landed(self, sha: str) -> bool:
        """The server's word checked: the tip it landed is on the branch we fetched."""
        tip = self.tracking_sha()
        return tip is not None and self.repo.git("merge-base", "--is-ancestor", sha, tip, check=False).code == 0

    def landed_message(self, count: int) -> str:
        assert self.up is not None
        if self.replayed:
            return (f"Pushed {count} commit(s); the server landed them on {self.up.name} after newer commits "
                    f"(it replayed them; this clone now has its copies, the old head is kept at {self.backup}).")
        return self.pushed_message(count)

    def refused(self, rejected: str, said: list[str]) -> SyncResult:
        """The server refused the push for a reason of its own: say it in its words."""
        assert self.up is not None
        return self.result(PUSH_FAILED, f"Push to {self.up.name} failed: the remote refused it ({rejected}). "
                                        "Your commits are kept locally." + _said(said),
                           error=f"rejected: {rejected}", remote_lines=said)

    def pushed_message(self, count: int) -> str:
        assert self.up is not None
        if self.rebased:
            joined = " (this history shared no commit with it)" if self.joined else ""
            return (f"Rebased {count} local commit(s) onto {self.up.name}{joined} and pushed them "
                    f"(the old head is kept at {self.backup}).")
        if self.merge_commit:
            return (f"Merged the local commits with {self.up.name} ({self.merge_commit[:7]}: they include "
                    f"merges, which a rebase would flatten) and pushed {count} commit(s) (the old head is "
                    f"kept at {self.backup}).")
        return f"Pushed {count} commit(s) to {self.up.name}."

    def integrate(self, head: str) -> SyncResult | None:
        """The remote has commits we lack: keep a backup ref, then rebase the local
        commits onto it, or merge them with it when they hold merges. Never force;
        on a conflict, change nothing."""
        assert self.up is not None
        onto = self.tracking_sha()
        if onto is None:
            return self.result(PUSH_FAILED, f"Push to {self.up.name} was rejected: the remote has commits this "
                                            f"branch lacks, but no fetch refspec of remote.{self.up.remote}.fetch "
                                            f"maps {self.up.merge} to a local ref, so sync cannot see them; fix "
                                            "the refspec (git remote set-branches) and sync again. Your commits "
                                            "are kept locally.", error="rejected: no tracking ref")
        if self.backup is None:
            self.backup = backup_ref(self.repo, head)
        merges = self.repo.git("rev-list", "--count", "--merges", f"{onto}..HEAD").out.strip()
        if merges != "0":
            return self.merge_onto(onto)
        author = self.repo.author()
        res = self.repo.git(*(author.config() if author else []), "-c", "rebase.autoStash=false",
                            "-c", "rebase.updateRefs=false", "rebase", "-q", "--no-verify", onto,
                            check=False)
        if res.code != 0:
            return self.rebase_failed(res)
        self.rebased, self.merge_commit = True, None
        return None

    def merge_onto(self, onto: str) -> SyncResult | None:
        """A merge commit whose first parent is the remote and second the local head:
        against its first parent it shows exactly what the push adds. Built with
        merge-tree and commit-tree, then fast-forwarded in, so a conflict leaves
        the repository untouched."""
        assert self.up is not None
        repo = self.repo
        res = repo.git("merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", onto, "HEAD",
                       check=False, ok=(0, 1))
        if res.code not in (0, 1):
            raise git.GitError(res.argv, res.code, res.raw, res.err_raw)
        fields = res.out.split("\0")
        if res.code == 1:
            conflicts = sorted({f for f in fields[1:] if f})
            return self.result(CONFLICT, f"Cannot sync: local and remote changes conflict in "
                                         f"{', '.join(conflicts[:10])}. Nothing was changed (your head is also "
                                         f"kept at {self.backup}). Resolve by hand: git merge {self.up.name}, "
                                         "fix the files, commit, then git memory sync.",
                               conflicts=conflicts)
        local = repo.git("rev-list", "--count", f"{onto}..HEAD").out.strip()
        author = repo.author()
        message = (f"merge(sync): {local} local commit(s) into {self.up.name}\n\n"
                   "git memory sync merged instead of rebasing: the local commits include merges, whose "
                   "commits and messages a rebase would flatten.\n")
        sha = repo.git(*(author.config() if author else []), "commit-tree", "-p", onto, "-p", "HEAD",
                       fields[0].strip(), input=message).out.strip()
        repo.git("merge", "--ff-only", "-q", sha)
        self.rebased, self.merge_commit = False, sha
        return None

    def rebase_failed(self, res: git.Result) -> SyncResult:
        repo = self.repo
        backup = self.backup
        conflicts = conflicted_paths(repo)
        if writer.operation_in_progress(repo):
            repo.git("rebase", "--abort", check=False)
        assert self.up is not None
        if writer.operation_in_progress(repo):
            return self.result(CONFLICT, f"Cannot sync: the rebase onto {self.up.name} stopped and could not "
                                         f"be aborted; run git rebase --abort (your old head is kept at {backup}).",
                               conflicts=conflicts, error=redact(res.err.strip()[:500]))
        listed = ", ".join(conflicts[:10]) if conflicts else "(git: " + redact(res.err.strip()[:300]) + ")"
        return self.result(CONFLICT, f"Cannot sync: local and remote changes conflict in {listed}. The rebase "
                                     "was aborted and your commits are untouched (also kept at "
                                     f"{backup}). Resolve by hand: git pull --rebase, fix the files, "
                                     "git rebase --continue, then git memory sync.",
                           conflicts=conflicts)


def _contended(rejected: str, said: list[str]) -> bool:
    """A refusal caused by other pushes (worth replaying and retrying), not a verdict."""
    if rejected in MOVED:
        return True
    if rejected not in LOCKED:
        return False
    text = " ".join(said).lower()
    return any(word in text for word in CONTENTION_WORDS) and "permission denied" not in text


def _landing(stderr: str, ref: str) -> tuple[str | None, str | None]:
    """(state, new tip) from the server's `memory-land: STATE REF [SHA ...]` line for `ref`
    (among all its `remote:` lines: the ones a person is shown are bounded)."""
    for raw in stderr.replace("\r", "\n").splitlines():
        parts = scrub(raw).split()
        if parts[:1] != ["remote:"]:
            continue
        parts = parts[1:]
        if len(parts) >= 3 and parts[0] == LAND_TAG and parts[2] == ref:
            sha = parts[3] if parts[1] == "landed" and len(parts) > 3 else None
            if sha is not None and not all(c in "0123456789abcdef" for c in sha):
                sha = None
            return parts[1], sha
    return None, None


def _landing_record(repo: Repo) -> dict[str, Any]:
    known = load_record(repo).get("landing")
    return known if isinstance(known, dict) else {}


def _url_key(url: str) -> str:
    """A remote's URL as the sync record keeps it (hashed: a URL may hold a password)."""
    return hashlib.sha256(url.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _said(lines: list[str]) -> str:
    return (" The server said: " + " | ".join(lines)) if lines else ""


def _push_answered(res: git.Result) -> bool:
    """A push the remote answered with a refusal: final, not a network failure."""
    return rejection(res) is not None


def counts(repo: Repo, tracking: str | None) -> tuple[int, int]:
    """(ahead, behind) of HEAD against the remote-tracking ref, as last fetched."""
    has_head = repo.has_head()
    has_tracking = bool(tracking) and repo.git("rev-parse", "-q", "--verify", f"{tracking}^{{commit}}",
                                               check=False).code == 0
    if has_head and has_tracking:
        out = repo.git("rev-list", "--left-right", "--count", f"HEAD...{tracking}").out.split()
        return int(out[0]), int(out[1])
    if has_head:
        return int(repo.git("rev-list", "--count", "HEAD").out.strip()), 0
    if has_tracking:
        return 0, int(repo.git("rev-list", "--count", str(tracking)).out.strip())
    return 0, 0


def conflicted_paths(repo: Repo) -> list[str]:
    return repo.git("diff", "--name-only", "-z", "--diff-filter=U", check=False).zsplit()


def backup_ref(repo: Repo, sha: str) -> str:
    """refs/memory/backup/<utc> at `sha`; never overwrites an existing backup."""
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    for n in range(1, 100):
        ref = BACKUP_PREFIX + stamp + ("" if n == 1 else f"-{n}")
        if repo.git("update-ref", "-m", "git memory sync: backup before rebase", ref, sha, "",
                    check=False).code == 0:
            return ref
    raise MemfsError("git memory sync: could not create a backup ref under refs/memory/backup/; "
                     "check git for-each-ref refs/memory/backup")


# -- the sync record (for status) --------------------------------------------------------


def load_record(repo: Repo) -> dict[str, Any]:
    try:
        with open(os.path.join(repo.common_dir, SYNC_RECORD), encoding="utf-8") as fh:
            data = json.load(fh)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def save_record(repo: Repo, **updates: Any) -> None:
    record = load_record(repo)
    record.update(updates)
    path = os.path.join(repo.common_dir, SYNC_RECORD)
    tmp = path + ".tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(record, fh)
        os.replace(tmp, path)
    except OSError:
        pass  # status then reports the fetch time from FETCH_HEAD instead
