"""Remote authentication: which token, which scheme, and how it reaches git.

The token comes from the environment only ($GIT_MEMORY_TOKEN, or $LETTA_API_KEY
for a Letta agent's repository) and reaches git as `http.extraHeader` through
GIT_CONFIG_COUNT env (see git.py): never on a command line, never in
.git/config. It is registered for redaction the moment it is read. With no
token, the user's own credential helpers may answer; nothing ever prompts.
"""
from __future__ import annotations

import base64
import os
import re
from typing import Mapping
from urllib.parse import urlsplit

from gitmemfs.core import git, redact
from gitmemfs.core.errors import UsageError

BASIC_USER = "letta"          # upstream's Basic user name for Letta tokens
SCHEMES = ("basic", "bearer")
LETTA_DEFAULT_BASE = "https://api.letta.com"
TOKEN_VAR = "GIT_MEMORY_TOKEN"
LETTA_TOKEN_VAR = "LETTA_API_KEY"

_AGENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")
_LETTA_PATH = re.compile(r"/v1/git/[^/]+/state\.git/?")


class Auth:
    """The credentials for one remote: a token (or none) and its scheme."""

    def __init__(self, token: str | None, scheme: str = "basic", source: str | None = None,
                 headers: tuple[str, ...] = ()):
        self.token = token or None
        self.scheme = scheme
        self.source = source      # where the token came from, e.g. "$GIT_MEMORY_TOKEN"
        self.headers = headers    # more http.extraHeader lines (Letta's backend choice)
        if self.token:
            redact.register_secret(self.token, basic_user=BASIC_USER if scheme == "basic" else None)

    def header(self) -> str:
        if self.scheme == "bearer":
            return f"Authorization: Bearer {self.token}"
        pair = f"{BASIC_USER}:{self.token}".encode()
        return f"Authorization: Basic {base64.b64encode(pair).decode()}"

    def config(self) -> list[tuple[str, str]]:
        """Config for the git call. With a token, only our header is sent: inherited
        headers and credential helpers are reset so they cannot compete with it."""
        extra = [("http.extraHeader", h) for h in self.headers]
        if not self.token:
            return extra
        return [("credential.helper", ""), ("http.extraHeader", ""), ("http.extraHeader", self.header()), *extra]

    def hint(self) -> str:
        """What to check when the server refuses the credentials."""
        if not self.token:
            return (f"no token was given: set ${TOKEN_VAR} (${LETTA_TOKEN_VAR} for a Letta agent) "
                    "or configure a git credential helper for this host")
        return f"check the token in {self.source} and memory.authScheme ({self.scheme} now; basic or bearer)"

    def as_dict(self) -> dict[str, object]:
        return {"token": bool(self.token), "scheme": self.scheme, "source": self.source}


def valid_scheme(value: str | None, where: str = "memory.authScheme") -> str:
    scheme = (value or "basic").strip().lower()
    if scheme not in SCHEMES:
        raise UsageError(f"{where} is {value!r}; use basic or bearer "
                         "(git config memory.authScheme bearer)")
    return scheme


def configured_scheme() -> str | None:
    """memory.authScheme from the user's global or system config (for a clone, which
    has no repository config yet; GIT_DIR keeps any surrounding repo out of it)."""
    res = git.run(["config", "--get", "memory.authScheme"], env={"GIT_DIR": os.devnull}, check=False)
    return res.out.strip() or None if res.code == 0 else None


LETTA_BASE_VAR = "LETTA_MEMFS_BASE_URL"
LETTA_BACKEND_VAR = "LETTA_MEMFS_BACKEND"
LETTA_HOSTED_HEADER = "x-letta-memfs-backend: hosted"


def letta_base(env: Mapping[str, str] | None = None) -> str:
    """Where Letta's memory repositories live: ${LETTA_MEMFS_BASE_URL:-https://api.letta.com},
    as Letta Code reads it. $LETTA_BASE_URL is not used: under Letta Desktop it names a
    local API proxy, which must never be sent the key."""
    source = os.environ if env is None else env
    return (source.get(LETTA_BASE_VAR) or "").strip().rstrip("/") or LETTA_DEFAULT_BASE


