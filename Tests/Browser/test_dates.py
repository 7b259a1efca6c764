"""The dates that matter, each on servers whose clocks start there (the
`now` fixture: `VINYLOGUE_TEST_NOW` for serve, `--starting-at` for the fake):
the last and first minutes of a year, Feb 29 of a leap year and the day
after, and the minutes either side of noon on a Sunday, when a Last.fm
week starts (weeks run from Sunday 12:00 UTC to the next).

For each, and for N = 1 to 4 years ago, for a user whose charts come from
(the fake) Last.fm (`RJ`) and for the archived demo user (`demo`), the page
"N years ago" must show the week that contains the instant N calendar years
before (Feb 29 less a year is Feb 28), worked out here and not by the
server; its year links must name the years either side; and its permalink
(the Share link, the dated week, whose day is the week's Monday) must show
the same week under the same "N years ago". On Tue 24 Nov 2026 at 12:12 UTC
the permalink of "2 years ago" once said "1 year ago": two years before fell
in the first hours of a week, and the permalink's day is the day after.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from playwright.sync_api import Page, expect

USERS = ["RJ", "demo"]


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc)


DATES = [
    pytest.param(utc("2026-12-31T23:59:30"), id="last-minute-of-a-year"),
    pytest.param(utc("2027-01-01T00:00:30"), id="first-minute-of-a-year"),
    pytest.param(utc("2028-02-29T12:30:00"), id="feb-29-of-a-leap-year"),
    pytest.param(utc("2028-03-01T00:00:30"), id="mar-1-after-a-leap-day"),
    # Now on a Sunday either side of noon: the current week changes.
    pytest.param(utc("2026-11-29T11:59:00"), id="sunday-a-minute-before-a-week-starts"),
    pytest.param(utc("2026-11-29T12:01:00"), id="sunday-a-minute-after-a-week-starts"),
    # Now on a Tuesday, when two years before is a Sunday either side of
    # noon (24 Nov 2024): the week "2 years ago" is in its first minutes.
    pytest.param(utc("2026-11-24T11:59:00"), id="two-years-before-is-a-minute-before-a-week-starts"),
    pytest.param(utc("2026-11-24T12:01:00"), id="two-years-before-is-a-minute-after-a-week-starts"),
]


def years_before(instant: datetime, n: int) -> datetime:
    """`instant` moved back `n` calendar years; Feb 29 becomes Feb 28."""
    try:
        return instant.replace(year=instant.year - n)
    except ValueError:
        return instant.replace(year=instant.year - n, day=28)


def week_start(instant: datetime) -> datetime:
    """The start of the Last.fm week containing `instant`: the latest Sunday 12:00 UTC at or before it."""
    start = instant.replace(hour=12, minute=0, second=0, microsecond=0) - timedelta(days=(instant.weekday() + 1) % 7)
    return start if start <= instant else start - timedelta(days=7)


def years_ago_label(n: int) -> str:
    return "1 year ago" if n == 1 else f"{n} years ago"


def test_the_week_function_here_knows_last_fm_weeks():
    """The expectation's own arithmetic, checked against weeks whose starts are known."""
    assert week_start(utc("2024-11-24T12:12:00")) == utc("2024-11-24T12:00:00")
    assert week_start(utc("2024-11-24T11:59:00")) == utc("2024-11-17T12:00:00")
    assert week_start(utc("2024-11-26T12:12:00")) == utc("2024-11-24T12:00:00")
    assert week_start(utc("2024-11-30T23:59:00")) == utc("2024-11-24T12:00:00")
    assert years_before(utc("2028-02-29T12:30:00"), 1) == utc("2027-02-28T12:30:00")
    assert years_before(utc("2028-02-29T12:30:00"), 4) == utc("2024-02-29T12:30:00")


@pytest.mark.parametrize("now", DATES, indirect=True)
def test_years_ago_pages_and_their_permalinks_agree(pages, stack, fake, now):
    app = stack.app(fake, "--demo")
    page: Page = pages.new_page()
    # Covers play no part here, and a debug build draws the demo's slowly.
    page.route("**/cover/**", lambda route: route.abort())
    for user in USERS:
        for n in range(1, 5):
            target = years_before(now, n)
            start = week_start(target)
            monday = (start + timedelta(days=1)).date().isoformat()
            where = f"/u/{user}?years_ago={n} at {now.isoformat()} (target {target.isoformat()}, week from {start.isoformat()})"

            response = page.goto(app(f"/u/{user}?years_ago={n}"), wait_until="domcontentloaded")
            assert response.status == 200, where
            expect(page.locator(".years-ago")).to_have_text(years_ago_label(n))
            expect(page.locator("li.row").first).to_be_visible()
            # The year links name the years either side of the target's.
            expect(page.locator(".year.prev")).to_have_text(f"← {years_before(now, n + 1).year}")
            expect(page.locator(".year.next")).to_have_text(f"{years_before(now, n - 1).year} →")
            week_label = page.locator(".week-label").inner_text()
            permalink = page.locator("a.share-link").get_attribute("href")
            assert permalink == app(f"/u/{user}/week/{monday}"), f"{where}: the permalink is {permalink}"

            response = page.goto(permalink, wait_until="domcontentloaded")
            assert response.status == 200, permalink
            expect(page.locator(".years-ago")).to_have_text(years_ago_label(n))
            expect(page.locator(".week-label")).to_have_text(week_label)
            expect(page.locator("li.row").first).to_be_visible()
