"""A real ssh git server for the tests: OpenSSH's sshd in front of gitolite, on loopback.

Everything lives in a temporary folder: gitolite's home (its rc, config, and the
repositories), sshd's host key, config, pid file and authorized keys, and one key per
gitolite user. sshd runs in the foreground (`-D -e`) as the user running the tests, on
127.0.0.1 and a free port, and forces every key to `gitolite-shell <user>` with HOME
pointing at gitolite's home (sshd itself starts sessions with the passwd home).

Our gate is installed by running the commands of docs/remotes-and-fleets.md as written
(its gitolite recipe: `LOCAL_CODE` in the rc, our `githooks/pre-receive` linked as a
common hook, `gitolite setup --hooks-only`), so every repository gitolite creates gets
it beside gitolite's own `update` hook, and the docs cannot drift from what works.
`default_branch=None` leaves git's own default for new repositories (`master` before
git 3): HEAD then names a branch nobody pushes, as on most gitolite servers.

`SshGitolite.available()` says why the tests must skip (no sshd, no gitolite).
"""
from __future__ import annotations

import os
import pwd
import re
import shutil
import socket
import subprocess
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "remotes-and-fleets.md"
RECIPE_TITLE = "## A fleet on one ssh server (gitolite)"
SSHD_CANDIDATES = ("/usr/sbin/sshd", "/usr/local/sbin/sshd", "/sbin/sshd")


def _which_sshd() -> str | None:
    found = shutil.which("sshd")
    return found or next((p for p in SSHD_CANDIDATES if os.access(p, os.X_OK)), None)


