"""Fixtures for Vinylogue's browser tests.

Every test gets its own fake Last.fm (`fake-lastfm`) and its own web app
(`vinylogue serve`) on free ports, with a fresh `--data-dir`, so tests never
share users, settings, cached answers or injected faults. Both start in well
under a second (`ServerProcess` in Tests/Python/launcher.py, shared with
the protocol tests, starts them). Processes are always stopped at the end of
the test, also when it fails.

Both run on one fixed clock, not the machine's: they start at the instant
of the `now` fixture (`VINYLOGUE_TEST_NOW` for serve, `--starting-at` for
the fake) and run on from there, so "N years ago" is the same weeks on
every day the suite runs. By default that is `FIXED_NOW`, a Tuesday at
12:12 UTC whose "2 years ago" falls in a week's first hours (the hour a
wrong year label was once found); a test picks another instant with
`@pytest.mark.parametrize("now", [...], indirect=True)`. The server runs in
UTC. No page script reads the date (vinylogue.js), so the browser's own
clock is left alone.

The browser is Debian's Chromium driven by Playwright (Playwright's own
browser download does not work offline). Every page opened through these
fixtures fails the test if it shows a JavaScript dialog (alert, confirm,
prompt) or throws an uncaught JavaScript error, and leaves a full-page
screenshot in artifacts/screenshots/<test-name>.png.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "Python"))
from launcher import ROOT, ServerProcess, binary  # noqa: E402  (Tests/Python, shared with the protocol tests)

SCREENSHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
API_KEY = "test-key"
API_SECRET = "test-secret"

# Ms Playwright waits for a selector or a navigation before failing.
TIMEOUT_MS = 10_000

# The instant every test's servers start their clocks at, unless the test
# asks for another (the `now` fixture): Tue 24 Nov 2026, 12:12 UTC. Two
# years before, Sun 24 Nov 2024 12:12, is 12 minutes into a Last.fm week.
FIXED_NOW = datetime(2026, 11, 24, 12, 12, tzinfo=timezone.utc)


def iso(instant: datetime) -> str:
    """`instant` as ISO 8601 in UTC with a Z, as VINYLOGUE_TEST_NOW takes it."""
    return instant.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# --------------------------------------------------------------------------
# Servers (started and stopped by Tests/Python/launcher.py)


def http_get(url: str, timeout: float = 2) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


@dataclass
class FakeLastFM:
    server: ServerProcess

    @property
    def api_url(self) -> str:
        return f"{self.server.url}/2.0/"

    def inject(self, fault: dict, method: str | None = None, user: str | None = None, remaining: int | None = None) -> None:
        """Injects a fault, e.g. `{"apiError": {"code": 11, "status": 503}}` (Swift's Codable enum encoding)."""
        body = json.dumps({"fault": fault, "method": method, "user": user, "remaining": remaining}).encode()
        request = urllib.request.Request(f"{self.server.url}/_fake/faults", data=body, method="POST",
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=5) as r:
            assert r.status == 204, f"the fake refused the fault: {r.status}"

    def clear_faults(self) -> None:
        request = urllib.request.Request(f"{self.server.url}/_fake/faults", method="DELETE")
        with urllib.request.urlopen(request, timeout=5) as r:
            assert r.status == 204

    def requests(self) -> list[dict]:
        status, body = http_get(f"{self.server.url}/_fake/requests", timeout=5)
        assert status == 200
        return json.loads(body)


@dataclass
class App:
    server: ServerProcess
    fake: FakeLastFM
    data_dir: Path

    @property
    def url(self) -> str:
        return self.server.url

    def __call__(self, path: str = "/") -> str:
        """The absolute URL of `path`."""
        return self.server.url + path


@dataclass
class Stack:
    """Everything a test started, stopped in reverse order at its end. Every
    server it starts begins its clock at `now`."""
    workdir: Path
    now: datetime = FIXED_NOW
    servers: list[ServerProcess] = field(default_factory=list)

    def fake(self) -> FakeLastFM:
        server = ServerProcess(
            [binary("fake-lastfm"), "--port", "0", "--host", "127.0.0.1", "--starting-at", str(int(self.now.timestamp()))],
            "fake Last.fm listening at ", self.workdir,
        )
        self.servers.append(server)
        return FakeLastFM(server)

    def app(self, fake: FakeLastFM, *extra_args: str, data_dir: Path | None = None, sign_in: bool = False,
            api_key: bool = True, environment: dict[str, str] | None = None) -> App:
        """Starts `vinylogue serve` with a fresh data directory, or with `data_dir` (to restart on the same data).

        With `sign_in`, the key's shared secret is configured, so people sign
        in with Last.fm (on the fake's approval page) and each has a list.
        Without `api_key`, no Last.fm API key is set, as on a fresh clone
        (the server still points at the fake, whose log shows any request).
        `environment` adds to (or overrides) the server's environment: a mail server, say."""
        data_dir = data_dir or Path(tempfile.mkdtemp(prefix="data-", dir=self.workdir))
        env = dict(os.environ)
        env.update({
            "LASTFM_API_URL": fake.api_url,
            "LASTFM_IMAGE_URL": fake.api_url.replace("/2.0/", "/i/u/"),
            "LASTFM_API_KEY": API_KEY,
            "LASTFM_REQUESTS_PER_SECOND": "50",
            "VINYLOGUE_TEST_NOW": iso(self.now),
            "TZ": "UTC",
        })
        env.pop("LASTFM_API_SECRET", None)
        env.update(environment or {})
        if not api_key:
            env.pop("LASTFM_API_KEY")
        if sign_in:
            env["LASTFM_API_SECRET"] = API_SECRET
            env["LASTFM_AUTH_URL"] = fake.api_url.replace("/2.0/", "/api/auth/")
        server = ServerProcess(
            [binary("vinylogue"), "serve", "--host", "127.0.0.1", "--port", "0", "--data-dir", data_dir, *extra_args],
            "Vinylogue is serving at ", self.workdir, env=env,
        )
        self.servers.append(server)
        return App(server, fake, data_dir)

    def restart(self, app: App) -> App:
        """Stops `app` and starts a new server on the same data directory (nothing kept in memory survives)."""
        app.server.stop()
        return self.app(app.fake, data_dir=app.data_dir)

    def stop(self) -> None:
        for server in reversed(self.servers):
            server.stop()


@pytest.fixture
def now(request) -> datetime:
    """The instant the test's servers start their clocks at: `FIXED_NOW`,
    or the test's own through `parametrize("now", [...], indirect=True)`."""
    instant = getattr(request, "param", FIXED_NOW)
    if isinstance(instant, str):
        instant = datetime.fromisoformat(instant.replace("Z", "+00:00"))
    assert instant.tzinfo is not None, f"{instant} has no zone"
    return instant


@pytest.fixture
def stack(tmp_path, now):
    """Starts servers on demand for one test, on the clock of `now`, and always stops them."""
    s = Stack(tmp_path, now)
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture
def fake(stack) -> FakeLastFM:
    return stack.fake()


@pytest.fixture
def app(stack, fake) -> App:
    """A fresh `vinylogue serve` (empty user list, default settings) against a fresh fake Last.fm."""
    return stack.app(fake)


@pytest.fixture
def signin_app(stack, fake) -> App:
    """A fresh `vinylogue serve` where people sign in with Last.fm."""
    return stack.app(fake, sign_in=True)


# --------------------------------------------------------------------------
# Browser


@pytest.fixture(scope="session", autouse=True)
def _clean_screenshots():
    if SCREENSHOTS.exists():
        for png in SCREENSHOTS.glob("*.png"):
            png.unlink()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)


