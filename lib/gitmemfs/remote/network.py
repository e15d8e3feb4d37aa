"""Network git calls: one retry loop, and failures explained in one line.

Transient failures (HTTP 502/503/504/520-524, "RPC failed", a remote end that
hangs up, a reset or empty reply, a timed-out call) are retried up to three
tries with backoff (0.5 s, then 1 s). Everything else (refused credentials, 403,
404, an unknown host, a bad URL) fails at once, with a line that says what to
check. Every network call in the package goes through `Network.run`.
"""
from __future__ import annotations

import re
import time
from typing import Callable, NamedTuple, Sequence

from gitmemfs.core import git, gitnet, ownconfig
from gitmemfs.core.errors import MemfsError
from gitmemfs.core.git import GitError
from gitmemfs.core.redact import redact
from gitmemfs.remote.auth import Auth, is_letta_url
from gitmemfs.remote.waiting import Waiting

TRIES = 3
BASE_DELAY = 0.5
TRANSIENT_HTTP = frozenset({502, 503, 504, 520, 521, 522, 523, 524})
RETRY_4XX = frozenset({408, 429})   # request timeout, too many requests

_HTTP = re.compile(r"(?:returned error:\s*|\bHTTP\s+)(\d{3})\b", re.I)
_AUTH = re.compile(r"terminal prompts disabled|could not read (?:username|password)|authentication failed|"
                   r"invalid credentials|permission denied \(publickey|host key verification failed", re.I)
_NOT_FOUND = re.compile(r"repository '[^']*' not found|does not appear to be a git repository|"
                        r"couldn't find remote ref", re.I)
_HOST = re.compile(r"could not resolve host|could not resolve hostname|name or service not known", re.I)
_CONNECT = re.compile(r"failed to connect|couldn't connect|connection refused|no route to host", re.I)
_BAD_URL = re.compile(r"unsupported protocol|url using bad/illegal format|protocol '[^']*' is not supported|"
                      r"transport '[^']*' not allowed|unable to find remote helper|malformed", re.I)
# What a server says reaches us as `remote: ` lines (git's sideband), `error:` and
# `fatal:` lines and push refusals; terminal control sequences in any of them are the
# server's, not ours to replay on a user's terminal (C1 included: \x9b is a CSI).
_REMOTE = re.compile(r"^remote: ?(.*)$")
_CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|[\x00-\x08\x0b-\x1f\x7f-\x9f]")
REMOTE_LINES_MAX = 20
REMOTE_LINE_CHARS = 300
_TRANSIENT = re.compile(r"rpc failed|remote end hung up|connection reset|empty reply from server|timed out|"
                        r"operation too slow|early eof|unexpected disconnect|transfer closed with", re.I)


class Failure(NamedTuple):
    kind: str             # transient, auth, forbidden, not_found, host, connect, bad_url, other
    http: int | None


def classify(err: GitError) -> Failure:
    if err.timed_out:
        return Failure("transient", None)
    text = f"{err.stderr}\n{err.stdout}"
    codes = [int(c) for c in _HTTP.findall(text)]
    http = codes[-1] if codes else None
    for code in codes:
        if code in (401, 407):
            return Failure("auth", code)
        if code == 403:
            return Failure("forbidden", code)
        if code == 404:
            return Failure("not_found", code)
        if 400 <= code < 500 and code not in RETRY_4XX:
            return Failure("other", code)
    for kind, pattern in (("auth", _AUTH), ("not_found", _NOT_FOUND), ("host", _HOST), ("bad_url", _BAD_URL)):
        if pattern.search(text):
            return Failure(kind, http)
    # A connection that timed out is worth another try; one that was refused is not.
    if http in TRANSIENT_HTTP or http in RETRY_4XX or _TRANSIENT.search(text):
        return Failure("transient", http)
    if _CONNECT.search(text):
        return Failure("connect", http)
    return Failure("other", http)


def remote_lines(stderr: str) -> list[str]:
    """The server's own words in git's output: its `remote: ` lines, without terminal
    controls or blank lines, each redacted and bounded (at most 20 of 300 characters)."""
    found = []
    for raw in stderr.replace("\r", "\n").splitlines():
        match = _REMOTE.match(raw)
        if not match:
            continue
        line = scrub(match.group(1)).strip()
        if line:
            found.append(redact(line)[:REMOTE_LINE_CHARS])
    if len(found) > REMOTE_LINES_MAX:
        found = found[:REMOTE_LINES_MAX - 1] + [f"(and {len(found) - REMOTE_LINES_MAX + 1} more lines)"]
    return found


def rejection(res: git.Result) -> str | None:
    """The reason a `push --porcelain` was refused ('fetch first', 'non-fast-forward',
    'pre-receive hook declined', ...), or None if it was not."""
    for line in res.out.splitlines():
        parts = line.split("\t")
        if len(parts) >= 3 and parts[0] == "!":
            summary = scrub(parts[2])  # the server's own words, for a person's terminal
            if "(" in summary and summary.endswith(")"):
                return summary[summary.index("(") + 1:-1]
            return summary.strip("[] ") or "rejected"
    return None


