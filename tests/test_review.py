"""`git memory review` in a real browser: headless Chromium (Debian's `chromium`, driven by
Playwright with that executable, never a downloaded one) against the server started as
`git memory review` from bin/. The person clicks accept, reject and revert, and the
repository afterwards holds what the CLI would have made; an agent's planted script
never runs; cross-site posts and a rebound Host are refused."""
from __future__ import annotations

import http.client
import http.server
import json
import os
import re
import subprocess
import threading
import time
import urllib.parse
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pytest

from conftest import commit_all, fast_import, git, head, memfile, memory, snapshot, write
from dreamkit import dream, dream_json, kept, landlock

pytest.importorskip("starlette", reason="the [review] extra is not installed")
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
DOCS = Path(__file__).resolve().parent.parent / "docs"
SCREENSHOTS = "GIT_MEMFS_SCREENSHOTS"  # set by `make screenshots`: refresh docs/review.png
PROPOSE = 'git memory create notes/{name}.md "{body}" -d "{desc}" -m "{reason}"'


@contextmanager
def review(*args: str, cwd: Path, env: dict[str, str] | None = None, browse: bool = False) -> Iterator[dict[str, Any]]:
    """The server as a person starts it; yields its --json line (url, port, login_file)."""
    flags = [] if browse else ["--no-browser"]
    proc = subprocess.Popen(["git-memory", "review", *flags, "--json", *args], cwd=cwd, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            env={**os.environ, **(env or {})})
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert line, proc.stderr.read() if proc.stderr else ""
        info = json.loads(line)
        info["token"] = urllib.parse.parse_qs(urllib.parse.urlsplit(info["url"]).query)["token"][0]
        info["base"] = info["url"].split("/?")[0]
        info["proc"] = proc
        yield info
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    """A fresh headless Chromium profile; the page it opens."""
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(f"{CHROMIUM} is missing: apt-get install chromium (.ci/run does)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright (the [dev] extra)")
    with sync_api.sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=CHROMIUM, headless=True, args=FLAGS,
            viewport={"width": 1200, "height": 900})
        try:
            yield context.new_page()
        finally:
            context.close()


def request(info: dict[str, Any], method: str, path: str, *, body: dict[str, str] | None = None,
            headers: dict[str, str] | None = None, cookie: bool = True) -> tuple[int, str]:
    """One raw HTTP request to the server, headers exactly as given (Host included)."""
    conn = http.client.HTTPConnection("127.0.0.1", info["port"], timeout=60)
    sent = {"Host": f"127.0.0.1:{info['port']}", **(headers or {})}
    if cookie:
        sent["Cookie"] = f"gitmemfs_review_{info['port']}={info['token']}"
    data = urllib.parse.urlencode(body).encode() if body is not None else None
    if data is not None:
        sent.update({"Content-Type": "application/x-www-form-urlencoded", "Content-Length": str(len(data))})
    conn.putrequest(method, path, skip_host=True)
    for k, v in sent.items():
        conn.putheader(k, v)
    conn.endheaders(data)
    res = conn.getresponse()
    text = res.read().decode()
    conn.close()
    return res.status, text


def pending_dream(repo: Path, name: str) -> str:
    """A dream run left for review (dream.merge=explicit) that adds notes/<name>.md."""
    cmd = PROPOSE.format(name=name, body=f"Dreamed {name}.", desc=f"About {name}", reason=f"Add {name}")
    out = dream_json(repo, "--agent", cmd, "--merge", "explicit", code=0)
    assert out["status"] == "pending"
    return str(out["id"])


def form_token(page: Any) -> str:
    return str(page.get_attribute("input[name=form_token]", "value"))


# -- accept, reject, revert -------------------------------------------------------------------