def docs_recipe() -> list[str]:
    """The shell commands of the docs' gitolite recipe (its first ```sh block)."""
    text = DOCS.read_text(encoding="utf-8")
    section = text[text.index(RECIPE_TITLE):]
    block = section[section.index("```sh\n") + len("```sh\n"):]
    block = block[:block.index("```")]
    return [line.split("  #")[0].strip() for line in block.splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


class SshGitolite:
    def __init__(self, root: Path, default_branch: str | None = "main"):
        self.root = Path(root)
        self.default_branch = default_branch
        self.home = self.root / "gitolite-home"
        self.keys = self.root / "keys"
        self.user = pwd.getpwuid(os.getuid()).pw_name
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.users: dict[str, Path] = {}
        self.repos: dict[str, list[str]] = {}
        self.log = self.root / "sshd.log"
        self._drain: threading.Thread | None = None

    @staticmethod
    def available() -> str | None:
        """None when the tests can run, else the reason they skip."""
        missing = [name for name, found in (("sshd (Debian: openssh-server)", _which_sshd()),
                                            ("gitolite (Debian: gitolite3)", shutil.which("gitolite")),
                                            ("ssh", shutil.which("ssh")),
                                            ("ssh-keygen", shutil.which("ssh-keygen"))) if not found]
        if missing:
            return "needs " + ", ".join(missing) + " (.ci/run installs them where it can)"
        if os.getuid() == 0 and not os.path.isdir("/run/sshd") and not os.access("/run", os.W_OK):
            return "sshd as root needs /run/sshd"
        return None

    # -- set up ---------------------------------------------------------------------

    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(HOME=str(self.home), GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=str(self.home / ".gitconfig"))
        return env

    def _gitolite(self, *args: str) -> None:
        proc = subprocess.run(["gitolite", *args], cwd=self.home, env=self._env(), capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"gitolite {' '.join(args)} failed: {proc.stdout}{proc.stderr}")

    def keygen(self, name: str) -> Path:
        self.keys.mkdir(parents=True, exist_ok=True)
        key = self.keys / name
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], check=True,
                       capture_output=True)
        return key

    def start(self) -> SshGitolite:
        self.home.mkdir(parents=True)
        branch = f"[init]\n\tdefaultBranch = {self.default_branch}\n" if self.default_branch else ""
        (self.home / ".gitconfig").write_text(branch)
        self._gitolite("setup", "-a", "admin")
        rc = self.home / ".gitolite.rc"
        for command in docs_recipe():   # as the docs tell a gitolite admin, word for word
            command = command.replace("/path/to/git-memfs", str(ROOT))
            proc = subprocess.run(["bash", "-c", command], cwd=self.home, env=self._env(), capture_output=True,
                                  text=True)
            if proc.returncode != 0:
                raise RuntimeError(f"the docs' gitolite recipe failed at {command!r}: {proc.stdout}{proc.stderr}")
        text = rc.read_text()
        assert re.search(r'^\s*LOCAL_CODE => "\$rc\{GL_ADMIN_BASE\}/local",', text, re.M), \
            "the docs' sed left LOCAL_CODE off"
        text = text.replace("GIT_CONFIG_KEYS                 =>  '',",
                            "GIT_CONFIG_KEYS                 =>  'memory\\.checkScope',", 1)
        rc.write_text(text)
        common = self.home / ".gitolite" / "local" / "hooks" / "common"
        assert (common / "pre-receive").resolve() == (ROOT / "githooks" / "pre-receive").resolve()
        host = self.keygen("host")
        self.known_hosts = self.root / "known_hosts"
        self.authorized = self.root / "authorized_keys"
        self.authorized.write_text("")
        self._write_conf()
        if os.getuid() == 0:
            os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege separation folder
        config = self.root / "sshd_config"
        for _attempt in range(5):
            self.port = _free_port()
            config.write_text("\n".join([
                f"Port {self.port}", "ListenAddress 127.0.0.1", f"HostKey {host}",
                f"PidFile {self.root / 'sshd.pid'}", f"AuthorizedKeysFile {self.authorized}",
                "StrictModes no", "UsePAM no", "PasswordAuthentication no", "KbdInteractiveAuthentication no",
                "PubkeyAuthentication yes", "PermitRootLogin prohibit-password", f"AllowUsers {self.user}",
                "MaxStartups 200", "MaxSessions 200", "LogLevel VERBOSE", "UseDNS no", "PrintMotd no",
                "X11Forwarding no", "AllowTcpForwarding no", "PermitTTY no", "",
            ]))
            proc = subprocess.Popen([_which_sshd() or "sshd", "-D", "-e", "-f", str(config)],
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            assert proc.stderr is not None
            seen = []
            for raw in proc.stderr:  # wait for "Server listening on 127.0.0.1 port N."
                line = raw.decode(errors="replace")
                seen.append(line)
                if "Server listening on" in line:
                    break
            else:
                proc.wait()
                if any("Address already in use" in line for line in seen):
                    continue
                raise RuntimeError("sshd did not start:\n" + "".join(seen))
            self.proc = proc
            self._drain = threading.Thread(target=self._copy_log, args=(proc, seen), daemon=True)
            self._drain.start()
            break
        else:
            raise RuntimeError("sshd found no free port")
        self.known_hosts.write_text(f"[127.0.0.1]:{self.port} {(host.with_suffix('.pub')).read_text()}")
        return self

    def _copy_log(self, proc: subprocess.Popen[bytes], seen: list[str]) -> None:
        with open(self.log, "a", encoding="utf-8") as fh:
            fh.write("".join(seen))
            assert proc.stderr is not None
            for raw in proc.stderr:
                fh.write(raw.decode(errors="replace"))
                fh.flush()

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=30)
            if self._drain is not None:
                self._drain.join(timeout=30)
            self.proc = None

    def __enter__(self) -> SshGitolite:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- users and repositories ---------------------------------------------------------------

    def shell(self) -> str:
        if not getattr(self, "_shell", None):
            proc = subprocess.run(["gitolite", "query-rc", "GL_BINDIR"], cwd=self.home, env=self._env(),
                                  capture_output=True, text=True, check=True)
            self._shell = os.path.join(proc.stdout.strip(), "gitolite-shell")
        return self._shell

    def add_user(self, name: str) -> Path:
        key = self.keygen(name)
        forced = f'HOME={self.home} {self.shell()} {name}'
        with self.authorized.open("a") as fh:
            fh.write(f'command="{forced}",no-port-forwarding,no-X11-forwarding,no-agent-forwarding,no-pty '
                     f"{key.with_suffix('.pub').read_text()}")
        self.users[name] = key
        return key

    def add_repos(self, owners: dict[str, str | list[str]]) -> None:
        """{repo: user or [users]}: each repository read-write for its users; created with our hook."""
        for repo, users in owners.items():
            self.repos[repo] = [users] if isinstance(users, str) else list(users)
        self._write_conf()
        self._gitolite("setup")

    def _write_conf(self) -> None:
        lines = ["repo gitolite-admin", "    RW+ = admin", "", "repo @all", "    config memory.checkScope = all", ""]
        for repo, users in sorted(self.repos.items()):
            lines += [f"repo {repo}", f"    RW+ = {' '.join(users)}", ""]
        (self.home / ".gitolite" / "conf" / "gitolite.conf").write_text("\n".join(lines))

    def url(self, repo: str) -> str:
        return f"ssh://{self.user}@127.0.0.1:{self.port}/{repo}"

    def ssh_command(self, user: str) -> str:
        """An ssh command line for `user`'s key that trusts only this server's host key."""
        return (f"ssh -F /dev/null -i {self.users[user]} -o IdentitiesOnly=yes -o BatchMode=yes "
                f"-o UserKnownHostsFile={self.known_hosts} -o StrictHostKeyChecking=yes")

    def bare(self, repo: str) -> Path:
        return self.home / "repositories" / f"{repo}.git"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