def scrub(text: str) -> str:
    """Git's or the server's text without terminal controls (newlines and tabs kept):
    every line of theirs we report passes through here."""
    return _CONTROL.sub("", text)


class RemoteError(MemfsError):
    """A network git command failed for good; `kind` says why (see `classify`)."""

    def __init__(self, message: str, failure: Failure, tries: int, remote: list[str] | None = None):
        super().__init__(message, details={"error_kind": failure.kind, "http_status": failure.http,
                                           "tries": tries, "remote_lines": remote or []})
        self.failure = failure
        self.tries = tries
        self.remote = remote or []


def explain(label: str, url: str, err: GitError, failure: Failure, auth: Auth, *,
            action: str = "read", tries: int = 1) -> RemoteError:
    where = redact(url)
    http = f" (HTTP {failure.http})" if failure.http else ""
    kind = failure.kind
    if kind == "auth":
        text = f"{where} refused the credentials{http}; {auth.hint()}"
    elif kind == "forbidden":
        text = f"access to {where} is denied{http}; check that the token may {action} this repository"
    elif kind == "not_found":
        extra = " (the agent id and $LETTA_MEMFS_BASE_URL)" if is_letta_url(url) else ""
        text = f"no repository at {where}{http}; check the URL{extra}"
    elif kind == "host":
        text = f"unknown host in {where}; check the URL and your network"
    elif kind == "connect":
        text = f"cannot connect to {where}; check the URL and that the server is up"
    elif kind == "bad_url":
        text = f"git cannot use the URL {where}; check it (https://…, ssh://…, or a path)"
    elif kind == "transient":
        text = f"{where} kept failing after {tries} tries ({_detail(err)}); try again later"
    else:
        text = scrub(str(err))
    said = remote_lines(err.stderr)
    if said:
        text += "; the server said: " + " | ".join(said)
    return RemoteError(f"{label}: {text}", failure, tries, said)


def _detail(err: GitError) -> str:
    if err.timed_out:
        return str(err)
    lines = [ln.strip() for ln in err.stderr.splitlines() if ln.strip().startswith(("fatal:", "error:"))]
    return scrub(lines[0] if lines else str(err))[:300]


def stall_config(timeout: float | None) -> list[tuple[str, str]]:
    """A server that accepts and then says nothing: curl gives up on its own, within
    the call's timeout (at most a minute of silence)."""
    seconds = max(1, int(min(timeout or 60.0, 60.0)))
    return [("http.lowSpeedLimit", "1"), ("http.lowSpeedTime", str(seconds))]


class Network:
    """Runs network git commands against one remote with its credentials.

    `retries` counts the retries made so far, across calls (for --json output).
    """

    def __init__(self, url: str, auth: Auth, *, notify: Callable[[str], None] | None = None,
                 tries: int = TRIES, base_delay: float = BASE_DELAY,
                 sleep: Callable[[float], None] = time.sleep):
        self.url = url
        self.auth = auth
        self.notify = notify or (lambda message: None)
        self._notify_set = notify is not None
        self.tries = tries
        self.base_delay = base_delay
        self.sleep = sleep
        self.retries = 0

    def run(self, args: Sequence[str], *, cwd: str, label: str, action: str = "read",
            timeout: float = git.DEFAULT_TIMEOUT, accept: Callable[[git.Result], bool] | None = None,
            before_retry: Callable[[], None] | None = None) -> git.Result:
        """Run git; a failure is retried while transient. `accept` may take a failed
        result as an answer (e.g. a rejected push, which the caller handles)."""
        for attempt in range(1, self.tries + 1):
            # Checked as it starts, every try: no program the memory's config names runs
            # in it (core/ownconfig.py). A clone's folder is not the repository it talks to.
            argv, pins, env = ownconfig.network_git(cwd, list(args), urls=[self.url],
                                                    repo_config=not args or args[0] != "clone")
            config = [*pins, *self.auth.config(), *stall_config(timeout)]
            try:
                with Waiting(label, self.notify if self._notify_set else None):
                    # through sh, in a session of its own: a timeout ends git's helpers too
                    res = gitnet.run(argv, cwd=cwd, env=env, config=config, timeout=timeout, check=False)
                if res.code == 0 or (accept is not None and accept(res)):
                    return res
                raise GitError(res.argv, res.code, res.raw, res.err_raw)
            except GitError as err:
                failure = classify(err)
                if failure.kind != "transient" or attempt == self.tries:
                    raise explain(label, self.url, err, failure, self.auth, action=action,
                                  tries=attempt) from None
                delay = self.base_delay * 2 ** (attempt - 1)
                self.retries += 1
                self.notify(f"{label}: transient failure (try {attempt}/{self.tries}: {_detail(err)}); "
                            f"retrying in {delay:g}s")
                self.sleep(delay)
                if before_retry is not None:
                    before_retry()
        raise AssertionError("unreachable")  # pragma: no cover