@landlock
def test_accept_and_reject_in_the_browser_leave_what_the_cli_would(repo: Path, browser: Any) -> None:
    one, two = pending_dream(repo, "first"), pending_dream(repo, "second")
    with review(cwd=repo) as info:
        browser.goto(info["url"])
        assert browser.url == info["base"] + "/", "the token leaves the address bar"
        assert "2 item(s)" in browser.inner_text("main")
        if os.environ.get(SCREENSHOTS):
            browser.screenshot(path=str(DOCS / "review.png"), full_page=True)
        browser.click("nav >> text=Pending")
        section = browser.locator(f"#item-{one}")
        if os.environ.get(SCREENSHOTS):
            browser.screenshot(path=str(DOCS / "review-pending.png"), full_page=True)
        assert "passes the memory rules" in section.inner_text()
        assert "Dreamed first." in section.inner_text() and "(+" in section.inner_text()
        section.locator("button.accept").click()
        assert "Dreamed and merged 1 commit" in browser.inner_text("#result")
        browser.click("nav >> text=Pending")
        other = browser.locator(f"#item-{two}")
        other.locator("input[name=note]").fill("Not needed: first covers it")
        other.locator("button.reject").click()
        assert f"Dropped dream {two}" in browser.inner_text("#result")
    # Accept: the merge `git dream finish ID --merge` makes, by the person.
    subject, trailers, author = git("log", "-1", "--format=%s%x00%(trailers:only)%x00%ae", cwd=repo).stdout.split("\0")
    assert subject.startswith("merge(dream): Add first") and f"Dream-Id: {one}" in trailers
    assert author.strip() == git("config", "user.email", cwd=repo).stdout.strip()
    assert (repo / "notes/first.md").exists() and not (repo / "notes/second.md").exists()
    assert kept(repo, one) is None and kept(repo, two) is None
    # Reject: `git dream drop ID --note`; the record keeps the note.
    runs = {r["id"]: r for r in json.loads(dream(repo, "list", "--all", "--json").stdout)["runs"]}
    assert runs[two]["status"] == "dropped" and runs[two]["note"] == "Not needed: first covers it"
    assert runs[one]["status"] == "merged"


def verified(repo: Path, rev: str) -> str:
    """git's verdict on `rev`'s signature (%G?): G is good, by a key the allowed signers list."""
    return git("log", "-1", "--format=%G?", rev, cwd=repo).stdout.strip()


def shape(repo: Path, rev: str) -> tuple[str, list[str], str, list[str]]:
    """What a merge records apart from ids and times: subject prefix, trailer keys, author, parents."""
    subject, trailers, author, parents = git("log", "-1", "--format=%s%x00%(trailers:only)%x00%ae%x00%P", rev,
                                             cwd=repo).stdout.split("\0")
    return (subject.split(":")[0], sorted(t.split(":")[0] for t in trailers.splitlines() if t.strip()),
            author, ["p"] * len(parents.split()))


