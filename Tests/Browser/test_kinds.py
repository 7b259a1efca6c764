"""Artist and track charts, and "Everyone, this week", in a real browser.

The demo user (`--demo`) is charted offline from its generated history;
`ybsc` comes from the fake Last.fm's captured answers (its history ends in
July 2020) and `hidden` is a private profile, whose charts always fail.
"""

from __future__ import annotations

import re

from pathlib import Path

from playwright.sync_api import Page, expect

SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"

DESKTOP = {"width": 1280, "height": 900}
PHONE = dict(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True, device_scale_factor=1)


def kind_links(page: Page):
    return page.locator("nav.kinds a.kind")


def current_kind(page: Page):
    return page.locator("nav.kinds a[aria-current=page]")


def covers_loaded(page: Page) -> None:
    """Waits until every image on the page has loaded (covers are lazy, and a
    debug build draws the demo's slowly), so screenshots show them: on each
    image's load event, in the page (the page's CSP forbids
    wait_for_function's eval, but not evaluate's promise). At most 10 s; an
    image that fails fails the test at once."""
    page.evaluate("""() => new Promise((resolve, reject) => {
        const failed = i => reject(new Error("an image failed to load: " + i.src));
        const pending = [];
        for (const i of document.images) {
            if (i.complete && i.naturalWidth > 0) continue;
            if (i.complete) return failed(i);  // already broken: no event will come
            pending.push(i);
        }
        let left = pending.length;
        if (left === 0) return resolve();
        const patience = setTimeout(() => reject(new Error(left + " images still loading after 10 s")), 10000);
        for (const i of pending) {
            i.addEventListener("load", () => { if (--left === 0) { clearTimeout(patience); resolve(); } }, {once: true});
            i.addEventListener("error", () => { clearTimeout(patience); failed(i); }, {once: true});
            i.loading = "eager";  // lazy covers below the fold start now
        }
    })""")


def screen_shot(pages, page: Page, suffix: str) -> None:
    """What the screen shows (not the whole page, which a long track chart
    makes too tall to look at), beside the full-page shot."""
    page.screenshot(path=str(SCREENSHOTS / f"{pages.name}--{suffix}.png"))


def fits_a_phone(page: Page) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"{page.url} scrolls sideways on a phone: scrollWidth {width}"


def test_kind_switcher_keeps_the_year_and_the_kind(pages, stack, fake):
    app = stack.app(fake, "--demo")
    page = pages.new_page(viewport=DESKTOP)
    page.goto(app("/u/demo?years_ago=3"))
    expect(kind_links(page)).to_have_text(["Albums", "Artists", "Tracks"])
    expect(current_kind(page)).to_have_text("Albums")
    expect(page.locator("li.row .art img").first).to_be_visible()

    page.get_by_role("link", name="Artists", exact=True).click()
    expect(page).to_have_url(app("/u/demo?years_ago=3&kind=artist"))
    expect(current_kind(page)).to_have_text("Artists")
    expect(page.locator("li.row").first).to_be_visible()
    expect(page.locator("li.row .monogram").first).to_be_visible()
    expect(page.locator("li.row img")).to_have_count(0)
    expect(page.locator("li.row .artist")).to_have_count(0)
    covers_loaded(page)
    pages.shot(page, "artists-desktop")
    screen_shot(pages, page, "artists-desktop-screen")

    # ← a year keeps the kind (by link and by key).
    page.locator("#prev-year").click()
    expect(page).to_have_url(app("/u/demo?years_ago=4&kind=artist"))
    page.keyboard.press("ArrowRight")
    expect(page).to_have_url(app("/u/demo?years_ago=3&kind=artist"))

    page.get_by_role("link", name="Tracks", exact=True).click()
    expect(page).to_have_url(app("/u/demo?years_ago=3&kind=track"))
    first = page.locator("li.row").first
    expect(first.locator(".artist")).not_to_be_empty()
    expect(first.locator(".album")).not_to_be_empty()
    covers_loaded(page)
    pages.shot(page, "tracks-desktop")
    screen_shot(pages, page, "tracks-desktop-screen")

    # The page's own filter keeps the kind.
    page.locator("#min-plays").select_option("2")
    page.get_by_role("button", name="Apply").click()
    expect(page).to_have_url(re.compile(r"/u/demo\?years_ago=3&kind=track&min_plays=2$"))
    for plays in page.locator("li.row .plays").all_inner_texts():
        assert int(plays.split()[0]) > 2, plays
    expect(current_kind(page)).to_have_text("Tracks")

    page.get_by_role("link", name="every year").click()
    expect(page).to_have_url(app("/u/demo/history?kind=track"))
    expect(current_kind(page)).to_have_text("Tracks")
    page.get_by_role("link", name="Albums", exact=True).click()
    expect(page).to_have_url(app("/u/demo/history"))
    expect(page.locator("li.row .art img").first).to_be_visible()

    # An unknown kind says which exist.
    response = page.goto(app("/u/demo?kind=genre"))
    assert response.status == 400
    expect(page.locator("main")).to_contain_text("Use kind=album, kind=artist or kind=track.")

    phone = pages.new_page(**PHONE)
    for kind in ["artist", "track"]:
        phone.goto(app(f"/u/demo?years_ago=3&kind={kind}"))
        expect(phone.locator("li.row").first).to_be_in_viewport()
        fits_a_phone(phone)
        for plays in phone.locator("li.row .plays").all():
            box = plays.bounding_box()
            assert box["x"] + box["width"] <= 390, box
        covers_loaded(phone)
        pages.shot(phone, f"{kind}s-phone")
        screen_shot(pages, phone, f"{kind}s-phone-screen")


