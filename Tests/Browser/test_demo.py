"""The built-in demo as a newcomer meets it: `vinylogue serve --demo` on a
fresh data directory with no Last.fm API key, walked by links as a person
would: the users page, a friend's chart, every year, an album page, the
everyone page, then back the way they came.

Nothing on the way may fail, ask for a key, or ask Last.fm anything (the
server still points at the fake Last.fm, whose request log would show it).
"""

from __future__ import annotations

import re

from playwright.sync_api import Page, Response, expect

from test_kinds import DESKTOP, PHONE, covers_loaded, fits_a_phone

FRIENDS = ["theo", "mara", "felix", "june"]


class Answers:
    """Every answer the browser got (pages, styles, scripts, covers), so a
    walk can check that none failed."""

    def __init__(self, page: Page):
        self.failed: list[str] = []
        page.on("response", self._seen)

    def _seen(self, response: Response) -> None:
        if response.status >= 400:
            self.failed.append(f"{response.status} {response.url}")


def nothing_wrong(page: Page) -> None:
    """The page shows no failure and asks for no key."""
    expect(page.locator("[role=alert], .error-state, .person-state.error")).to_have_count(0)
    text = page.locator("main").inner_text()
    assert "API key" not in text, f"{page.url} asks for a key: {text[:400]}"
    assert "Last.fm is" not in text, f"{page.url} talks of Last.fm failing: {text[:400]}"


def test_a_newcomer_walks_the_demo_and_back(pages, stack, fake):
    app = stack.app(fake, "--demo", api_key=False)
    page = pages.new_page(viewport=DESKTOP)
    answers = Answers(page)

    # The users page: the demo user (me) and four friends.
    page.goto(app("/"))
    expect(page.locator("li.user .user-name")).to_have_text(["demo", *FRIENDS])
    expect(page.locator("li.user[data-user=demo] .badge")).to_have_text("me")
    expect(page.locator("p.notice[role=note]")).to_contain_text("The demo’s people need no key")
    expect(page.locator("[role=alert]")).to_have_count(0)

    # A friend's chart: theo, who started in 2019.
    page.locator("li.user[data-user=theo] a.user-link").click()
    expect(page).to_have_url(app("/u/theo"))
    expect(page.locator(".years-ago")).to_have_text("1 year ago")
    expect(page.locator("li.row").first).to_be_visible()
    covers_loaded(page)
    nothing_wrong(page)

    # Every year: one section for each year since 2019 (the clock is November 2026).
    page.get_by_role("link", name="every year").click()
    expect(page).to_have_url(app("/u/theo/history"))
    expect(page.locator(".history-year h2 a")).to_have_text([f"{n} year{'s' if n > 1 else ''} ago" for n in range(1, 8)])
    covers_loaded(page)
    nothing_wrong(page)

    # An album page, from the oldest year's top album: coloured by its art, with its life.
    page.locator(".history-year").last.locator("a.row-link").first.click()
    expect(page).to_have_url(re.compile(r"/u/theo/album/"))
    expect(page.locator("h1.album-name")).to_be_visible()
    expect(page.locator("body.album-theme")).to_have_count(1)
    expect(page.locator("link[rel=stylesheet][href^='/theme/']")).to_have_count(1)
    expect(page.locator("#life-heading")).to_have_text("In theo’s listening")
    covers_loaded(page)
    nothing_wrong(page)
    album_url = page.url

    # Everyone: five cards, each with four covers and a #1.
    page.locator("header.bar").get_by_role("link", name="Everyone").click()
    expect(page).to_have_url(app("/everyone"))
    cards = page.locator("li.person")
    expect(cards.locator("h2")).to_have_text(["demo", *FRIENDS])
    for name in ["demo", *FRIENDS]:
        card = page.locator(f"li.person[data-user={name}]")
        expect(card.locator(".covers img")).to_have_count(4)
        expect(card.locator(".top")).to_contain_text("#1")
    covers_loaded(page)
    nothing_wrong(page)

    # A card leads to that friend's chart of the same week.
    page.locator("li.person[data-user=felix] h2 a").click()
    expect(page).to_have_url(app("/u/felix"))
    expect(page.locator(".years-ago")).to_have_text("1 year ago")
    nothing_wrong(page)

    # Then back, the way they came.
    page.go_back()
    expect(page).to_have_url(app("/everyone"))
    page.go_back()
    expect(page).to_have_url(album_url)
    expect(page.locator("h1.album-name")).to_be_visible()
    page.go_back()
    expect(page).to_have_url(app("/u/theo/history"))
    page.go_back()
    expect(page).to_have_url(app("/u/theo"))
    page.go_back()
    expect(page).to_have_url(app("/"))
    expect(page.locator("li.user")).to_have_count(5)

    assert answers.failed == [], f"answers that failed: {answers.failed}"
    assert fake.requests() == [], f"the demo asked Last.fm: {fake.requests()}"


def test_the_friends_histories_on_a_phone(pages, stack, fake):
    """theo's year links stop in 2019, mara's every year skips her gap,
    felix's rediscover offers his album of seven years; on a phone, with
    nothing wider than the screen."""
    app = stack.app(fake, "--demo", api_key=False)
    phone = pages.new_page(**PHONE)
    answers = Answers(phone)

    phone.goto(app("/u/theo?years_ago=7"))
    expect(phone.locator(".years .prev[aria-disabled=true]")).to_have_count(1)
    fits_a_phone(phone)
    nothing_wrong(phone)

    phone.goto(app("/u/mara/history"))
    labels = phone.locator(".history-year h2 a").all_inner_texts()
    assert labels == [f"{n} year{'s' if n > 1 else ''} ago" for n in [*range(1, 7), *range(14, 19)]], labels
    fits_a_phone(phone)
    nothing_wrong(phone)

    phone.goto(app("/u/felix/rediscover"))
    first = phone.locator("li.row").first
    expect(first.locator(".find-when")).to_contain_text("best")
    # The "N years ago · best …" line is inside its row: above the row's rule, not below it.
    row, when = first.bounding_box(), first.locator(".find-when").bounding_box()
    assert when["y"] + when["height"] <= row["y"] + row["height"] + 0.5, (row, when)
    rule = phone.evaluate("getComputedStyle(document.querySelector('.rediscover li.row')).borderBottomStyle")
    assert rule == "solid", rule
    covers_loaded(phone)
    fits_a_phone(phone)
    nothing_wrong(phone)
    pages.shot(phone, "rediscover-phone")

    assert answers.failed == [], f"answers that failed: {answers.failed}"
    assert fake.requests() == [], f"the demo asked Last.fm: {fake.requests()}"
