"""Reading git's settings without starting git, when that is certain to give what
`git config --list` would; None when it is not, and the caller asks git.

A `git config` process costs ~2 ms, a tenth of a pre-commit hook. This reads the
same files in the same order (system, global, the repository's own, then `git -c`
settings) for the plain case only. Anything it is not sure of means None:
includes, worktree settings, quotes or backslashes in a value, a `[section.sub]`
header, a key on a header's line, a system file other than /etc/gitconfig, a
moved repository (GIT_DIR and friends), an unreadable file, a syntax error (git
would stop there). tests/test_gitconfig.py holds it to `git config --list` on
generated files.

Values come back as git prints them; a key without `=` (a bare boolean) has None.
No `re` here: the hook path does not import it.
"""
from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping, Sequence

# key (section and name lower-cased, subsection as written) -> values in order
Settings = dict[str, list[str | None]]

_MOVED = ("GIT_DIR", "GIT_COMMON_DIR", "GIT_CONFIG")
_SPACE = " \t"  # C's isspace, less the newline that ends a line (\r \v \f are left to git)
_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-")
_SECTION_CHARS = _KEY_CHARS  # '.' (the old `[section.sub]` form) is left to git
# A distribution's git (built for prefix /usr, so its system settings are in
# /etc/gitconfig): /usr/bin/git, and its copy in the exec path that `git memory`
# finds first, as git puts GIT_EXEC_PATH at the head of PATH for a subcommand.
_DISTRIBUTION_GITS = ("/usr/bin/git", "/usr/lib/git-core/git", "/usr/libexec/git-core/git")
_SYSTEM_FILE = "/etc/gitconfig"


class Unsure(Exception):
    """What git would make of this is not certain here: ask git."""


def read(git_dir: str, env: Mapping[str, str] | None = None) -> Settings | None:
    """Every setting git would see in the repository at `git_dir` (its `.git`
    folder), or None when only git can tell."""
    env = os.environ if env is None else env
    if any(env.get(k) for k in _MOVED):
        return None
    try:
        found: Settings = {}
        for path in _files(git_dir, env):
            _parse_file(path, found)
        if _one(found, "extensions.worktreeconfig") is not None:
            return None
        _from_environment(env, found)
        return found
    except Unsure:
        return None


def any_true(found: Mapping[str, Sequence[str | None]], key: str) -> bool:
    """Whether any value of the boolean setting `key` reads as true to git (a key with
    no `=` is true, an empty value false): for "is this ever switched on" questions."""
    return any(v is None or v.strip().lower() not in ("false", "no", "off", "0", "")
               for v in found.get(key, ()))


def _one(found: Settings, key: str) -> str | None:
    values = found.get(key)
    return values[-1] if values else None


def _files(git_dir: str, env: Mapping[str, str]) -> list[str]:
    files = []
    if not _env_bool(env, "GIT_CONFIG_NOSYSTEM"):
        system = env.get("GIT_CONFIG_SYSTEM")
        if system is None:
            system = _SYSTEM_FILE if _git_binary(env) in _DISTRIBUTION_GITS else ""
        if not system:
            raise Unsure("where this git keeps its system settings")
        files.append(system)
    override = env.get("GIT_CONFIG_GLOBAL")
    if override is not None:
        if not override:
            raise Unsure("an empty GIT_CONFIG_GLOBAL")
        files.append(override)
    else:
        home = env.get("HOME")
        if not home:
            raise Unsure("no HOME")
        xdg = env.get("XDG_CONFIG_HOME")
        files.append(os.path.join(xdg, "git", "config") if xdg else os.path.join(home, ".config", "git", "config"))
        files.append(os.path.join(home, ".gitconfig"))
    files.append(os.path.join(git_dir, "config"))
    return files


def _env_bool(env: Mapping[str, str], name: str) -> bool:
    value = env.get(name)
    if value is None:
        return False
    word = value.strip().lower()
    if word in ("true", "yes", "on"):
        return True
    if word in ("false", "no", "off", ""):
        return False
    try:
        return int(word) != 0
    except ValueError:
        raise Unsure(f"{name}={value!r}") from None


def _git_binary(env: Mapping[str, str]) -> str | None:
    """The real path of the `git` that PATH names first."""
    for folder in (env.get("PATH") or os.defpath).split(os.pathsep):
        candidate = os.path.join(folder or ".", "git")
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return os.path.realpath(candidate)
    return None


def _parse_file(path: str, found: Settings) -> None:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError:
        raise Unsure(f"cannot read {path}") from None
    parse(data, found)