@landlock
def test_accepts_on_the_page_are_signed_with_the_persons_key_as_the_cli_does(mem: Path, tmp_path: Path,
                                                                             browser: Any) -> None:
    from test_approvals import needs_ssh_keygen
    from test_proposals import agent, propose
    from trustkit import allow, keypair

    if needs_ssh_keygen.args[0]:
        pytest.skip(needs_ssh_keygen.kwargs["reason"])
    keys = tmp_path / "keys"
    keys.mkdir()
    person = keypair(keys, "person")
    # The person's key in the person's own config; the memory lists it as its allowed signer.
    for name, value in (("gpg.format", "ssh"), ("user.signingKey", str(person))):
        git("config", "--global", name, value, cwd=mem)
    git("config", "gpg.ssh.allowedSignersFile", str(allow(keys / "allowed", "person@example.com", person)), cwd=mem)
    one, two, three = (pending_dream(mem, name) for name in ("first", "second", "third"))
    ident = propose(mem, "str_replace", "system/rules.md", "Never share secrets.", "Never share passwords.",
                    "-m", "narrower", env=agent(mem))["proposed"]
    with review(cwd=mem) as info:
        browser.goto(info["url"])
        browser.click("nav >> text=Pending")
        browser.locator(f"#item-{one} button.accept").click()
        assert "Dreamed and merged 1 commit" in browser.inner_text("#result")
        page_merge = head(mem)
        # The person's `git dream finish ID --merge`, from the command line, for another run.
        dream_json(mem, "finish", two, "--merge", code=0)
        cli_merge = head(mem)
        # Where the person's key cannot sign, the merge is refused as it is, and the run stays.
        git("config", "--global", "user.signingKey", str(keys / "missing"), cwd=mem)
        before = snapshot(mem)
        browser.click("nav >> text=Pending")
        browser.locator(f"#item-{three} button.accept").click()
        assert "signing the merge failed" in browser.inner_text("#result")
        out = dream(mem, "finish", three, "--merge")
        assert out.returncode == 1 and "signing the merge failed" in out.stderr and "user.signingKey" in out.stderr
        assert snapshot(mem) == before and kept(mem, three)
        git("config", "--global", "user.signingKey", str(person), cwd=mem)
        browser.click("nav >> text=Pending")
        browser.locator(f"#item-{ident} button.accept").click()
        assert f"Proposal {ident} accepted" in browser.inner_text("#result")
    accepted = head(mem)
    assert f"Dream-Id: {one}" in git("log", "-1", "--format=%B", page_merge, cwd=mem).stdout
    assert verified(mem, page_merge) == verified(mem, cli_merge) == "G"
    assert shape(mem, page_merge) == shape(mem, cli_merge)
    message = git("log", "-1", "--format=%B", accepted, cwd=mem).stdout
    assert verified(mem, accepted) == "G" and f"Memory-Proposal: {ident}" in message
    assert "Memory-Approved: protect" in message and "passwords" in (mem / "system/rules.md").read_text()
    runs = {r["id"]: r for r in json.loads(dream(mem, "list", "--json").stdout)["runs"]}
    assert runs[three]["status"] == "pending"


def test_a_proposal_that_moved_after_the_page_showed_it_is_not_accepted(mem: Path, browser: Any) -> None:
    from test_proposals import agent, proposals, propose

    shown = propose(mem, "insert", "system/rules.md", "1", "Be kind.", "-m", "kindness", env=agent(mem))["proposed"]
    with review(cwd=mem) as info:
        browser.goto(info["url"])
        browser.click("nav >> text=Pending")
        assert "Be kind." in browser.inner_text(f"#item-{shown}")
        # Behind the page's back, the ref now names other text (an agent with a shell can do that).
        other = propose(mem, "str_replace", "system/rules.md", "Never share secrets.", "Share everything.",
                        "-m", "kindness", env=agent(mem))["proposed"]
        moved = proposals(mem)[other]
        git("update-ref", f"refs/memory/proposals/{shown}", moved, cwd=mem)
        before = snapshot(mem)
        browser.locator(f"#item-{shown} button.accept").click()
        assert f"{shown} changed since it was shown" in browser.inner_text("#result")
    assert snapshot(mem) == before and "Share everything." not in (mem / "system/rules.md").read_text()
    assert proposals(mem)[shown] == moved, "the proposal is still there to look at again"


@landlock
def test_a_dream_run_that_moved_after_the_page_showed_it_is_not_merged(repo: Path, browser: Any) -> None:
    ident = pending_dream(repo, "shown")
    with review(cwd=repo) as info:
        browser.goto(info["url"])
        browser.click("nav >> text=Pending")
        assert "Dreamed shown." in browser.inner_text(f"#item-{ident}")
        other = pending_dream(repo, "unseen")
        moved = str(kept(repo, other))
        git("update-ref", f"refs/dreams/kept/{ident}", moved, cwd=repo)
        before = snapshot(repo)
        browser.locator(f"#item-{ident} button.accept").click()
        assert "changed since it was shown" in browser.inner_text("#result")
    assert snapshot(repo) == before and not (repo / "notes/unseen.md").exists()
    assert kept(repo, ident) == moved


