"""`git memory serve`: a memory server for a team's agents (git smart HTTP, by git itself)."""
from __future__ import annotations

import argparse
from typing import Any

from gitmemfs.cli.common import Report
from gitmemfs.core import layout as layouts

DESCRIPTION = (
    "Serve every memory under --root DIR (bare repositories DIR/<name>.git) over git smart HTTP, "
    "run by git http-backend, at /v1/git/<agentId>/state.git (Letta Code's layout, with "
    "LETTA_MEMFS_BASE_URL set to the printed URL) and /<name>.git. Every request needs a key "
    "(git memory serve keys add): Authorization: Bearer <key>, or Basic with user letta and the key "
    "as password. Every memory has the pre-receive gate, receive.fsckObjects and receive.denyDeletes; "
    "a memory a key may create is made on first use, seeded as git memory init seeds it. The same "
    "port serves /mcp (MCP over streamable HTTP) and the review page, with the same keys (the page "
    "takes person and operator keys). The URL is printed first; --port 0 picks a free port.")


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("serve", parents=[common], help="serve memories to a team's agents over git HTTP",
                       description=DESCRIPTION)
    p.add_argument("--root", dest="serve_root", metavar="DIR", help="the folder of memories (DIR/<name>.git)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=0, help="port (default 0: any free port; the URL says which)")
    p.add_argument("--layout", choices=layouts.NAMES, default=layouts.LETTA,
                   help="the layout of memories made on first use (default letta)")
    p.set_defaults(func=do_serve)
    keys = p.add_subparsers(dest="serve_cmd", metavar="keys|cgi")
    k = keys.add_parser("keys", parents=[common], help="issue, list and revoke keys",
                        description="Keys for agents, people and operators. A key is printed once, when "
                                    "issued; the server keeps only its SHA-256.")
    ks = k.add_subparsers(dest="keys_cmd", metavar="add|list|revoke", required=True)
    add = ks.add_parser("add", parents=[common], help="issue a key (printed once)",
                        description="Issue a key named ID. NAMES are memory names or globs, comma-separated "
                                    "(* for every memory); write includes read, create includes write. With "
                                    "none given, the key reads, writes and creates the memory named ID.")
    add.add_argument("id", metavar="ID")
    for right in ("read", "write", "create"):
        add.add_argument(f"--{right}", metavar="NAMES", help=f"memories this key may {right}")
    add.add_argument("--kind", choices=("agent", "person", "operator"), default="agent",
                     help="whose key: an agent's (git and /mcp, the default), a person's or an operator's "
                          "(those also open the review page)")
    lst = ks.add_parser("list", parents=[common], help="the keys' ids and grants (never the keys)")
    rev = ks.add_parser("revoke", parents=[common], help="remove a key (it stops working at once)")
    rev.add_argument("id", metavar="ID")
    for leaf in (add, lst, rev):
        leaf.add_argument("--root", dest="serve_root", metavar="DIR", required=True, help="the server's folder")
        leaf.set_defaults(func=do_keys)
    c = keys.add_parser("cgi", parents=[common], help="one request as a CGI program (behind nginx + fcgiwrap)",
                        description="Check one request from the CGI environment (the same keys and grants), "
                                    "then run git http-backend for it. For a web server's CGI gateway; "
                                    "docs/serving.md shows nginx with fcgiwrap.")
    c.add_argument("--root", dest="serve_root", metavar="DIR", required=True, help="the folder of memories")
    c.add_argument("--layout", choices=layouts.NAMES, default=layouts.LETTA,
                   help="the layout of memories made on first use (default letta)")
    c.set_defaults(func=do_cgi)


def _root(args: argparse.Namespace) -> str:
    import os

    from gitmemfs.core.errors import UsageError

    if not args.serve_root:
        raise UsageError("serve: --root DIR is needed (the folder of memories)")
    return os.path.abspath(os.path.expanduser(str(args.serve_root)))


def do_keys(args: argparse.Namespace, ctx: Any) -> Report:
    from gitmemfs.web.keys import KeyStore, names

    store = KeyStore(_root(args))
    if args.keys_cmd == "list":
        grants = [g.as_dict() for g in store.grants()]
        lines = [f"{g['id']} ({g['kind']}): read {','.join(g['read']) or '-'}; write {','.join(g['write']) or '-'}; "
                 f"create {','.join(g['create']) or '-'}" for g in grants]
        return Report("\n".join(lines) or "no keys; git memory serve keys add ID --root DIR issues one",
                      {"keys": grants})
    if args.keys_cmd == "revoke":
        store.revoke(args.id)
        return Report(f"revoked key {args.id}", {"id": args.id})
    read, write, create = (names(getattr(args, r), r) for r in ("read", "write", "create"))
    if not (read or write or create):
        create = [args.id]
    key = store.add(args.id, read, write, create, args.kind)
    return Report(key, {"id": args.id, "kind": args.kind, "key": key, "read": read, "write": write,
                        "create": create})


def do_cgi(args: argparse.Namespace, ctx: Any) -> Report:
    from gitmemfs.serve import gateway

    return Report("", code=gateway.run(_root(args), args.layout))


def do_serve(args: argparse.Namespace, ctx: Any) -> Report:
    from gitmemfs.serve import server

    server.run(_root(args), host=args.host, port=args.port, layout=args.layout, as_json=ctx.json, mounts=_mounts())
    return Report("")


def _mounts() -> Any:
    """/mcp and the review page, on serve's port, where their extras are installed."""
    mounts: dict[str, Any] = {}
    try:
        from gitmemfs.mcp.server import mounted as mcp
    except ImportError:
        pass
    else:
        mounts["mcp"] = mcp
    try:
        from gitmemfs.review.serve import mounted as page
    except ImportError:
        pass
    else:
        mounts["page"] = page
    return mounts
