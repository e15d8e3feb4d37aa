"""`git memory serve cgi --root DIR`: the same checks as a CGI program, for a web server.

Behind nginx and fcgiwrap (docs/serving.md), each request runs this program: it reads
the request from the CGI environment, passes access.py's checks with the same key
hashes, then becomes `git http-backend` (exec: the request body on stdin and the answer
on stdout are git's from there on). A refusal is a CGI answer of its own. The web
server's environment reaches git only through cgi.environment's list.
"""
from __future__ import annotations

import os
import shutil
import sys

from gitmemfs.serve import access, cgi, repos
from gitmemfs.web.keys import KeyStore


def run(root: str, layout: str) -> int:
    env = os.environ
    path = env.get("PATH_INFO") or env.get("DOCUMENT_URI") or ""
    query = env.get("QUERY_STRING") or ""
    try:
        target, grant = access.admit(KeyStore(root), repos.Maker(root, layout), path, query,
                                     env.get("HTTP_AUTHORIZATION"))
    except access.Refusal as no:
        head = "".join(f"{k}: {v}\r\n" for k, v in no.headers)
        sys.stdout.write(f"Status: {no.status}\r\nContent-Type: text/plain; charset=utf-8\r\n{head}\r\n"
                         f"error: {no.message}\n")
        sys.stdout.flush()
        return 0
    child = cgi.environment(root, f"/{target.name}.git{target.rest}", method=env.get("REQUEST_METHOD") or "GET",
                            query=query, user=grant.id, remote_addr=env.get("REMOTE_ADDR") or "",
                            content_type=env.get("CONTENT_TYPE"), content_length=env.get("CONTENT_LENGTH"),
                            encoding=env.get("HTTP_CONTENT_ENCODING"), protocol=env.get("HTTP_GIT_PROTOCOL"))
    exe = shutil.which("git", path=child.get("PATH")) or "git"
    os.execve(exe, [exe, "http-backend"], child)