@pytest.fixture(scope="session")
def browser() -> Browser:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install chromium (scripts/browser-tests does it)", pytrace=False)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"], headless=True)
        try:
            yield b
        finally:
            b.close()


def _test_name(request) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", request.node.name).strip("-")


class Pages:
    """Opens browser contexts and pages for one test, watching each page for
    dialogs and uncaught errors, and screenshots the last page at the end."""

    def __init__(self, browser: Browser, name: str):
        self.browser = browser
        self.name = name
        self.contexts: list[BrowserContext] = []
        self.pages: list[Page] = []
        self.dialogs: list[str] = []
        self.page_errors: list[str] = []
        self.visited: list[str] = []

    def new_page(self, **context_options) -> Page:
        options = {"viewport": {"width": 1024, "height": 800}, **context_options}
        context = self.browser.new_context(**options)
        context.set_default_timeout(TIMEOUT_MS)
        context.set_default_navigation_timeout(TIMEOUT_MS)
        self.contexts.append(context)
        context.on("page", self._watch)
        page = context.new_page()
        return page

    def _watch(self, page: Page) -> None:
        self.pages.append(page)

        def on_dialog(dialog):
            self.dialogs.append(f"{dialog.type}: {dialog.message!r} on {page.url}")
            dialog.dismiss()

        page.on("dialog", on_dialog)
        page.on("pageerror", lambda error: self.page_errors.append(f"{error} on {page.url}"))
        page.on("framenavigated", lambda frame: self.visited.append(frame.url) if frame == page.main_frame else None)

    def shot(self, page: Page | None = None, suffix: str | None = None) -> Path:
        page = page or self.pages[-1]
        path = SCREENSHOTS / (f"{self.name}--{suffix}.png" if suffix else f"{self.name}.png")
        page.screenshot(path=str(path), full_page=True)
        return path

    def close(self) -> None:
        for context in self.contexts:
            try:
                context.close()
            except Exception:
                pass


@pytest.fixture
def pages(browser, request):
    p = Pages(browser, _test_name(request))
    try:
        yield p
        # The suite-wide XSS guard: no page visited may ever open a dialog.
        assert not p.dialogs, f"a JavaScript dialog fired: {p.dialogs}"
        assert not p.page_errors, f"uncaught JavaScript errors: {p.page_errors}"
    finally:
        # The last state of the last page, also when the test failed.
        if p.pages and not p.pages[-1].is_closed():
            own = SCREENSHOTS / f"{p.name}.png"
            try:
                if not own.exists() or getattr(request.node, "rep_call_failed", True):
                    p.shot(p.pages[-1])
            except Exception:
                pass
        p.close()


@pytest.fixture
def page(pages) -> Page:
    """A desktop-sized page (1024×800, light colour scheme) with JavaScript on."""
    return pages.new_page()


@pytest.fixture
def shot(pages):
    """shot(page) saves artifacts/screenshots/<test-name>.png; shot(page, "step") saves <test-name>--step.png."""
    return pages.shot


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        item.rep_call_failed = report.failed
    elif not hasattr(item, "rep_call_failed"):
        item.rep_call_failed = report.failed
