"""The programs git runs in a person's command come from the person's config only.

An agent that can edit the memory's `.git/config` (or a file it includes) can name a
program there (`gpg.ssh.program`, `core.sshCommand`, `core.fsmonitor`, a credential
helper, a filter, `url.<base>.insteadOf` redirecting the push, ...), and git would
run it inside `protect`, `unprotect` or `redact` with the person's keys (issue 34).
Two layers, for every git the command starts (git-filter-repo's included):

- `refuse_planted`: any program-valued key whose scope is the repository (`local`,
  `worktree`, includes followed: an included file takes its includer's scope) stops
  the command before it changes anything, naming the key and the fix. A list of
  patterns, so a key whose name is made up (`filter.<x>.clean`) is caught too.
- `pinned`: the keys git reads by one fixed name get the person's value (global,
  system, command line) or git's default on the command line, which beats the
  repository's: a key an agent writes after the check, mid-command, is ignored.

A person allows one such key of the memory's, with its value, from their own config:
`git config --global --add memory.allowConfig 'KEY=VALUE'` (then it is theirs, and
pinned to that value). The network git every command runs (sync, clone, the mirror's
push; `network_git`) is checked the same way at the moment it starts, and runs with
the transports, pack programs, proxy and hooks pinned as well (see there).
"""
from __future__ import annotations

import os
import re
import shlex

from gitmemfs.core import git
from gitmemfs.core.errors import MemfsError
from gitmemfs.core.visible import visible

REPO_SCOPES = ("local", "worktree")
PERSON_SCOPES = ("system", "global")  # where an allowance counts (never -c / GIT_CONFIG_*)
ALLOW = "memory.allowconfig"
ALLOWED = "allowed"  # the scope we give a repository key the person allowed
# Program-valued keys (git config --list prints section and name lower-cased).
PROGRAM_KEY = re.compile(r"""^(?:
    gpg\.(?:[^.]+\.)?program | gpg\.ssh\.defaultkeycommand
  | core\.(?:sshcommand|askpass|fsmonitor|pager|editor|gitproxy|alternaterefscommand)
  | sequence\.editor | diff\.external | interactive\.difffilter
  | credential\.(?:.+\.)?helper
  | (?:diff|merge|filter)\..+\.(?:command|textconv|driver|clean|smudge|process)
  | (?:difftool|mergetool|browser|man)\..+\.(?:cmd|path) | trailer\..+\.(?:command|cmd)
  | remote\..+\.(?:receivepack|uploadpack|vcs) | url\..+\.(?:insteadof|pushinsteadof)
  | protocol\.(?:.+\.)?allow | pager\..+ | submodule\..+\.update | hook\..+
)$""", re.X | re.S)
_BOOLS = frozenset(("", "true", "false", "yes", "no", "on", "off", "1", "0"))
# Fixed-name keys and git's default when the person sets none. gpg.program and
# gpg.openpgp.program are one setting to git (the later wins).
DEFAULTS = (("gpg.program", "gpg"), ("gpg.openpgp.program", "gpg"), ("gpg.x509.program", "gpgsm"),
            ("gpg.ssh.program", "ssh-keygen"), ("core.fsmonitor", "false"), ("core.pager", "less"),
            ("core.editor", "vi"), ("sequence.editor", "vi"))
_SAME = {"gpg.program": "gpg.openpgp.program", "gpg.openpgp.program": "gpg.program"}
# Fixed-name keys without a value that means "none": pinned only when the person sets one.
PERSON_ONLY = ("gpg.ssh.defaultkeycommand", "core.askpass")


def _harmless(key: str, value: str) -> bool:
    """A program key whose value names no program."""
    if key == "core.fsmonitor" or key.startswith("pager."):
        return value.strip().lower() in _BOOLS  # true: git's own daemon / core.pager
    if key.startswith("submodule."):
        return not value.lstrip().startswith("!")
    if key.startswith("protocol."):
        return value.strip().lower() == "never"
    if key.startswith("credential."):
        return value == ""  # a reset of the helper list
    return False


def entries(cwd: str, *, repo_config: bool = True) -> list[tuple[str, str, str, str]]:
    """(origin, scope, key, value) for every setting git sees at `cwd`, includes followed
    (`repo_config=False`: without the repository's)."""
    res = git.run(["config", "-z", "--list", "--show-scope", "--show-origin"], cwd=cwd, check=False,
                  env=None if repo_config else {"GIT_DIR": os.devnull})
    return _parsed(res.raw)


def canonical(key: str) -> str:
    """A config key as `git config --list` prints it: section and name lower-cased,
    the subsection as written."""
    first, dot, rest = key.partition(".")
    middle, dot2, name = rest.rpartition(".")
    if not dot:
        return key.lower()
    if not dot2:
        return f"{first.lower()}.{rest.lower()}"
    return f"{first.lower()}.{middle}.{name.lower()}"


