"""Which memory and which git service a request names.

Letta's layout `/v1/git/<agentId>/state.git/<rest>` and a plain `/<name>.git/<rest>`
name the same memory DIR/<name>.git. Only smart HTTP is served: `info/refs` with a
`service`, and the two RPC endpoints; dumb-HTTP file paths are not (they would read
repository files around the protocol).
"""
from __future__ import annotations

import re
from urllib.parse import parse_qs

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_LETTA = re.compile(rf"/v1/git/(?P<name>{NAME.pattern})/state\.git(?P<rest>/.*)")
_PLAIN = re.compile(rf"/(?P<name>{NAME.pattern})\.git(?P<rest>/.*)")
SERVICES = ("git-upload-pack", "git-receive-pack")


class Target:
    def __init__(self, name: str, rest: str, service: str):
        self.name = name
        self.rest = rest          # the part git http-backend sees after the repository
        self.service = service

    @property
    def writes(self) -> bool:
        return self.service == "git-receive-pack"


def parse(path: str, query: str) -> Target | None:
    """The memory and service of a request, or None when it is not one we serve."""
    found = _LETTA.fullmatch(path) or _PLAIN.fullmatch(path)
    if found is None:
        return None
    name, rest = found["name"], found["rest"]
    if name.endswith(".git") or ".." in name:
        return None
    if rest == "/info/refs":
        service = (parse_qs(query).get("service") or [""])[0]
    else:
        service = rest[1:]
    if service not in SERVICES or rest not in ("/info/refs", f"/{service}"):
        return None
    return Target(name, rest, service)
