"""Signing in with Last.fm (through the fake's approval page), as two people
in two browsers on one server."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from test_app import listed_users, me_badges, rows


def sign_in(page: Page, app, who: str) -> None:
    page.goto(app("/"))
    expect(page.get_by_role("heading", level=1)).to_have_text("This week, years ago")
    page.get_by_role("link", name="Sign in with Last.fm").click()
    # Last.fm's approval page (the fake's), then back to Vinylogue.
    expect(page.get_by_role("heading", level=1)).to_have_text("Connect application")
    page.get_by_label("Signed in to Last.fm as").select_option(who)
    page.get_by_role("button", name="Yes, allow access").click()
    expect(page).to_have_url(app("/"))
    expect(page.get_by_role("heading", level=1)).to_have_text("Users")


def test_sign_in_keep_your_own_list_and_sign_out(pages, signin_app, shot):
    app = signin_app
    page = pages.new_page()
    page.goto(app("/"))
    expect(page.get_by_role("link", name="Sign in with Last.fm")).to_be_visible()
    assert listed_users(page) == []
    shot(page, "welcome")

    sign_in(page, app, "RJ")
    expect(page.locator(".signed-in")).to_contain_text("Signed in with Last.fm as RJ")
    # Themselves, then the people they follow on Last.fm.
    assert listed_users(page) == ["RJ", "demo", "hidden", "ybsc"]
    assert me_badges(page) == ["RJ"]
    shot(page, "signed-in")

    # Their own filter.
    page.get_by_role("link", name="Settings").click()
    page.locator("#filter").select_option("4")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.get_by_role("status")).to_have_text("Settings saved.")
    page.goto(app("/u/ybsc/week/2020-07-08"))
    expect(page.locator(".hidden-note")).to_be_visible()

    # A second person, in another browser, sees their own list and no filter.
    other = pages.new_page()
    sign_in(other, app, "ybsc")
    expect(other.locator(".signed-in")).to_contain_text("as ybsc")
    assert listed_users(other)[0] == "ybsc"
    assert "hidden" not in listed_users(other)
    other.goto(app("/u/ybsc/week/2020-07-08"))
    expect(rows(other).first).to_be_visible()
    expect(other.locator(".hidden-note")).to_have_count(0)
    shot(other, "second-person")

    # Signing out: back to the way in; the list is no longer shown.
    page.goto(app("/"))
    page.get_by_role("button", name="Sign out").click()
    expect(page).to_have_url(app("/"))
    expect(page.get_by_role("link", name="Sign in with Last.fm")).to_be_visible()
    assert listed_users(page) == []
    page.goto(app("/settings"))
    expect(page.get_by_role("heading", level=1)).to_have_text("Sign in first")
    expect(page.get_by_role("link", name="Sign in with Last.fm")).to_be_visible()
    expect(page.locator("main")).to_contain_text("Sign in with Last.fm to choose your own filter")
    shot(page, "signed-out")
    # The other person is still signed in.
    other.goto(app("/"))
    expect(other.locator(".signed-in")).to_contain_text("as ybsc")