def trusting(found: list[tuple[str, str, str, str]]) -> list[tuple[str, str, str, str]]:
    """`found` with every repository key the person allowed (`memory.allowConfig`
    'KEY=VALUE' in their system or global config, key and value exactly) taken as
    theirs: not refused, and pinned to that value like their own settings."""
    allowed = set()
    for _origin, scope, key, value in found:
        if scope in PERSON_SCOPES and key.lower() == ALLOW:
            name, sep, wanted = value.partition("=")
            if sep:
                allowed.add((canonical(name.strip()), wanted))
    if not allowed:
        return found
    return [(o, ALLOWED if s in REPO_SCOPES and (canonical(k), v) in allowed else s, k, v) for o, s, k, v in found]


def refuse_planted(found: list[tuple[str, str, str, str]]) -> None:
    for origin, scope, key, value in trusting(found):
        if scope in REPO_SCOPES and PROGRAM_KEY.match(key.lower()) and not _harmless(key.lower(), value):
            shown = visible(key).replace("\n", "\\n")
            where = visible(origin.removeprefix("file:")).replace("\n", "\\n")
            allow = shlex.quote(visible(f"{key}={value}").replace("\n", "\\n"))
            raise MemfsError(
                f"the memory's git config names a program a person's command would run: {shown} (in {where}); "
                f"check what it runs, then remove it (git config --unset-all '{shown}', or edit {where}), set "
                "it in your own config (git config --global), or allow this one value "
                f"(git config --global --add memory.allowConfig {allow}), and run the command again")


def pinned(found: list[tuple[str, str, str, str]], environ: dict[str, str] | None = None) -> tuple[
        list[tuple[str, str]], dict[str, str]]:
    """(the -c settings, the environment variables) that give every fixed-name program
    key the person's value or git's default."""
    env = os.environ if environ is None else environ
    found = trusting(found)
    mine: dict[str, list[str]] = {}
    for _origin, scope, key, value in found:
        if scope not in REPO_SCOPES:
            mine.setdefault(key.lower(), []).append(value)
    config: list[tuple[str, str]] = []
    # git reads $PAGER, $VISUAL and $EDITOR only when the config names none, and
    # sequence.editor falls back to the editor.
    fallback = {"core.pager": env.get("PAGER"), "core.editor": env.get("VISUAL") or env.get("EDITOR")}
    for key, default in DEFAULTS:
        # Of a pair, the person's later one: git keeps the last it reads of either name.
        last = [v for _o, s, k, v in found if s not in REPO_SCOPES and k.lower() in (key, _SAME.get(key))]
        value = last[-1] if last else fallback.get(key) or default
        config.append((key, value))
        if key == "core.editor":
            fallback["sequence.editor"] = value
    config += [(key, mine[key][-1]) for key in PERSON_ONLY if key in mine]
    config.append(("credential.helper", ""))  # the list reset, then the person's helpers in order
    config += [("credential.helper", v) for v in mine.get("credential.helper", [])]
    extra: dict[str, str] = {}
    # $GIT_SSH_COMMAND beats every config; core.sshCommand beats $GIT_SSH.
    if not env.get("GIT_SSH_COMMAND"):
        if mine.get("core.sshcommand"):
            extra["GIT_SSH_COMMAND"] = mine["core.sshcommand"][-1]
        elif env.get("GIT_SSH"):
            extra["GIT_SSH_COMMAND"] = shlex.quote(env["GIT_SSH"])
        else:
            extra["GIT_SSH_COMMAND"] = git.SSH_BATCH  # what a network call uses by default
    # A key the person allowed by its value keeps that value, even if rewritten mid-command.
    done = {k for k, _d in DEFAULTS} | set(PERSON_ONLY) | {"credential.helper", "core.sshcommand"}
    config += [(k, v) for _o, s, k, v in found if s == ALLOWED and k.lower() not in done]
    return config, extra


def pin_process(cwd: str, more: list[tuple[str, str]] | None = None, *, repo_config: bool = True) -> None:
    """For the rest of a person's command: refuse a program key of the memory's, and
    give every git this process starts the person's programs (`pinned`) and `more`.
    `repo_config=False`: no repository yet (a clone), the person's config alone."""
    found = entries(cwd, repo_config=repo_config)
    if repo_config:
        refuse_planted(found)
    config, extra = pinned(found)
    env = {k: v for k, v in os.environ.items() if k.startswith("GIT_CONFIG_")}
    git.add_config(env, [*(more or []), *config])
    os.environ.update(env)
    os.environ.update(extra)


# -- the network git ---------------------------------------------------------------------

