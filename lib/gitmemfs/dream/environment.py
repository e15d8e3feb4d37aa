"""The dream agent's environment: an allow-list, never our whole environment.

A dream agent runs code we do not control (DESIGN §0, third round). It gets the few
variables a shell, git and an agent CLI need, the model API variables such a CLI
reads, the variables we set for the pass, and the names a person lists in
`dream.passEnv`. Everything else is withheld: tokens (GIT_MEMORY_MCP_TOKEN,
GIT_MEMORY_TOKEN, a cloud key), agent sockets (SSH_AUTH_SOCK, GPG_AGENT_INFO,
DBUS_SESSION_BUS_ADDRESS, XDG_RUNTIME_DIR), approvals (GIT_MEMORY_APPROVE), and git
variables that point at another repository or inject config.

The values of secret-looking variables (withheld or passed) are also registered with
`core.redact`, so the payload the agent reads and the log never carry them.
"""
from __future__ import annotations

import os
import re
import shutil
import sys
import sysconfig
from typing import Mapping, Sequence

from gitmemfs.core import git
from gitmemfs.core.redact import register_secret

# What a shell, git and an agent CLI need to run as the person would run them.
BASIC = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "COLORTERM", "NO_COLOR",
         "TZ", "COLUMNS", "LINES", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME",
         # TLS behind an intercepting proxy
         "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
         # where git reads the person's config (so the agent's git behaves as ours)
         "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM", "GIT_ATTR_NOSYSTEM",
         "GIT_TEMPLATE_DIR", "GIT_EXEC_PATH",
         # ours: the interpreter for a checkout's launchers, lock patience, a cautious Landlock ABI
         "GIT_MEMFS_PYTHON", "GIT_MEMORY_LOCK_TIMEOUT", "GIT_DREAM_LANDLOCK_ABI",
         # where agent CLIs keep their own settings
         "CLAUDE_CONFIG_DIR", "CODEX_HOME", "LLM_USER_PATH")
BASIC_PREFIXES = ("LC_",)
# What an agent CLI needs to reach its model: the provider's key and endpoint.
MODEL_API = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_MODEL",
             "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID",
             "GEMINI_API_KEY", "GOOGLE_API_KEY")
ALLOWED = frozenset(BASIC + MODEL_API)

# A name that says its value is a secret: its value is masked in payloads and logs.
_SECRET_NAME = r"(?i)(TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|API_?KEY|ACCESS_?KEY|PRIVATE|CREDENTIAL|AUTH|COOKIE)"
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def allowed(name: str, pass_env: Sequence[str] = ()) -> bool:
    return name in ALLOWED or name.startswith(BASIC_PREFIXES) or name in pass_env


def secret_name(name: str) -> bool:
    return re.search(_SECRET_NAME, name) is not None or name.startswith("GIT_CONFIG_VALUE_")


def withheld(base_env: Mapping[str, str], child_env: Mapping[str, str]) -> list[str]:
    """The secret-looking variables of `base_env` the agent does not get."""
    return sorted(k for k, v in base_env.items() if v and secret_name(k) and k not in child_env)


def register_secrets(env: Mapping[str, str]) -> list[str]:
    """Register every secret-looking value of `env` for masking; their names."""
    names = []
    for key, value in env.items():
        if value and len(value) >= 8 and secret_name(key):
            register_secret(value)
            names.append(key)
    return names


def scripts_dir() -> str | None:
    """The folder holding our `git-memory`: a checkout's bin/, else the install's scripts."""
    candidates = []
    if os.path.basename(PACKAGE_PARENT) == "lib":
        candidates.append(os.path.join(os.path.dirname(PACKAGE_PARENT), "bin"))
    candidates += [sysconfig.get_path("scripts"), os.path.dirname(sys.executable)]
    found = shutil.which("git-memory")
    if found:
        candidates.append(os.path.dirname(found))
    for folder in candidates:
        if folder and os.access(os.path.join(folder, "git-memory"), os.X_OK):
            return folder
    return None


def agent_env(*, worktree: str, dream_id: str, prompt: str, base: str, branch: str, agent_id: str,
              agent_name: str, tmpdir: str, transcript: str | None, extra: Mapping[str, str],
              config: Mapping[str, str], base_env: Mapping[str, str] | None = None,
              pass_env: Sequence[str] = ()) -> dict[str, str]:
    source = os.environ if base_env is None else base_env
    env = {k: v for k, v in source.items() if allowed(k, pass_env)}
    # A repository variable or injected config is never passed, even when named: they
    # would point the agent's git at the memory itself, or carry an auth header.
    for key in list(env):
        if key in git.REPO_ENV or key == "GIT_CONFIG_COUNT" or key.startswith(("GIT_CONFIG_KEY_",
                                                                               "GIT_CONFIG_VALUE_")):
            del env[key]
    env.update({
        "MEMORY_DIR": worktree, "LETTA_MEMORY_DIR": worktree, "DREAM_ID": dream_id,
        "DREAM_PROMPT_FILE": prompt, "DREAM_BASE": base, "DREAM_BRANCH": branch,
        "AGENT_ID": agent_id, "AGENT_NAME": agent_name,
        "TMPDIR": tmpdir, "TMP": tmpdir, "TEMP": tmpdir,
        "GIT_TERMINAL_PROMPT": "0",
    })
    if not agent_id:
        # No agent identity configured: the agent's commits are the dream's, not the
        # person's (`git memory log` would call them human:<you>).
        env.update({"GIT_AUTHOR_NAME": "git dream", "GIT_AUTHOR_EMAIL": "dream@agents.invalid",
                    "GIT_COMMITTER_NAME": "git dream", "GIT_COMMITTER_EMAIL": "dream@agents.invalid"})
    if transcript:
        env["DREAM_TRANSCRIPT"] = transcript
        env["TRANSCRIPT_PATH"] = transcript  # upstream's name for the same file
    scripts = scripts_dir()
    if scripts:
        env["PATH"] = scripts + os.pathsep + env.get("PATH", os.defpath)
    env.setdefault("PATH", os.defpath)
    env.update(extra)
    git.add_config(env, config)
    return env
