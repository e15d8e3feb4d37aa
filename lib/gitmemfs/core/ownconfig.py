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
"""
from __future__ import annotations

import os
import re
import shlex

from gitmemfs.core import git
from gitmemfs.core.errors import MemfsError
from gitmemfs.core.visible import visible

REPO_SCOPES = ("local", "worktree")
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


def entries(cwd: str) -> list[tuple[str, str, str, str]]:
    """(origin, scope, key, value) for every setting git sees at `cwd`, includes followed."""
    res = git.run(["config", "-z", "--list", "--show-scope", "--show-origin"], cwd=cwd, check=False)
    fields = res.raw.split(b"\0")
    out = []
    for i in range(0, len(fields) - 2, 3):
        key, _, value = fields[i + 2].partition(b"\n")
        out.append((fields[i + 1].decode("utf-8", "replace"), fields[i].decode(), key.decode("utf-8", "replace"),
                    value.decode("utf-8", "replace")))
    return out


def refuse_planted(found: list[tuple[str, str, str, str]]) -> None:
    for origin, scope, key, value in found:
        if scope in REPO_SCOPES and PROGRAM_KEY.match(key.lower()) and not _harmless(key.lower(), value):
            shown = visible(key).replace("\n", "\\n")
            where = visible(origin.removeprefix("file:")).replace("\n", "\\n")
            raise MemfsError(
                f"the memory's git config names a program a person's command would run: {shown} (in {where}); "
                f"check what it runs, then remove it (git config --unset-all '{shown}', or edit {where}) or set "
                "it in your own config (git config --global), and run the command again")


def pinned(found: list[tuple[str, str, str, str]], environ: dict[str, str] | None = None) -> tuple[
        list[tuple[str, str]], dict[str, str]]:
    """(the -c settings, the environment variables) that give every fixed-name program
    key the person's value or git's default."""
    env = os.environ if environ is None else environ
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
    return config, extra
