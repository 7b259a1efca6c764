"""Every kind of page, scanned by axe-core (issue 42) as a visitor's browser
shows it: at a desktop's and a phone's width, in the light and the dark
colour scheme. Any serious or critical violation fails the test, and the
failure lists every one found (page, width, scheme, rule, element, why).

axe-core comes bundled in the `axe-playwright-python` package from PyPI
(scripts/python-tests installs it, pinned). Moderate and minor findings
are printed, not failed on: they are judgement calls (a framed widget's
missing <h1> was one, before the widget got its heading).

One server per module, as starting one per page would cost more than the
scans: the demo household (with a key, so an unknown name is asked of the
fake Last.fm) for the pages anyone sees, and a sign-in server for Settings
signed in and the visibility states. A page is loaded once per width; the
colour scheme is switched on the loaded page with `emulate_media`, which
re-applies the stylesheets' media queries without a reload.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page, expect

from conftest import FIXED_NOW, SCREENSHOTS, Stack
from test_kinds import DESKTOP, PHONE, covers_loaded
from test_signin import sign_in

AXE = Axe()
BLOCKING = {"serious", "critical"}
SCHEMES = ["light", "dark"]
WIDTHS = {"desktop": dict(viewport=DESKTOP), "phone": PHONE}
PEOPLE = ["demo", "theo", "mara", "felix", "june"]


class Scans:
    """What axe found over a test's pages: the blocking violations, one line
    per element, and the lesser ones, to print."""

    def __init__(self) -> None:
        self.blocking: list[str] = []
        self.lesser: list[str] = []
        self.count = 0

    def run(self, page: Page, label: str) -> None:
        """Scans `page` in each colour scheme."""
        for scheme in SCHEMES:
            page.emulate_media(color_scheme=scheme)
            results = AXE.run(page)
            self.count += 1
            for violation in results.response["violations"]:
                where = f"{label} [{scheme}] {violation['id']} ({violation['impact']})"
                if violation["impact"] in BLOCKING:
                    for node in violation["nodes"]:
                        summary = " ".join(node.get("failureSummary", "").split())
                        self.blocking.append(f"{where} at {', '.join(map(str, node['target']))}: {summary}")
                else:
                    self.lesser.append(f"{where}: {len(violation['nodes'])} element(s)")
        page.emulate_media(color_scheme="light")

    def check(self) -> None:
        for line in self.lesser:
            print("axe (not failed on):", line)
        print(f"axe: {self.count} scans, {len(self.blocking)} serious or critical findings")
        assert not self.blocking, f"{len(self.blocking)} serious or critical axe findings:\n" + "\n".join(self.blocking)


@pytest.fixture(scope="module")
def demo_app():
    """`vinylogue serve --demo` (with the fake Last.fm behind it), for the whole module."""
    stack = Stack(Path(tempfile.mkdtemp(prefix="a11y-demo-")), FIXED_NOW)
    try:
        yield stack.app(stack.fake(), "--demo")
    finally:
        stack.stop()


@pytest.fixture(scope="module")
def signin_server():
    """A server where people sign in with Last.fm (on the fake's approval page), for the whole module."""
    stack = Stack(Path(tempfile.mkdtemp(prefix="a11y-signin-")), FIXED_NOW)
    try:
        yield stack.app(stack.fake(), sign_in=True)
    finally:
        stack.stop()


def album_links(page: Page, app, person: str) -> list[str]:
    """The album pages linked from `person`'s chart of this week a year ago."""
    page.goto(app(f"/u/{person}"))
    hrefs = page.locator("li.row a.row-link").evaluate_all("links => links.map(a => a.getAttribute('href'))")
    albums = [h for h in hrefs if "/album/" in h]
    assert albums, f"{person}'s chart links to no album page"
    return albums


def open_coloured_album(page: Page, url: str) -> None:
    """Opens an album page in its cover's colours. The server waits 1.5 s for
    a palette it has not computed yet and otherwise sends the house colours
    while it finishes; the page's own cover loading is that work's end, so
    one reload after it gets the coloured page."""
    page.goto(url)
    theme = page.locator("link[rel=stylesheet][href^='/theme/']")
    if theme.count() == 0:
        covers_loaded(page)
        page.reload()
    expect(theme).to_have_count(1)
    covers_loaded(page)


def test_every_page_anyone_sees_has_no_serious_violations(pages, demo_app):
    app = demo_app
    scans = Scans()
    for width, options in WIDTHS.items():
        page = pages.new_page(**options)
        for path in ["/", "/u/demo", "/u/theo?years_ago=3", "/u/june?kind=artist", "/u/mara/history",
                     "/everyone", "/u/felix/rediscover", "/u/demo/year/2024", "/u/demo/playlist/2", "/settings"]:
            page.goto(app(path))
            covers_loaded(page)
            scans.run(page, f"{path} ({width})")

        unknown = page.goto(app("/u/nosuchuser"))
        assert unknown.status == 404
        expect(page.locator(".error-state")).to_contain_text("not found")
        scans.run(page, f"an unknown name ({width})")

        # The widget is made to be framed on another site; it is scanned on its own.
        page.goto(app("/u/demo/widget"))
        scans.run(page, f"/u/demo/widget ({width})")
        widget = page
    scans.check()
    # Framed, it still says whose it is: its heading, and its landmark's name.
    expect(widget.get_by_role("heading", level=1)).to_have_text("demo")
    expect(widget.get_by_role("main", name=re.compile("demo"))).to_have_count(1)


def test_every_demo_album_page_has_no_serious_violations(pages, demo_app):
    """Every album on each demo person's chart of a year ago, at a desktop's
    width; the first of each at a phone's. Screenshots of one album page in
    each scheme are left in artifacts/screenshots/ to look at."""
    app = demo_app
    scans = Scans()
    desktop = pages.new_page(**WIDTHS["desktop"])
    phone = pages.new_page(**WIDTHS["phone"])
    for person in PEOPLE:
        albums = album_links(desktop, app, person)
        for index, href in enumerate(albums):
            open_coloured_album(desktop, app(href))
            scans.run(desktop, f"{href} (desktop)")
            if person == "theo" and index < 2:
                for scheme in SCHEMES:
                    desktop.emulate_media(color_scheme=scheme)
                    desktop.screenshot(path=str(SCREENSHOTS / f"{pages.name}--album-{index}-{scheme}.png"))
                desktop.emulate_media(color_scheme="light")
        open_coloured_album(phone, app(albums[0]))
        scans.run(phone, f"{albums[0]} (phone)")
    print(f"album pages scanned: {scans.count // 2}")
    scans.check()


def test_signed_in_pages_in_every_visibility_state(pages, signin_server):
    """Settings signed in, and ybsc's chart as she and as a stranger see it,
    after each choice of who sees her listening."""
    app = signin_server
    scans = Scans()
    owner = pages.new_page(**WIDTHS["desktop"])
    sign_in(owner, app, "ybsc")
    stranger = pages.new_page(**WIDTHS["phone"])
    chart = "/u/ybsc/week/2020-07-08"
    for choice in ["Friends", "Only me", "Everyone"]:
        owner.goto(app("/settings"))
        section = owner.locator("#visibility")
        section.get_by_label(choice).check()
        section.get_by_role("button", name="Save who sees it").click()
        expect(owner.locator("#visibility").get_by_role("status")).to_contain_text("Saved")
        scans.run(owner, f"/settings signed in, {choice} saved (desktop)")

        owner.goto(app(chart))
        expect(owner.locator("h1").first).to_be_visible()
        scans.run(owner, f"{chart} as ybsc, {choice} (desktop)")

        answer = stranger.goto(app(chart))
        assert answer.status == (200 if choice == "Everyone" else 404), (choice, answer.status)
        scans.run(stranger, f"{chart} as a stranger, {choice} (phone)")

    settings = pages.new_page(**WIDTHS["phone"])
    sign_in(settings, app, "RJ")
    settings.goto(app("/settings"))
    scans.run(settings, "/settings signed in (phone)")
    scans.check()