def test_everyone_this_week_side_by_side(pages, stack, fake):
    app = stack.app(fake, "--demo")
    # Without JavaScript: the page needs none.
    page = pages.new_page(viewport=DESKTOP, java_script_enabled=False)
    page.goto(app("/"))
    # With --demo the list starts with the demo user and its four friends.
    expect(page.locator("li.user .user-name")).to_have_text(["demo", "theo", "mara", "felix", "june"])
    for name in ["ybsc", "hidden"]:
        page.get_by_label("Add a friend").fill(name)
        page.get_by_role("button", name="Add", exact=True).click()
        page.wait_for_load_state()
    expect(page.locator("li.user")).to_have_count(7)

    page.locator("header.bar").get_by_role("link", name="Everyone").click()
    expect(page).to_have_url(app("/everyone"))
    expect(page.locator(".years-ago")).to_have_text("1 year ago")
    cards = page.locator("li.person")
    expect(cards).to_have_count(7)
    expect(cards.locator("h2")).to_have_text(["demo", "theo", "mara", "felix", "june", "ybsc", "hidden"])

    demo = page.locator("li.person[data-user=demo]")
    expect(demo.locator(".covers img")).to_have_count(4)
    expect(demo.locator(".top")).to_contain_text("#1")
    expect(demo.locator(".top .plays")).to_have_text(re.compile(r"^\d+ plays?$"))
    # ybsc's history ended in 2020; hidden's fails, on its own card.
    expect(page.locator("li.person[data-user=ybsc] .person-state")).to_contain_text("no charts after")
    expect(page.locator("li.person[data-user=hidden] .person-state.error")).to_contain_text("private")
    expect(page.locator("#next-year")).to_have_count(0)

    page.locator("#prev-year").click()
    expect(page).to_have_url(app("/everyone?years_ago=2"))
    expect(page.locator(".years-ago")).to_have_text("2 years ago")
    page.locator("#next-year").click()
    expect(page).to_have_url(app("/everyone"))

    # A card leads to that person's chart for the same week.
    page.goto(app("/everyone?years_ago=2"))
    demo.get_by_role("link", name="demo").click()
    expect(page).to_have_url(app("/u/demo?years_ago=2"))
    expect(page.locator(".years-ago")).to_have_text("2 years ago")

    desktop = pages.new_page(viewport=DESKTOP)
    desktop.goto(app("/everyone?years_ago=2"))
    covers_loaded(desktop)
    pages.shot(desktop, "everyone-desktop")
    phone = pages.new_page(**PHONE)
    phone.goto(app("/everyone?years_ago=2"))
    expect(phone.locator("li.person")).to_have_count(7)
    fits_a_phone(phone)
    covers_loaded(phone)
    pages.shot(phone, "everyone-phone")