@landlock
def test_revert_a_merged_dream_in_the_browser_goes_through_undo(repo: Path, browser: Any) -> None:
    ident = pending_dream(repo, "third")
    dream_json(repo, "finish", ident, "--merge", code=0)
    merge = head(repo)
    with review(cwd=repo) as info:
        browser.goto(info["url"])
        browser.click("text=its merge: diff, revert")  # from the overview's last dream
        assert merge in browser.url
        browser.click("nav >> text=History")
        browser.locator(".timeline a", has_text=merge[:7]).click()
        assert "merge(dream): Add third" in browser.inner_text("h1")
        browser.fill("input[name=reason]", "The dream's note was wrong")
        browser.click("#revert")
        assert "Memory undo committed" in browser.inner_text("#result")
    # What `git memory undo --dream ID -m …` commits: the whole dream taken back.
    message = git("log", "-1", "--format=%B", cwd=repo).stdout
    assert message.startswith("The dream's note was wrong") and f"Memory-Undoes: {merge}" in message
    assert "Memory-Op: undo" in message and not (repo / "notes/third.md").exists()


def test_a_revert_the_rules_refuse_is_shown_and_changes_nothing(mem: Path, browser: Any) -> None:
    write(mem, "system/rules.md", memfile("Ground rules", "Share everything.\n", "read_only: true"))
    commit_all(mem, "a person's change to the rules")
    before = snapshot(mem)
    with review(cwd=mem) as info:
        browser.goto(info["base"] + f"/commit/{before[0]}?token={info['token']}")
        browser.fill("input[name=reason]", "try to take it back")
        browser.click("#revert")
        assert "Refused" in browser.inner_text("h1") and "read_only" in browser.inner_text("#result")
    assert snapshot(mem) == before


# -- hostile memory text -----------------------------------------------------------------------

PLANTED = """\
<script>window.__pwned = "script"</script>
<img src=x onerror="window.__pwned = 'onerror'">
<svg onload="window.__pwned = 'svg'"><circle r=5 /></svg>
[click me](javascript:window.__pwned='link') [data](data:text/html,<script>alert(1)</script>)
<a href="javascript:window.__pwned='raw-link'">raw</a> <style>body { display: none }</style>
<iframe src="javascript:parent.__pwned='iframe'"></iframe>
"""


def test_script_an_agent_planted_never_runs(mem: Path, browser: Any) -> None:
    write(mem, "notes/evil.md", memfile('<script>window.__pwned="desc"</script>', PLANTED))
    commit_all(mem, '<img src=x onerror="window.__pwned=\'subject\'"> planted')
    evil = head(mem)
    with review(cwd=mem) as info:
        dialogs: list[str] = []
        browser.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        browser.goto(info["url"])
        for path in ("/files?path=notes/evil.md", "/history", f"/commit/{evil}", "/search?q=pwned", "/files"):
            browser.goto(info["base"] + path)
            assert browser.evaluate("window.__pwned") is None, path
            assert browser.locator("script, iframe, svg [onload], img[onerror], style").count() == 0, path
            hrefs = browser.eval_on_selector_all("a[href]", "els => els.map(e => e.getAttribute('href'))")
            assert not [h for h in hrefs if re.match(r"\s*(javascript|data|vbscript):", h, re.I)], path
        browser.goto(info["base"] + "/files?path=notes/evil.md")
        shown = browser.inner_text("article")
        assert "<script>" in shown and "javascript:" in shown, "hostile text is shown as text"
        # All links the planted text made are inert, and clicking them runs nothing.
        browser.click("text=click me") if browser.locator("a", has_text="click me").count() else None
        assert browser.evaluate("window.__pwned") is None and dialogs == []
        status, _ = request(info, "GET", "/files?path=notes/evil.md")
        conn = http.client.HTTPConnection("127.0.0.1", info["port"], timeout=30)
        conn.request("GET", "/", headers={"Cookie": f"gitmemfs_review_{info['port']}={info['token']}"})
        csp = conn.getresponse().getheader("content-security-policy") or ""
        conn.close()
    assert status == 200
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "default-src 'none'" in csp


# Invisible to a person in a browser, as on a terminal; and what a browser must still draw.
HIDDEN = {"\u200b": "\\u200b", "\u00ad": "\\u00ad", "\u2060": "\\u2060", "\ufeff": "\\ufeff",
          "\U000e0041": "\\U000e0041", "\u202e": "\\u202e", "\x1b": "\\x1b",
          "\u0430": "\\u0430", "\u00a0": "\\u00a0", "\U0001f525\u200d\U0001f525": "\U0001f525\\u200d\U0001f525"}