def parse(data: bytes, found: Settings) -> None:
    """Add the settings of one file's bytes to `found` (Unsure past the plain subset)."""
    text = data.decode("utf-8", "surrogateescape")
    if text.startswith("\ufeff"):
        text = text[1:]  # git skips a UTF-8 byte order mark
    text = text.replace("\r\n", "\n")
    if any(c in text for c in "\r\0\v\f"):
        raise Unsure("a lone carriage return, a NUL or an unusual blank")
    section: str | None = None
    for line in text.split("\n"):
        body = line.lstrip(_SPACE)
        if not body or body[0] in "#;":
            continue
        if body[0] == "[":
            section = _header(body)
            continue
        if section is None:
            raise Unsure("a setting before any section")
        name, value = _setting(body)
        found.setdefault(f"{section}.{name}", []).append(value)


def _header(body: str) -> str:
    close = body.find("]")
    if close < 0:
        raise Unsure("an unclosed section header")
    rest = body[close + 1:].lstrip(_SPACE)
    if rest and rest[0] not in "#;":
        raise Unsure("something after a section header")
    inner = body[1:close]
    name, space, sub = inner.partition(" ")
    if not name or not set(name) <= _SECTION_CHARS:
        raise Unsure("an unusual section name")
    lowered = name.lower()
    if lowered in ("include", "includeif"):
        raise Unsure("an include")
    if not space:
        return lowered
    sub = sub.lstrip(_SPACE)
    if len(sub) < 2 or sub[0] != '"' or sub[-1] != '"' or any(c in sub[1:-1] for c in '"\\\n'):
        raise Unsure("an unusual subsection")
    return f"{lowered}.{sub[1:-1]}"


def _setting(body: str) -> tuple[str, str | None]:
    end = 0
    while end < len(body) and body[end] in _KEY_CHARS:
        end += 1
    name = body[:end]
    if not name or not name[0].isascii() or not name[0].isalpha():
        raise Unsure("an unusual key")
    rest = body[end:].lstrip(_SPACE)
    if not rest:
        return name.lower(), None
    if rest[0] != "=":
        raise Unsure("a key followed by something other than '='")
    return name.lower(), _value(rest[1:])


def _value(raw: str) -> str:
    """git's value rules, less quotes and escapes: leading and trailing blanks go, a
    run of blanks inside becomes as many spaces, `#` or `;` starts a comment."""
    out: list[str] = []
    pending = 0
    for c in raw:
        if c in _SPACE:
            if out:
                pending += 1
            continue
        if c in "#;":
            break
        if c in '"\\':
            raise Unsure("a quote or a backslash in a value")
        if pending:
            out.append(" " * pending)
            pending = 0
        out.append(c)
    return "".join(out)


def _from_environment(env: Mapping[str, str], found: Settings) -> None:
    """`git -c` settings: GIT_CONFIG_PARAMETERS (plain 'key'='value' pairs only),
    then GIT_CONFIG_COUNT with its KEY_n/VALUE_n."""
    params = env.get("GIT_CONFIG_PARAMETERS")
    if params:
        for key, value in _parameters(params):
            found.setdefault(_canonical(key), []).append(value)
    count = env.get("GIT_CONFIG_COUNT")
    if count:
        try:
            n = int(count)
        except ValueError:
            raise Unsure("GIT_CONFIG_COUNT") from None
        for i in range(n):
            named, valued = env.get(f"GIT_CONFIG_KEY_{i}"), env.get(f"GIT_CONFIG_VALUE_{i}")
            if named is None or valued is None:
                raise Unsure("a missing GIT_CONFIG_KEY/VALUE")
            found.setdefault(_canonical(named), []).append(valued)


def _parameters(params: str) -> list[tuple[str, str]]:
    """'a.b'='v' 'c.d'='w' ... as git writes them; Unsure on any other form."""
    if "\\" in params:
        raise Unsure("an escaped quote in GIT_CONFIG_PARAMETERS")
    items = []
    rest = params.strip(" ")
    while rest:
        if rest[0] != "'":
            raise Unsure("GIT_CONFIG_PARAMETERS")
        close = rest.find("'", 1)
        if close < 0:
            raise Unsure("GIT_CONFIG_PARAMETERS")
        key, rest = rest[1:close], rest[close + 1:]
        if not rest.startswith("='"):
            raise Unsure("GIT_CONFIG_PARAMETERS in the old form")
        close = rest.find("'", 2)
        if close < 0:
            raise Unsure("GIT_CONFIG_PARAMETERS")
        items.append((key, rest[2:close]))
        rest = rest[close + 1:]
        if rest and rest[0] != " ":
            raise Unsure("GIT_CONFIG_PARAMETERS")
        rest = rest.lstrip(" ")
    return items


def _canonical(key: str) -> str:
    """A `-c` key as git stores it: section and name lower-cased, the middle kept."""
    section, dot, rest = key.partition(".")
    middle, dot2, name = rest.rpartition(".")
    if not dot or not name or not set(section) <= _SECTION_CHARS or not set(name) <= _KEY_CHARS \
            or not name[0].isascii() or not name[0].isalpha():
        raise Unsure("an unusual -c key")
    return f"{section.lower()}.{middle}.{name.lower()}" if dot2 else f"{section.lower()}.{name.lower()}"
