"""The page's routes: GET views, POST actions, one memory or one per agent under --root.

Every answer carries a strict Content-Security-Policy (no inline script, nothing from
another origin, no framing), `nosniff` and no referrer to other sites (`same-origin`:
with `no-referrer` a browser sends `Origin: null` even on the page's own forms). A POST is taken only with the
form token (derived from the session token) and an Origin of the server itself;
the gate in front (web/gate.py) has already checked Host and the session cookie.
"""
from __future__ import annotations

import os
from typing import Any, Callable

import anyio.to_thread
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from gitmemfs.core.errors import MemfsError
from gitmemfs.core.redact import redact
from gitmemfs.core.repo import Repo
from gitmemfs.edit.undo import undo
from gitmemfs.review import pending, render, views
from gitmemfs.web import auth
from gitmemfs.web.gate import GRANT_KEY, header
from gitmemfs.web.hosts import HostPolicy
from gitmemfs.web.memories import Memories

HERE = os.path.dirname(os.path.abspath(__file__))
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; "
       "base-uri 'none'; frame-ancestors 'none'")
HEADERS = {"content-security-policy": CSP, "x-content-type-options": "nosniff", "referrer-policy": "same-origin",
           "x-frame-options": "DENY", "cache-control": "no-store"}


class Page:
    def __init__(self, memories: Memories, token: str, hosts: HostPolicy):
        self.memories = memories
        self.form_token = auth.derive(token, "review-form")
        self.hosts = hosts
        self.env = Environment(loader=FileSystemLoader(os.path.join(HERE, "templates")),
                               autoescape=select_autoescape(default=True, default_for_string=True),
                               finalize=render.shown)
        self.env.filters.update(markdown=render.markdown, unified=render.unified)
        self.env.globals.update(bars=render.bars, stacked=render.stacked)

    # -- plumbing ------------------------------------------------------------------------

    def html(self, request: Request, name: str, status: int = 200, **data: Any) -> Response:
        agent = request.path_params.get("agent")
        base = f"/a/{agent}" if agent else ""
        text = self.env.get_template(name).render(base=base, agent=agent, form_token=self.form_token,
                                                  agents=self.memories.agents(self.grant(request))
                                                  if self.memories.multi else [],
                                                  **data)
        return HTMLResponse(text, status_code=status, headers=HEADERS)

    @staticmethod
    def grant(request: Request) -> Any:
        """What the key that logged in may reach (None: the page's own token, every memory)."""
        return request.scope.get(GRANT_KEY)

    def repo(self, request: Request) -> Repo:
        return self.memories.open(request.path_params.get("agent"), self.grant(request))

    def view(self, name: str, fn: Callable[[Repo, Request], dict[str, Any]]) -> Callable[[Request], Any]:
        async def handler(request: Request) -> Response:
            if self.memories.multi and not request.path_params.get("agent"):
                return self.html(request, "agents.html")
            try:
                data = await anyio.to_thread.run_sync(lambda: fn(self.repo(request), request))
            except MemfsError as exc:
                return self.html(request, "result.html", 400, ok=False, message=redact(exc.message))
            return self.html(request, name, **data)
        return handler

    def action(self, fn: Callable[[Repo, Request, dict[str, str]], Any]) -> Callable[[Request], Any]:
        async def handler(request: Request) -> Response:
            form = {k: str(v) for k, v in (await request.form()).items()}
            refused = self.refused(request, form)
            if refused:
                return PlainTextResponse(f"error: {refused}\n", status_code=403, headers=HEADERS)
            try:
                # act: on serve's port the change lands in the memory through its gate
                agent = request.path_params.get("agent")
                out = await anyio.to_thread.run_sync(lambda: self.memories.act(
                    self.grant(request), True, lambda opener: fn(opener(agent), request, form),
                    lambda done: not getattr(done, "code", 0)))
            except MemfsError as exc:
                return self.html(request, "result.html", 409, ok=False, message=redact(exc.message))
            code = getattr(out, "code", 0)
            return self.html(request, "result.html", 200 if not code else 409, ok=not code,
                             message=redact(str(getattr(out, "message", ""))))
        return handler

    def refused(self, request: Request, form: dict[str, str]) -> str | None:
        """Why a POST is not the person's own (CSRF), or None."""
        host = header(request.scope, b"host")
        if not self.hosts.origin_ok(header(request.scope, b"origin"), host):
            return "this action must come from the review page itself (Origin is missing or another site's)"
        if not auth.same(form.get("form_token", ""), self.form_token):
            return "the form token is missing or wrong; reload the review page and try again"
        return None


def build(memories: Memories, token: str, hosts: HostPolicy) -> Starlette:
    page = Page(memories, token, hosts)

    def q(request: Request, name: str) -> str:
        return str(request.query_params.get(name) or "")

    def page_number(request: Request) -> int:
        try:
            return max(0, int(q(request, "page") or 0))
        except ValueError:
            return 0

    def file_or_tree(repo: Repo, request: Request) -> dict[str, Any]:
        path = q(request, "path")
        return {"file": views.one_file(repo, path)} if path else {"tree": views.files(repo)}

    def accept(repo: Repo, request: Request, form: dict[str, str]) -> Any:
        return pending.accept(repo, request.path_params["kind"], request.path_params["ident"], form.get("expect", ""))

    def reject(repo: Repo, request: Request, form: dict[str, str]) -> Any:
        return pending.reject(repo, request.path_params["kind"], request.path_params["ident"], form.get("note", ""))

    def revert(repo: Repo, request: Request, form: dict[str, str]) -> Any:
        reason = form.get("reason", "").strip()
        if not reason:
            raise MemfsError("undo: give the reason (the commit subject) in the reason field")
        return undo(repo, request.path_params["sha"], reason=reason)

    routes = [
        Route("/", page.view("overview.html", lambda r, req: views.overview(r))),
        Route("/files", page.view("files.html", file_or_tree)),
        Route("/history", page.view("history.html", lambda r, req: views.timeline(
            r, page_number(req), q(req, "path"), q(req, "author"), q(req, "op")))),
        Route("/commit/{sha:str}", page.view("commit.html", lambda r, req: views.commit(r, req.path_params["sha"]))),
        Route("/pending", page.view("pending.html", lambda r, req: {"items": pending.every(r), "repo": r})),
        Route("/search", page.view("search.html", lambda r, req: {
            "q": q(req, "q"), "history": bool(q(req, "history")),
            "result": views.find(r, q(req, "q"), bool(q(req, "history")))})),
        Route("/plots", page.view("plots.html", lambda r, req: views.plots(r))),
        Route("/pending/{kind:str}/{ident:str}/accept", page.action(accept), methods=["POST"]),
        Route("/pending/{kind:str}/{ident:str}/reject", page.action(reject), methods=["POST"]),
        Route("/commit/{sha:str}/revert", page.action(revert), methods=["POST"]),
    ]
    static = Mount("/static", StaticFiles(directory=os.path.join(HERE, "static")), name="static")
    return Starlette(routes=[static, *routes, Mount("/a/{agent:str}", routes=routes)])