DRAWN = "\U0001f469\U0001f3fd\u200d\U0001f4bb \u2764\ufe0f \u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"


def test_invisible_characters_are_shown_in_the_browser(mem: Path, browser: Any) -> None:
    """Files whose path, description, body and commit subject differ from a plain
    one's only by an invisible character (or a bidi override, or ESC): every page shows
    each as its escape, so the two look different, links still open the file, and an
    emoji sequence or a Persian joiner is drawn as written."""
    write(mem, "notes/Sarah.md", memfile("Sarah's phone", "call Sarah now\n"))
    for char in HIDDEN:
        path = f"notes/Sar{char}ah.md".replace("\x1b", "-")  # the gate refuses ESC in a path
        write(mem, path, memfile(f"Sar{char}ah's phone", f"call Sar{char}ah now\n"))
    write(mem, "notes/drawn.md", memfile(f"fine {DRAWN}", f"{DRAWN}\n"))
    commit_all(mem, "plain and Sar\u200bah's " + DRAWN)
    sha = head(mem)
    with review(cwd=mem) as info:
        browser.goto(info["url"])
        browser.goto(info["base"] + "/files")
        listing = browser.inner_text("main")
        for char, escape in HIDDEN.items():
            if char != "\x1b":
                assert f"notes/Sar{escape}ah.md" in listing, (escape, listing)
            assert char not in listing
        browser.click("text=notes/Sar\\u200bah.md")  # the link is the file's own path
        shown = browser.inner_text("main")
        assert "Sar\\u200bah's phone" in shown and "call Sar\\u200bah now" in shown and "\u200b" not in shown
        for path in (f"/commit/{sha}", "/history", "/search?q=phone", "/files?path=notes/drawn.md"):
            browser.goto(info["base"] + path)
            shown = browser.inner_text("main")
            assert not [c for c in HIDDEN if c in shown], (path, shown)
            if path != "/search?q=phone":
                assert DRAWN in shown, (path, shown)
            if path.startswith("/commit"):
                assert all(f"Sar{e}ah's phone" in shown for e in HIDDEN.values()), shown


# -- CSRF, DNS rebinding, the token --------------------------------------------------------------

class Attacker(http.server.BaseHTTPRequestHandler):
    """Another origin on this machine: a page that posts to the review server when opened."""

    target = ""
    expect = ""  # the run's commit: an agent with a shell can read it, so the attacker knows it

    def do_GET(self) -> None:
        page = (f'<form id="f" method="post" action="{self.target}"><input name="form_token" value="guess">'
                f'<input name="expect" value="{self.expect}"></form>'
                '<script>document.getElementById("f").submit()</script>').encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)

    def log_message(self, *args: Any) -> None:
        pass


@landlock
def test_cross_site_posts_are_refused(repo: Path, browser: Any) -> None:
    ident = pending_dream(repo, "csrf")
    before = snapshot(repo)
    with review(cwd=repo) as info:
        accept = f"/pending/dream/{ident}/accept"
        browser.goto(info["url"])  # the person is logged in: the browser holds the cookie
        # A page on another port of 127.0.0.1 (same site, other origin) submits the form.
        Attacker.target = info["base"] + accept
        Attacker.expect = str(kept(repo, ident))
        evil = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Attacker)
        threading.Thread(target=evil.serve_forever, daemon=True).start()
        try:
            browser.goto(f"http://127.0.0.1:{evil.server_address[1]}/")
            browser.wait_for_load_state()
            assert "must come from the review page" in browser.inner_text("body")
        finally:
            evil.shutdown()
            evil.server_close()
        browser.goto(info["base"] + "/pending")
        token = form_token(browser)
        origin = {"Origin": info["base"]}
        shown = {"expect": Attacker.expect}
        assert request(info, "POST", accept, body=shown, headers=origin)[0] == 403  # no form token
        assert request(info, "POST", accept, body={**shown, "form_token": "x" * 64}, headers=origin)[0] == 403
        assert request(info, "POST", accept, body={**shown, "form_token": token})[0] == 403  # no Origin
        assert request(info, "POST", accept, body={**shown, "form_token": token},
                       headers={"Origin": "http://evil.example"})[0] == 403
        assert request(info, "POST", accept, body={**shown, "form_token": token}, headers=origin,
                       cookie=False)[0] == 401
        assert snapshot(repo) == before and kept(repo, ident)
        # The same request from the page itself goes through (with the run's commit it showed).
        status, text = request(info, "POST", accept, body={**shown, "form_token": token}, headers=origin)
    assert status == 200 and "Dreamed and merged" in text, text
    assert (repo / "notes/csrf.md").exists()


