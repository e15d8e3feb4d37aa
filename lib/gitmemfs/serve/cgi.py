"""One `git http-backend` run per request (CGI, RFC 3875), bodies streamed both ways.

The request body goes to the child's stdin from a thread of its own while the answer
is read from its stdout: git may answer before it has read everything, and with both
pipes full neither side would move. A gzip body (as git sends large fetch requests)
is passed through as it came, with HTTP_CONTENT_ENCODING: http-backend inflates it.
The child's environment is built from nothing but what git and the gate need, so no
secret of the server's environment reaches git or a hook.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import threading
from typing import Any, BinaryIO, Iterator

PASS_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ", "XDG_CONFIG_HOME",
            "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM", "GIT_EXEC_PATH", "GIT_MEMFS_PYTHON")
CHUNK = 65536


def environment(root: str, path_info: str, *, method: str, query: str, user: str, remote_addr: str,
                content_type: str | None, content_length: str | None, encoding: str | None,
                protocol: str | None) -> dict[str, str]:
    env = {k: os.environ[k] for k in PASS_ENV if k in os.environ}
    env.update({"GIT_PROJECT_ROOT": root, "PATH_INFO": path_info, "REQUEST_METHOD": method,
                "QUERY_STRING": query, "REMOTE_USER": user, "REMOTE_ADDR": remote_addr,
                "GIT_HTTP_EXPORT_ALL": "1", "GATEWAY_INTERFACE": "CGI/1.1"})
    for name, value in (("CONTENT_TYPE", content_type), ("CONTENT_LENGTH", content_length),
                        ("HTTP_CONTENT_ENCODING", encoding), ("HTTP_GIT_PROTOCOL", protocol)):
        if value:
            env[name] = value
    return env


class Answer:
    """The child's status line and headers; `body()` streams the rest, then waits for it."""

    def __init__(self, proc: subprocess.Popen[bytes], feeder: threading.Thread | None):
        self.proc = proc
        self.feeder = feeder
        self.status = 200
        self.reason = "OK"
        self.headers: list[tuple[str, str]] = []
        assert proc.stdout is not None
        for raw in iter(proc.stdout.readline, b""):
            line = raw.rstrip(b"\r\n").decode("latin-1")
            if not line:
                break
            name, _, value = line.partition(":")
            if name.lower() == "status":
                code, _, reason = value.strip().partition(" ")
                self.status, self.reason = int(code), reason or ""
            else:
                self.headers.append((name.strip(), value.strip()))

    def body(self) -> Iterator[bytes]:
        out: Any = self.proc.stdout  # a BufferedReader: read1 returns what has come, not CHUNK bytes
        try:
            while True:
                data = out.read1(CHUNK)
                if not data:
                    break
                yield data
        finally:
            self.close()

    def close(self) -> None:
        if self.proc.poll() is None and self.proc.stdout is not None:
            self.proc.stdout.close()
        self.proc.wait()
        if self.feeder is not None:
            self.feeder.join()


def run(env: dict[str, str], body: Iterator[bytes] | None) -> Answer:
    exe = shutil.which("git") or "git"
    proc = subprocess.Popen([exe, "http-backend"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            env=env, cwd=env["GIT_PROJECT_ROOT"])
    feeder = None
    if body is not None:
        feeder = threading.Thread(target=_feed, args=(proc.stdin, body), daemon=True)
        feeder.start()
    elif proc.stdin is not None:
        proc.stdin.close()
    return Answer(proc, feeder)


def _feed(pipe: BinaryIO | None, body: Iterator[bytes]) -> None:
    assert pipe is not None
    try:
        for data in body:
            pipe.write(data)
    except (BrokenPipeError, OSError):
        pass  # the child stopped reading (it refused); its answer says why
    finally:
        try:
            pipe.close()
        except OSError:
            pass
