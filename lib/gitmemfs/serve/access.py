"""Who may do what: the checks every request passes before git sees it, in one place for
the built-in server (server.py) and the CGI program behind a web server (gateway.py).

In order: a URL we serve, else 404; a key (`Authorization: Bearer <key>`, or Basic with
any user, `letta` as Letta Code sends it), else 401 with a Basic challenge, the same
answer whatever the URL names; the key's grant for that memory (read for upload-pack,
write for receive-pack), else 403, again whether or not the memory exists; a missing
memory is made only for a key that may create it, else 404.
"""
from __future__ import annotations

from gitmemfs.core.errors import MemfsError
from gitmemfs.serve import paths, repos
from gitmemfs.web.auth import presented
from gitmemfs.web.keys import Grant, KeyStore

REALM = "git-memory"
CHALLENGE = ("WWW-Authenticate", f'Basic realm="{REALM}", charset="UTF-8"')


class Refusal(Exception):
    def __init__(self, status: int, message: str, headers: tuple[tuple[str, str], ...] = ()):
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers


def grant_of(keys: KeyStore, authorization: str | None) -> Grant | None:
    value = presented(authorization)
    return keys.find(value) if value else None


def admit(keys: KeyStore, maker: repos.Maker, path: str, query: str,
          authorization: str | None) -> tuple[paths.Target, Grant]:
    """The memory and key of a request that may go on to git; Refusal otherwise."""
    target = paths.parse(path, query)
    if target is None:
        raise Refusal(404, "not a memory URL; use /v1/git/<agentId>/state.git or /<name>.git (smart HTTP only)")
    grant = grant_of(keys, authorization)
    if grant is None:
        raise Refusal(401, "a key is needed: Authorization: Bearer <key>, or Basic with user letta and the key "
                           "as password (git memory serve keys add issues one)", (CHALLENGE,))
    right = "write" if target.writes else "read"
    if not grant.may(right, target.name):
        raise Refusal(403, f"key {grant.id} may not {right} memory {target.name}")
    if not repos.exists(maker.root, target.name):
        if not grant.may("create", target.name):
            raise Refusal(404, f"no memory {target.name} on this server; a key allowed to create it makes it "
                               "on first use")
        try:
            maker.ensure(target.name)
        except MemfsError as exc:
            raise Refusal(500, exc.message) from None
    return target, grant