def test_a_rebound_host_is_refused(mem: Path) -> None:
    with review(cwd=mem) as info:
        rebound = {"Host": f"evil.example:{info['port']}"}
        status, text = request(info, "GET", "/", headers=rebound)
        assert status == 403 and "DNS rebinding" in text
        status, _ = request(info, "GET", f"/?token={info['token']}", headers=rebound, cookie=False)
        assert status == 403
        commit = head(mem)
        status, _ = request(info, "POST", f"/commit/{commit}/revert", headers={**rebound,
                            "Origin": f"http://evil.example:{info['port']}"}, body={"reason": "x"})
        assert status == 403
        assert request(info, "GET", "/", headers={"Host": f"localhost:{info['port']}"})[0] == 200
    assert head(mem) == commit


def test_the_token_logs_in_once_and_stays_out_of_reach(mem: Path, browser: Any) -> None:
    with review(cwd=mem) as info:
        assert info["login_file"] is None, "--no-browser writes no file with the token"
        assert request(info, "GET", "/", cookie=False)[0] == 401
        assert request(info, "GET", "/?token=" + "x" * 43, cookie=False)[0] == 401
        browser.goto(info["url"])
        assert browser.url == info["base"] + "/"
        assert browser.evaluate("document.cookie") == "", "HttpOnly: no script reads the session"
        cookie = next(c for c in browser.context.cookies() if c["name"] == f"gitmemfs_review_{info['port']}")
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
        proc = info["proc"]
        cmdline = Path(f"/proc/{proc.pid}/cmdline").read_bytes()
        environ = Path(f"/proc/{proc.pid}/environ").read_bytes()
        assert info["token"].encode() not in cmdline and info["token"].encode() not in environ


FAKE_BROWSER = """\
#!/bin/sh
# What a browser would see: its argv, and the file it was asked to open (mode, text).
file=${1#file://}
stat -c %a "$file" > "$OUT/mode.tmp"; stat -c %a "$(dirname "$file")" >> "$OUT/mode.tmp"
cp "$file" "$OUT/page.html"; printf '%s\\n' "$@" > "$OUT/argv.tmp"
mv "$OUT/mode.tmp" "$OUT/mode"; mv "$OUT/argv.tmp" "$OUT/argv"
"""


def test_the_browser_is_opened_on_a_private_file_never_on_the_token(mem: Path, tmp_path: Path) -> None:
    fake = write(tmp_path, "browser.sh", FAKE_BROWSER)
    fake.chmod(0o755)
    out = tmp_path / "seen"
    out.mkdir()
    with review(cwd=mem, browse=True, env={"BROWSER": f"{fake} %s", "OUT": str(out)}) as info:
        login = Path(info["login_file"])
        for _ in range(600):  # the browser runs beside the server; wait for what it saw
            if (out / "argv").exists() and (out / "mode").exists():
                break
            threading.Event().wait(0.1)
        argv = (out / "argv").read_text()
        assert argv.strip() == f"file://{login}" and info["token"] not in argv
        assert (out / "mode").read_text().split() == ["600", "700"]
        assert info["url"] in (out / "page.html").read_text()
        assert login.exists()
        assert request(info, "GET", f"/?token={info['token']}", cookie=False)[0] == 303
        assert not login.exists(), "the file goes as soon as a browser has logged in"


