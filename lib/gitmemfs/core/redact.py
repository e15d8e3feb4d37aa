"""Secret redaction for every string that leaves the process.

Two layers: known secret *values* registered at runtime (the token, its Basic
encoding, the whole header) are replaced wherever they appear (`mask_secrets`),
and *patterns* catch secrets we were never told about (auth headers, password=,
a URL's user:password@, well-known token prefixes). `redact` applies both: to git
errors, logs, network messages and every error line. Memory content a command
prints as its answer (view, compile, call) only gets `mask_secrets`: a pattern
would change what the agent reads, and so what it writes back.
"""
from __future__ import annotations

TYPE_CHECKING = False  # keep `typing` and `re` off the hook's import path
if TYPE_CHECKING:
    import re
    from typing import Any

MASK = "<redacted>"
# scheme:// user ':' password '@' (shared with remote.auth.has_password).
URL_PASSWORD = r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@:]*:(?!\d*(?:/|$|\s))\S*@"

_secrets: set[str] = set()

# (pattern, replacement, literals any match must contain in the lowercased text).
# The cheap substring test skips a regex on long text without its literal (a
# compiled prompt of 100,000 files is megabytes); patterns compile on first use,
# since most runs of the hooks never print anything.
_RULES: list[tuple[str, str, tuple[str, ...]]] = [
    # Authorization headers of any scheme, with or without the http.extraHeader= prefix.
    (r"(?i)(authorization:\s*[A-Za-z][\w-]*\s+)[^\s'\"`]+", r"\1" + MASK, ("authorization:",)),
    # Inline credential-helper scripts and query strings.
    (r"(?i)(password=)[^\s'\"`;&]+", r"\1" + MASK, ("password=",)),
    # Letta API keys and common forge tokens.
    (r"sk-let-[A-Za-z0-9_-]+", "sk-let-" + MASK, ("sk-let-",)),
    (r"\b(gh[pousr]_)[A-Za-z0-9]{16,}", r"\1" + MASK, ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),
    (r"\b(github_pat_)[A-Za-z0-9_]{16,}", r"\1" + MASK, ("github_pat_",)),
    (r"\b(glpat-)[A-Za-z0-9_-]{16,}", r"\1" + MASK, ("glpat-",)),
    # URL userinfo with a password: scheme://user:pass@host -> scheme://<redacted>@host.
    # The password may hold any printable character (' ? # @ : / …): everything up to
    # the last '@' of the URL's whitespace-free run is masked. host:PORT/path@x is not
    # a password. A bare user (ssh://git@host) is no secret; a token used as the user
    # name (https://ghp_…@host) is caught by the token patterns.
    (URL_PASSWORD, r"\1" + MASK + "@", ("://",)),
]
_COMPILED: dict[str, re.Pattern[str]] = {}


def _pattern(source: str) -> re.Pattern[str]:
    """Compiled on first use, one by one: only a rule whose literal is in the text
    pays for it (the `re` import ~8 ms, each compile ~0.5 ms)."""
    found = _COMPILED.get(source)
    if found is None:
        import re

        found = _COMPILED[source] = re.compile(source)
    return found


def patterns() -> list[tuple[re.Pattern[str], str, tuple[str, ...]]]:
    return [(_pattern(p), repl, needles) for p, repl, needles in _RULES]


def register_secret(value: str | None, *, basic_user: str | None = None) -> None:
    """Remember a secret so it is masked wherever it shows up later.

    With `basic_user`, the base64 form used in `Authorization: Basic` is
    registered too, because that encoding does not contain the token verbatim.
    """
    if not value or len(value) < 4:
        return
    _secrets.add(value)
    if basic_user is not None:
        import base64  # not needed on the hook path

        _secrets.add(base64.b64encode(f"{basic_user}:{value}".encode()).decode())


def url_has_password(url: str) -> bool:
    """Whether `url` carries a password by our rule (any character, up to the last '@')."""
    import re  # not on the hook path: only remotes ask this

    return re.match(URL_PASSWORD, url.strip()) is not None


def forget_secrets() -> None:
    _secrets.clear()


def mask_secrets(text: str) -> str:
    """Only the registered secret values (they are ours, wherever they show up)."""
    if not text or not _secrets:
        return text
    # Longest first, so a header value is masked whole before its token part.
    for secret in sorted(_secrets, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def redact(text: str) -> str:
    """Registered secrets and every secret-looking pattern."""
    if not text:
        return text
    text = mask_secrets(text)
    lowered = _folded(text)
    for source, repl, needles in _RULES:
        if any(n in lowered for n in needles):
            text = _pattern(source).sub(repl, text)
    return text


def _folded(text: str) -> str:
    """Lowercased for the needle tests, with the four non-ASCII letters that a
    case-insensitive pattern also matches (İ ı ſ K) folded to ASCII."""
    if text.isascii():
        return text.lower()
    return text.replace("İ", "i").lower().replace("ı", "i").replace("ſ", "s")


def redact_obj(obj: Any, *, patterns: bool = True) -> Any:
    """Redact every string inside a JSON-like structure (dict keys included); with
    `patterns=False`, mask only the registered secrets."""
    if isinstance(obj, bytes):
        obj = obj.decode("utf-8", "replace")
    if isinstance(obj, str):
        return redact(obj) if patterns else mask_secrets(obj)
    if isinstance(obj, dict):
        return {redact_obj(k, patterns=patterns): redact_obj(v, patterns=patterns) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [redact_obj(v, patterns=patterns) for v in obj]
    return obj