def letta_headers(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Letta's backend header: `x-letta-memfs-backend: hosted` when LETTA_MEMFS_BACKEND=hosted."""
    source = os.environ if env is None else env
    return (LETTA_HOSTED_HEADER,) if source.get(LETTA_BACKEND_VAR) == "hosted" else ()


def letta_url(agent_id: str, env: Mapping[str, str] | None = None) -> str:
    """The Letta memory repository of an agent: ${LETTA_MEMFS_BASE_URL}/v1/git/<id>/state.git."""
    if not _AGENT_ID.match(agent_id or ""):
        raise UsageError(f"--letta-agent: {agent_id!r} is not an agent id (letters, digits, '.', '_', '-')")
    return f"{letta_base(env)}/v1/git/{agent_id}/state.git"


def _origin(url: str) -> tuple[str, str, int | None, str] | None:
    """(scheme, host, port, path) of an http(s) URL, the port made explicit."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        return None
    return scheme, parts.hostname.lower(), port or (443 if scheme == "https" else 80), parts.path


def is_letta_url(url: str, env: Mapping[str, str] | None = None) -> bool:
    """A Letta agent's memory repository: `/v1/git/<id>/state.git` under
    ${LETTA_MEMFS_BASE_URL:-https://api.letta.com}, same scheme, host and port. Any
    other host with a Letta-looking path is not one (it must never get the key)."""
    here, base = _origin(url), _origin(letta_base(env))
    if here is None or base is None or here[:3] != base[:3]:
        return False
    prefix = base[3].rstrip("/")
    return here[3].startswith(prefix + "/") and bool(_LETTA_PATH.fullmatch(here[3][len(prefix):]))


def for_remote(url: str, scheme: str | None = None, *, letta: bool | None = None,
               env: Mapping[str, str] | None = None) -> Auth:
    """The credentials to use for `url`. A Letta memory repository takes
    $LETTA_API_KEY (else $GIT_MEMORY_TOKEN); any other remote takes only
    $GIT_MEMORY_TOKEN, so a Letta key is never sent to another host."""
    source = os.environ if env is None else env
    scheme = valid_scheme(scheme)
    names = [TOKEN_VAR]
    headers: tuple[str, ...] = ()
    if letta or (letta is None and is_letta_url(url, env)):
        names.insert(0, LETTA_TOKEN_VAR)
        headers = letta_headers(env)
    for name in names:
        token = (source.get(name) or "").strip()
        if token:
            return Auth(token, scheme, f"${name}", headers)
    return Auth(None, scheme, headers=headers)


def has_password(url: str) -> bool:
    """Whether a URL carries a password (scheme://user:password@host/…)."""
    if "://" not in url:
        return False
    from gitmemfs.core.redact import url_has_password

    # Our rule as well as urllib's: a raw ' ? # / in the password hides it from urlsplit.
    if url_has_password(url):
        return True
    try:
        return urlsplit(url.strip()).password is not None
    except ValueError:
        return False


def absolute_local(url: str) -> str:
    """A local path (no scheme, and no `host:` before the first slash: git's own rule)
    made absolute from the directory the person typed it in, as `git clone` records
    it; anything else unchanged. Our git runs elsewhere (the clone's parent, the git
    directory), where a relative path names another place."""
    if "://" in url:
        return url
    colon, slash = url.find(":"), url.find("/")
    if colon >= 0 and (slash < 0 or colon < slash):
        return url  # host:path, scp-like ssh
    return os.path.abspath(url)


def check_url(url: str) -> str:
    """Refuse URLs we must not hand to git: empty, option-like, control characters,
    or carrying a password (git would store it in .git/config). A local path comes
    back absolute."""
    url = (url or "").strip()
    if not url:
        raise UsageError("the remote URL is empty")
    if url.startswith("-"):
        raise UsageError(f"{url!r} is not a URL")
    if any(ord(ch) < 32 or ch == "\x7f" for ch in url):
        raise UsageError("the remote URL contains control characters")
    if "://" in url:
        if has_password(url):  # before urlsplit, which rejects a raw '[' in a password
            raise UsageError(f"the URL {redact.redact(url)} carries a password; remove it and put the token in "
                             f"${TOKEN_VAR} instead, so it never lands in .git/config")
        try:
            parts = urlsplit(url)
        except ValueError:
            raise UsageError("the remote URL is not valid; check it") from None
        if parts.password is not None or has_password(url):
            raise UsageError(f"the URL {redact.redact(url)} carries a password; remove it and put the token in "
                             f"${TOKEN_VAR} instead, so it never lands in .git/config")
    return absolute_local(url)
