"""A year in review in a real browser, on the demo: reached from the
week's chart, its lists, months and bars, the way to the year before, on
a desktop and on a phone (nothing scrolls sideways), every cover loaded."""

from __future__ import annotations

from playwright.sync_api import expect

from test_kinds import DESKTOP, PHONE, covers_loaded, fits_a_phone


def test_a_year_from_the_chart_on_desktop_and_phone(pages, stack, fake, shot):
    app = stack.app(fake, "--demo")
    page = pages.new_page(viewport=DESKTOP)
    page.goto(app("/u/demo?years_ago=2"))
    link = page.locator(".page-links a", has_text="in review")
    year = link.inner_text().split()[0]
    link.click()
    expect(page).to_have_url(app(f"/u/demo/year/{year}"))
    expect(page.locator(".years-ago")).to_have_text(year)
    expect(page.locator(".chart-head .week-label")).to_contain_text("plays of")
    expect(page.locator("#albums-heading")).to_have_text("Top albums")
    expect(page.locator("section[aria-labelledby=albums-heading] li.row")).to_have_count(10)
    expect(page.locator("ol.months > li")).to_have_count(12)
    expect(page.locator("figure.year-bars svg")).to_have_count(2)
    expect(page.locator("figure.year-bars rect")).to_have_count(7 + 24)
    expect(page.locator("[role=alert]")).to_have_count(0)
    covers_loaded(page)
    shot(page, "desktop")

    # The year before, by its link; then the first album's page.
    page.locator(".year-nav a[rel=prev]").click()
    expect(page.locator(".years-ago")).to_have_text(str(int(year) - 1))
    page.locator("section[aria-labelledby=albums-heading] li.row a").first.click()
    expect(page.locator("h1.album-name")).to_be_visible()
    expect(page.locator(".year-links a").first).to_be_visible()

    phone = pages.new_page(**PHONE)
    phone.goto(app(f"/u/demo/year/{year}"))
    expect(phone.locator("ol.months > li")).to_have_count(12)
    covers_loaded(phone)
    fits_a_phone(phone)
    shot(phone, "phone")