# Transports git runs no program of the config's for; `ext::` runs a command, and any
# other name is a `git-remote-<name>` helper.
SAFE_TRANSPORTS = ("file", "git", "http", "https", "ssh")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)(::|://)")
_PACK_OPTION = {"push": ("--receive-pack", "receivepack", "git-receive-pack"),
                "fetch": ("--upload-pack", "uploadpack", "git-upload-pack"),
                "clone": ("--upload-pack", "uploadpack", "git-upload-pack"),
                "ls-remote": ("--upload-pack", "uploadpack", "git-upload-pack")}
# Fixed-name settings a fetch or push reads that start a program (or sign with the
# person's key), and the value that starts none when the person sets none.
NETWORK_DEFAULTS = (("push.gpgsign", "false"), ("push.recursesubmodules", "no"),
                    ("fetch.recursesubmodules", "false"), ("submodule.recurse", "false"),
                    ("core.alternaterefscommand", "true"))


def transport(url: str) -> str:
    """The transport git uses for `url` (its name as protocol.<name>.allow knows it)."""
    match = _SCHEME.match(url)
    if match:
        name = match.group(1).lower()
        return "ssh" if name in ("git+ssh", "ssh+git") else name
    colon, slash = url.find(":"), url.find("/")
    if colon > 0 and (slash < 0 or colon < slash):
        return "ssh"  # scp-like user@host:path
    return "file"


def network_git(cwd: str, args: list[str], *, urls: list[str], repo_config: bool = True,
                environ: dict[str, str] | None = None) -> tuple[list[str], list[tuple[str, str]], dict[str, str]]:
    """(args, -c settings, environment) for a network git started at `cwd`, checked at
    the moment it starts: a program key in the memory's config (`repo_config`: a
    clone's folder has none) is refused; every program it could start is pinned to
    the person's own or to none, by means a key written later cannot beat:

    - the environment: ssh (`GIT_SSH_COMMAND`), the proxy (`GIT_PROXY_COMMAND`), and
      the transports (`GIT_ALLOW_PROTOCOL`: the remote's own and those the person's
      rewrites and allowances name, never `ext::` or a helper the memory names);
    - the command line: `--upload-pack` / `--receive-pack` (a repeated
      remote.<name>.uploadpack is read first-wins, so a -c could not beat it);
    - -c: hooks off (the toolkit has no network hook), credential helpers reset to the
      person's list (any `credential.<url>.helper` included), the signing programs,
      push signing and submodule recursion.
    """
    env = os.environ if environ is None else environ
    found = entries(cwd, repo_config=repo_config)
    if repo_config:
        refuse_planted(found)
    found = trusting(found)
    config, extra = pinned(found, dict(env))
    mine: dict[str, list[str]] = {}
    for _origin, scope, key, value in found:
        if scope not in REPO_SCOPES:
            mine.setdefault(key.lower(), []).append(value)
    keys = {key for _o, _s, key, _v in found}
    remotes = [a for a in args if f"remote.{a}.url" in keys]
    out = list(args)
    for i, arg in enumerate(out):
        if arg in _PACK_OPTION:
            option, name, default = _PACK_OPTION[arg]
            theirs = [v for r in remotes for v in mine.get(f"remote.{r}.{name}".lower(), [])]
            out.insert(i + 1, f"{option}={theirs[0] if theirs else default}")
            break
    config.append(("core.hooksPath", os.devnull))
    config += [(key, mine[key][-1] if key in mine else default) for key, default in NETWORK_DEFAULTS]
    if "GIT_ALLOW_PROTOCOL" not in env:
        where = list(urls) + [v for _o, _s, k, v in found for r in remotes
                              if k in (f"remote.{r}.url", f"remote.{r}.pushurl")]
        allowed = {t for t in map(transport, where) if t in SAFE_TRANSPORTS}
        for _origin, scope, key, value in found:
            low = key.lower()
            if scope in REPO_SCOPES:
                continue
            if low.startswith("url.") and low.endswith(("insteadof", "pushinsteadof")):
                allowed.add(transport(key[4:key.rfind(".")]))
            elif low.startswith("protocol.") and low.endswith(".allow") and low.count(".") == 2 \
                    and value.strip().lower() in ("always", "user"):
                allowed.add(low.split(".")[1])
        extra["GIT_ALLOW_PROTOCOL"] = ":".join(sorted(allowed)) or "none"
    if "GIT_PROXY_COMMAND" not in env and "core.gitproxy" not in mine:
        extra["GIT_PROXY_COMMAND"] = ""  # git:// directly, never through a proxy the memory names
    return out, config, extra


def _parsed(raw: bytes) -> list[tuple[str, str, str, str]]:
    fields = raw.split(b"\0")
    out = []
    for i in range(0, len(fields) - 2, 3):
        key, _, value = fields[i + 2].partition(b"\n")
        out.append((fields[i + 1].decode("utf-8", "replace"), fields[i].decode(), key.decode("utf-8", "replace"),
                    value.decode("utf-8", "replace")))
    return out
