"""Tokens and keys: made here, compared in constant time, stored as hashes.

A token is a secret a client presents (a bearer header, a review page's cookie). It is
registered with core.redact the moment it is known, so no message of ours shows it,
and it never travels in argv or a child's environment (servers pop theirs from the
environment at start). A key kept on disk (serve's issued keys) is kept as `hash_key`
of itself, so the file alone lets nobody in.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import ipaddress
import os
import secrets
import stat

from gitmemfs.core.errors import UsageError
from gitmemfs.core.redact import register_secret

MIN_TOKEN = 16  # characters: shorter tokens in a --tokens file are refused
LOOPBACK_NAMES = ("localhost",)
# token -> the agents it may use (None: every agent)
TokenTable = dict[bytes, "frozenset[str] | None"]


def new_token() -> str:
    """A fresh random token (256 bits, URL-safe), registered as a secret."""
    token = secrets.token_urlsafe(32)
    register_secret(token)
    return token


def hash_key(token: str | bytes) -> str:
    """What a stored key file keeps of a key: its SHA-256, hex."""
    data = token.encode() if isinstance(token, str) else token
    return "sha256:" + hashlib.sha256(data).hexdigest()


def same(a: str | bytes, b: str | bytes) -> bool:
    """Constant-time equality of two secrets."""
    return hmac.compare_digest(a.encode() if isinstance(a, str) else a, b.encode() if isinstance(b, str) else b)


def match(tokens: TokenTable, value: bytes) -> frozenset[str] | None | bool:
    """The grant of the token `value` (compared in constant time against each), False if none."""
    found: frozenset[str] | None | bool = False
    for token, grant in tokens.items():
        if hmac.compare_digest(value, token):
            found = grant
    return found


def presented(authorization: str | None, *, basic: bool = True) -> str | None:
    """The secret an Authorization header carries: `Bearer <key>`, or (with `basic`) the
    password of `Basic` with any user (`letta`, as Letta Code sends it); None otherwise."""
    scheme, _, value = (authorization or "").partition(" ")
    value = value.strip()
    if scheme.lower() == "basic" and basic:
        try:
            _, _, value = base64.b64decode(value, validate=True).decode("utf-8").partition(":")
        except (binascii.Error, UnicodeDecodeError):
            return None
    elif scheme.lower() != "bearer":
        return None
    return value or None


def derive(token: str, purpose: str) -> str:
    """A second secret bound to `token` (e.g. the form token of a page), hex."""
    return hmac.new(token.encode(), purpose.encode(), hashlib.sha256).hexdigest()


def load_tokens(path: str, tool: str) -> TokenTable:
    """A --tokens file: lines `AGENT TOKEN` (`*` for every agent); a token on several
    lines serves each of those agents. It must be readable by its owner only."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as exc:
        raise UsageError(f"{tool}: cannot read --tokens {path}: {exc.strerror}") from None
    with os.fdopen(fd) as fh:
        if os.fstat(fh.fileno()).st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise UsageError(f"{tool}: --tokens {path} can be read by others; chmod 600 {path}")
        text = fh.read()
    table: dict[bytes, set[str] | None] = {}
    for number, line in enumerate(text.splitlines(), 1):
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        if len(words) != 2 or len(words[1]) < MIN_TOKEN:
            raise UsageError(f"{tool}: --tokens {path} line {number}: expected AGENT TOKEN (a token of at least "
                             f"{MIN_TOKEN} characters; * as AGENT for every agent)")
        agent, token = words
        register_secret(token)
        key = token.encode()
        if agent == "*" or table.get(key, set()) is None:
            table[key] = None
        else:
            table.setdefault(key, set()).add(agent)  # type: ignore[union-attr]
    if not table:
        raise UsageError(f"{tool}: --tokens {path} holds no AGENT TOKEN line")
    return {k: (None if v is None else frozenset(v)) for k, v in table.items()}


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, has_token: bool, tool: str, how: str) -> None:
    """Loopback by default; any other address only with a token (`how` says how to give one)."""
    if not is_loopback(host) and not has_token:
        raise UsageError(f"{tool}: serving on {host} (not loopback) needs a token: {how}")