def test_beyond_loopback_only_with_a_token(mem: Path) -> None:
    out = memory("review", "--no-browser", "--host", "0.0.0.0", cwd=mem)
    assert out.returncode == 2 and "needs a token" in out.stderr and "GIT_MEMORY_REVIEW_TOKEN" in out.stderr


# -- the views ---------------------------------------------------------------------------------

def test_every_view_of_the_readmes_example_memory(tmp_path: Path, browser: Any) -> None:
    """The README's first memory, made by its own commands, on every view of the page."""
    mem = tmp_path / "agent-memory"
    for args in (("init", "-q", str(mem)),
                 ("create", "system/contacts.md", "Sarah: +1-555-0100", "-d", "People I know", "-m",
                  "Remember Sarah's number"),
                 ("str_replace", "system/contacts.md", "0100", "0111", "-m", "Sarah changed numbers")):
        out = memory(*args, cwd=mem if args[0] != "init" else tmp_path)
        assert out.returncode == 0, out.stderr
    changed = head(mem)
    with review(cwd=mem) as info:
        browser.goto(info["url"])
        glance = browser.inner_text("main")
        for shown in ("tokens", "maxCoreMemoryCharacters", "0 item(s)", "No dream has run", "no upstream",
                      "work tree clean"):
            assert shown in glance, shown
        assert "system/contacts.md" in browser.locator("svg.chart").text_content(), "a bar for the pinned file"
        browser.click("nav >> text=Files")
        pinned = browser.inner_text("main").split("External")[0]
        assert "system/contacts.md" in pinned
        browser.click("text=system/contacts.md")
        assert "description: People I know" in browser.inner_text("pre.frontmatter")
        assert "Sarah: +1-555-0111" in browser.inner_text("article")
        assert {"Sarah changed numbers", "Remember Sarah's number"} <= set(
            browser.locator(".timeline li").all_inner_texts()[i].split(" — ")[-1] for i in range(2))
        browser.click("nav >> text=History")
        first = browser.locator(".timeline li").first.inner_text()
        assert changed[:7] in first and "str_replace" in first and "system/contacts.md" in first
        assert "Sarah changed numbers" in first
        browser.click(f".timeline a >> text={changed[:7]}")
        assert browser.locator("del").first.inner_text() == "0100"
        assert browser.locator("ins").first.inner_text() == "0111"
        browser.goto(info["base"] + "/history?op=create")
        assert "Remember Sarah's number" in browser.inner_text("main")
        assert "Sarah changed numbers" not in browser.inner_text("main")
        browser.goto(info["base"] + "/history?path=system/contacts.md&author=human")
        assert "Sarah changed numbers" in browser.inner_text("main")
        browser.click("nav >> text=Pending")
        assert "Nothing is waiting" in browser.inner_text("main")
        browser.goto(info["base"] + "/search?q=Sarah")
        assert "system/contacts.md" in browser.inner_text("main")
        browser.click("nav >> text=Plots")
        assert browser.locator("svg.chart").count() == 2 and "Edits per week" in browser.inner_text("main")
        weekly = browser.locator("svg.chart").nth(1).text_content() or ""
        # init and the two edits, all by the person here: a column per week they fall in.
        stamps = git("log", "--format=%ct", cwd=mem).stdout.split()
        weeks = [time.strftime("%G-W%V", time.gmtime(int(t))) for t in stamps]
        assert all(w in weekly for w in weeks) and f"(max {max(map(weeks.count, weeks))})" in weekly, weekly


