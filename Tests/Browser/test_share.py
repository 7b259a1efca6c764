"""Share cards and the Share button, in a real browser.

The demo user (`--demo`) is charted offline from its generated history, with
generated covers, so its cards need no Last.fm at all.
"""

from __future__ import annotations

import struct
import urllib.error
import urllib.request
from pathlib import Path

from playwright.sync_api import expect

SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"


def http_get(url: str, timeout: float = 30) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()

# Chromium on Linux has no Web Share API; make sure of it, and take the
# clipboard away too, so the button must work as the plain link it is.
NO_SHARING = """
Object.defineProperty(Navigator.prototype, 'share', { value: undefined, configurable: true });
Object.defineProperty(Navigator.prototype, 'clipboard', { value: undefined, configurable: true });
"""


def png_size(body: bytes) -> tuple[int, int]:
    assert body[:8] == b"\x89PNG\r\n\x1a\n", body[:16]
    assert body[12:16] == b"IHDR"
    return struct.unpack(">II", body[16:24])


def test_share_button_links_to_the_permalink_and_the_card_is_drawn(pages, stack, fake):
    app = stack.app(fake, "--demo")
    page = pages.new_page()
    page.add_init_script(NO_SHARING)
    page.goto(app("/u/demo"))
    share = page.locator("a.share-link")
    expect(share).to_have_count(1)
    expect(share).to_have_text("Share")
    permalink = share.get_attribute("href")
    assert permalink.startswith(app.url + "/u/demo/week/"), permalink

    # The card the meta tags name: absolute, under the permalink, a 1200 × 630 PNG.
    image = page.locator('meta[property="og:image"]').get_attribute("content")
    assert image == permalink + "/card.png", image
    assert page.locator('meta[name="twitter:image"]').get_attribute("content") == image
    status, body = http_get(image, timeout=10)
    assert status == 200
    assert png_size(body) == (1200, 630)
    (SCREENSHOTS / "test_share--card.png").write_bytes(body)

    # Without Web Share or a clipboard, the button is simply the link.
    share.click()
    expect(page).to_have_url(permalink)
    expect(page.locator("li.row").first).to_be_visible()
    pages.shot(page, "permalink")

    # The card itself, as a browser shows it on a desktop.
    card = pages.new_page(viewport={"width": 1280, "height": 700})
    card.goto(image)
    pages.shot(card, "card-in-browser")


def test_share_button_without_javascript_is_a_plain_link(pages, stack, fake):
    app = stack.app(fake, "--demo")
    page = pages.new_page(java_script_enabled=False)
    # Without script Chromium loads every cover at once (no lazy loading),
    # and a debug build draws the demo's covers slowly: the page is there
    # long before "load".
    page.goto(app("/u/demo?years_ago=2"), wait_until="domcontentloaded")
    share = page.locator("a.share-link")
    expect(share).to_have_count(1)
    permalink = share.get_attribute("href")
    # The permalink is the dated week, which "2 years ago" will not stay.
    assert permalink.startswith(app.url + "/u/demo/week/"), permalink
    share.click()
    expect(page).to_have_url(permalink)
    expect(page.locator(".years-ago")).to_have_text("2 years ago")
    pages.shot(page)


def test_share_button_copies_the_permalink_without_web_share(pages, stack, fake):
    app = stack.app(fake, "--demo")
    page = pages.new_page(permissions=["clipboard-read", "clipboard-write"])
    page.add_init_script("Object.defineProperty(Navigator.prototype, 'share', { value: undefined, configurable: true });")
    page.goto(app("/u/demo"))
    share = page.locator("a.share-link")
    permalink = share.get_attribute("href")
    share.click()
    expect(share).to_have_text("Link copied")
    # The page stays where it was; the permalink is on the clipboard.
    expect(page).to_have_url(app("/u/demo"))
    assert page.evaluate("navigator.clipboard.readText()") == permalink
    pages.shot(page)