def test_every_view_of_a_memory_and_of_a_root(tmp_path: Path, browser: Any) -> None:
    root = tmp_path / "agents"
    for agent in ("ada", "bob"):
        assert memory("init", str(root / agent), cwd=tmp_path).returncode == 0
        write(root / agent, "system/project.md", memfile(f"{agent}'s project", f"{agent} works on **memfs**.\n"))
        commit_all(root / agent, f"{agent} notes the project")
    with review("--root", str(root), cwd=tmp_path) as info:
        browser.goto(info["url"])
        assert {"ada", "bob"} <= set(browser.inner_text("main").split())
        browser.click("text=bob")
        assert "At a glance" in browser.inner_text("h1") and "system/project.md" in browser.inner_text("main")
        for name, expect in (("Files", "Pinned"), ("History", "bob notes the project"), ("Pending", "Nothing"),
                             ("Plots", "Edits per week")):
            browser.click(f"nav >> text={name}")
            assert expect in browser.inner_text("main"), name
        browser.goto(info["base"] + "/a/bob/files?path=system/project.md")
        assert browser.locator("article strong").inner_text() == "memfs"
        browser.goto(info["base"] + "/a/bob/search?q=memfs")
        assert "system/project.md" in browser.inner_text("main")
        browser.goto(info["base"] + "/a/bob/history?author=human")
        assert "bob notes the project" in browser.inner_text("main")
        browser.goto(info["base"] + "/a/bob/history?author=dream")
        assert "No commits match" in browser.inner_text("main")
        assert request(info, "GET", "/a/..%2Fada/")[0] in (400, 404)


@landlock
def test_a_stale_item_is_checked_against_todays_main_and_its_conflict_shown(mem: Path) -> None:
    cmd = ('git memory str_replace system/contacts.md "Sarah: +1-555-0100" "Sarah: +1-555-0177" '
           '-m "Sarah has a new number"')
    ident = dream_json(mem, "--agent", cmd, "--merge", "explicit", code=0)["id"]
    assert memory("str_replace", "system/contacts.md", "Sarah: +1-555-0100", "Sarah: moved abroad",
                  "-m", "Sarah moved", cwd=mem).returncode == 0
    with review(cwd=mem) as info:
        status, text = request(info, "GET", "/pending")
    assert status == 200 and f"item-{ident}" in text
    assert "conflicts with today&#39;s main" in text and "system/contacts.md" in text.split("conflicting paths")[1]


@landlock
def test_dream_drop_note_is_the_cli_side_of_reject(repo: Path) -> None:
    ident = pending_dream(repo, "noted")
    out = dream(repo, "drop", ident, "--note", "Duplicate of an older note")
    assert out.returncode == 0 and "keeps your note" in out.stdout
    shown = json.loads(dream(repo, "show", ident, "--json").stdout)
    assert shown["status"] == "dropped" and shown["note"] == "Duplicate of an older note"
    assert kept(repo, ident) is None and shown["dropped"]
    assert json.loads(dream(repo, "list", "--json").stdout)["runs"] == [], "a dropped run holds no work"


def test_history_pages_filters_and_word_level_diffs(repo: Path) -> None:
    history = [({"reference/log.md": memfile("A log", f"The backup runs at {n:02d}:00 daily.\n")},
                f"backup at {n:02d}:00\n\nMemory-Op: str_replace\nMemory-Path: reference/log.md")
               for n in range(120)]
    fast_import(repo, history)
    write(repo, "system/rules.md", memfile("Ground rules", "Never share secrets.\n", "read_only: true"))
    commit_all(repo, "a person adds the rules")
    with review(cwd=repo) as info:
        first = request(info, "GET", "/history")[1]
        assert first.count('<a href="/commit/') == 50 and "page=1" in first and "a person adds the rules" in first
        third = request(info, "GET", "/history?page=2")[1]  # 122 commits: init, 120, the rules
        assert third.count('<a href="/commit/') == 22 and "page=3" not in third and "page=1" in third
        last = request(info, "GET", "/history?page=2&op=str_replace")[1]
        assert last.count('<a href="/commit/') == 20 and "page=3" not in last and "backup at 00:00" in last
        assert "a person adds the rules" not in last
        changed = head(repo) + "~1"
        sha = git("rev-parse", changed, cwd=repo).stdout.strip()
        diff = request(info, "GET", f"/commit/{sha}")[1]
        assert "The backup runs at <del>118</del>:00 daily." in diff
        assert "The backup runs at <ins>119</ins>:00 daily." in diff
        rules = request(info, "GET", "/files?path=system/rules.md")[1]
        assert 'class="badge ro">read_only' in rules and "a person adds the rules" in rules
