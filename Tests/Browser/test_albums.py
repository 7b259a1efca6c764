"""Settings → Albums in a real browser: what "editions as one album" joins
in one's own archive, turning it off (each spelling charts alone once the
background count has run) and on again."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from playwright.sync_api import expect

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "Python"))
from launcher import binary  # noqa: E402

from conftest import http_get  # noqa: E402

# Tuesday 25 November 2025, noon UTC: a year before the suite's fixed now.
A_YEAR_AGO = 1_764_072_000
# Sunday 22 November 2026, noon UTC: two days before it.
LAST_WEEK = 1_795_348_800


def history_csv(path: Path) -> None:
    lines = ["uts,utc_time,artist,artist_mbid,album,album_mbid,track,track_mbid"]
    for n in range(5):
        lines.append(f"{A_YEAR_AGO + n * 600},x,Vetiver,,Tidewater,,Track {n},")
    for n in range(4):
        lines.append(f"{A_YEAR_AGO + 7_200 + n * 600},x,Vetiver,,Tidewater (Deluxe Edition),,Bonus {n},")
    for n in range(6):
        lines.append(f"{A_YEAR_AGO + 14_400 + n * 600},x,Low,,HEY WHAT,,Song {n},")
    # Played this week too: an archive this recent is the person's charts at once.
    lines.append(f"{LAST_WEEK},x,Low,,Double Negative,,Dancing and Blood,")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def album_names(app) -> list[str]:
    status, body = http_get(app("/api/u/ybsc/chart?years_ago=1"))
    assert status == 200, body
    return [entry["name"] for entry in json.loads(body)["entries"]]


def until_names(app, expected: list[str]) -> list[str]:
    """The chart's album names once the background count has given `expected` (10 s at most)."""
    deadline = time.monotonic() + 10
    names = album_names(app)
    while names != expected and time.monotonic() < deadline:
        time.sleep(0.05)
        names = album_names(app)
    return names


def started_with_history(page, stack, fake, tmp_path, more: list[str] = (), export_text: str | None = None):
    """`history_csv` and the lines `more` imported for ybsc (or the export
    `export_text`), the app started on that data directory and ybsc's
    charts opened: the app's URL maker."""
    data = tmp_path / "data"
    export = tmp_path / "export.csv"
    if export_text is None:
        history_csv(export)
    else:
        export.write_text(export_text, encoding="utf-8")
    with export.open("a", encoding="utf-8") as out:
        for line in more:
            out.write(line + "\n")
    subprocess.run([binary("vinylogue"), "import", str(export), "--user", "ybsc", "--data-dir", str(data)],
                   check=True, capture_output=True, timeout=10)
    app = stack.app(fake, data_dir=data)
    page.goto(app("/"))
    page.get_by_label("Your Last.fm username").fill("ybsc")
    page.get_by_role("button", name="Start").click()
    return app


def test_editions_as_one_album_shown_turned_off_and_on(page, stack, fake, tmp_path, shot):
    app = started_with_history(page, stack, fake, tmp_path)
    assert album_names(app) == ["Tidewater", "HEY WHAT"]

    page.goto(app("/settings#albums"))
    section = page.locator("#albums")
    expect(section.get_by_role("heading", name="Albums")).to_be_visible()
    expect(section).to_contain_text("Editions of an album count as one album.")
    shot(page, "on")

    section.get_by_role("link", name="See which of your albums were played under several spellings").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Albums counted as one")
    expect(page.locator("ol.spellings > li")).to_have_count(1)
    expect(page.locator("ol.spellings")).to_contain_text("“Tidewater (Deluxe Edition)”: 4 plays")
    shot(page, "spellings")

    page.goto(app("/settings#albums"))
    page.get_by_role("button", name="Count each spelling as its own album").click()
    expect(page.locator("#albums .notice")).to_contain_text("Every spelling counts as its own album now.")
    expect(page.get_by_role("button", name="Treat editions of an album as one")).to_be_visible()
    assert until_names(app, ["HEY WHAT", "Tidewater", "Tidewater (Deluxe Edition)"]) == ["HEY WHAT", "Tidewater", "Tidewater (Deluxe Edition)"]
    page.goto(app("/u/ybsc"))
    expect(page.locator("li.row .album", has_text="Tidewater (Deluxe Edition)")).to_be_visible()
    shot(page, "off-chart")

    page.goto(app("/settings#albums"))
    page.get_by_role("button", name="Treat editions of an album as one").click()
    expect(page.locator("#albums .notice")).to_contain_text("Editions of an album count as one album again.")
    assert until_names(app, ["Tidewater", "HEY WHAT"]) == ["Tidewater", "HEY WHAT"]


def test_a_spelling_kept_apart_an_album_joined_and_both_undone(page, stack, fake, tmp_path, shot):
    """The album page's "Also played as": keep the deluxe edition apart;
    "Same album as…" joins OKNOTOK to OK Computer, picked from the person's
    own albums; Settings lists both choices and undoes them."""
    app = started_with_history(page, stack, fake, tmp_path, [
        *(f"{A_YEAR_AGO + 21_600 + n * 600},x,Radiohead,,OK Computer,,Lucky {n}," for n in range(3)),
        *(f"{A_YEAR_AGO + 28_800 + n * 600},x,Radiohead,,OKNOTOK 1997 2017,,Airbag {n}," for n in range(2)),
    ])
    assert album_names(app) == ["Tidewater", "HEY WHAT", "OK Computer", "OKNOTOK 1997 2017"]

    page.goto(app("/u/ybsc/album/Vetiver/Tidewater"))
    section = page.locator("#spellings")
    expect(section.get_by_role("heading", name="Also played as")).to_be_visible()
    deluxe = section.locator("li", has_text="Tidewater (Deluxe Edition)")
    expect(deluxe).to_contain_text("4 plays")
    shot(page, "also-played-as")
    deluxe.get_by_role("button", name="Keep apart").click()
    expect(page.locator("#spellings .notice")).to_contain_text("Kept apart.")
    expect(page.locator("#spellings")).to_contain_text("“Tidewater (Deluxe Edition)” by Vetiver is kept apart from this album.")
    expected = ["HEY WHAT", "Tidewater", "Tidewater (Deluxe Edition)", "OK Computer", "OKNOTOK 1997 2017"]
    assert until_names(app, expected) == expected
    shot(page, "kept-apart")

    page.goto(app("/u/ybsc/album/Radiohead/OKNOTOK%201997%202017"))
    page.get_by_role("link", name="Same album as…").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Same album as…")
    candidate = page.locator("ul.candidates li", has_text="OK Computer")
    expect(candidate).to_contain_text("3 plays")
    shot(page, "same-album")
    candidate.get_by_role("button", name="Same album").click()
    expect(page.locator("h1.album-name")).to_have_text("OK Computer")
    expect(page.locator("#spellings .notice")).to_contain_text("Counted as one album now.")
    expected = ["HEY WHAT", "OK Computer", "Tidewater", "Tidewater (Deluxe Edition)"]
    assert until_names(app, expected) == expected

    page.goto(app("/settings#albums"))
    section = page.locator("#albums")
    expect(section).to_contain_text("“Tidewater (Deluxe Edition)” by Vetiver is kept apart from its other editions.")
    expect(section).to_contain_text("“OKNOTOK 1997 2017” by Radiohead is counted as “OK Computer”.")
    shot(page, "settings-choices")
    for _ in range(2):
        section.get_by_role("button", name="Undo").first.click()
        expect(page.locator("#albums .notice")).to_contain_text("Undone.")
    expect(page.locator("#albums").get_by_role("button", name="Undo")).to_have_count(0)
    expected = ["Tidewater", "HEY WHAT", "OK Computer", "OKNOTOK 1997 2017"]
    assert until_names(app, expected) == expected


def test_spellings_of_one_release_are_one_album_and_say_so(page, stack, fake, tmp_path, shot):
    """Listens of "OK Computer" and of its OKNOTOK reissue that carry one
    MusicBrainz release id chart as one album; the album page marks the
    spelling that is there by its release."""
    release = "0b6b4ba0-d36f-47bd-b4ea-6a5b91842d29"
    app = started_with_history(page, stack, fake, tmp_path, [
        *(f"{A_YEAR_AGO + 21_600 + n * 600},x,Radiohead,,OK Computer OKNOTOK 1997 2017,{release},Lucky {n}," for n in range(3)),
        *(f"{A_YEAR_AGO + 28_800 + n * 600},x,Radiohead,,OK Computer,{release},Airbag {n}," for n in range(2)),
    ])
    assert album_names(app) == ["Tidewater", "HEY WHAT", "OK Computer OKNOTOK 1997 2017"]

    page.goto(app("/u/ybsc/album/Radiohead/OK%20Computer"))
    expect(page.locator("h1.album-name")).to_have_text("OK Computer")
    tied = page.locator("#spellings li", has_text="“OK Computer”")
    expect(tied).to_contain_text("2 plays")
    expect(tied.locator(".hint")).to_have_text("the same MusicBrainz release")
    expect(page.locator("#spellings li", has_text="OKNOTOK").locator(".hint")).to_have_count(0)
    shot(page, "same-release")


def test_a_compilation_is_one_album_of_its_album_artist(page, stack, fake, tmp_path, shot):
    """A compilation's tracks by four artists, scrobbled with an album
    artist (an export's `album_artist` column, as ListenBrainz and Spotify
    give it), chart as one album of "Various Artists"; its page counts every
    track, and the artist chart keeps each track's own artist."""
    lines = ["uts,utc_time,artist,album_artist,album,album_mbid,track,track_mbid"]
    tracks = [("Art Blakey & The Jazz Messengers", "Moanin'"), ("Lee Morgan", "The Sidewinder"),
              ("Horace Silver", "Song for My Father"), ("Hank Mobley", "Soul Station")]
    for n, (artist, track) in enumerate(tracks * 2):
        lines.append(f"{A_YEAR_AGO + n * 600},x,{artist},Various Artists,Blue Note Classics,,{track},")
    for n in range(5):
        lines.append(f"{A_YEAR_AGO + 14_400 + n * 600},x,Vetiver,,Tidewater,,Track {n},")
    lines.append(f"{LAST_WEEK},x,Low,,Double Negative,,Dancing and Blood,")
    app = started_with_history(page, stack, fake, tmp_path, export_text="\n".join(lines) + "\n")

    status, body = http_get(app("/api/u/ybsc/chart?years_ago=1"))
    assert status == 200, body
    entries = json.loads(body)["entries"]
    assert [(e["artist"], e["name"], e["plays"]) for e in entries] == [
        ("Various Artists", "Blue Note Classics", 8), ("Vetiver", "Tidewater", 5)]

    page.goto(app("/u/ybsc?years_ago=1"))
    first = page.locator("ol.rows > li").first
    expect(first).to_contain_text("Blue Note Classics")
    expect(first).to_contain_text("Various Artists")
    shot(page, "compilation-chart")

    first.get_by_role("link").first.click()
    expect(page.locator("h1.album-name")).to_have_text("Blue Note Classics")
    expect(page.locator("main")).to_contain_text("Various Artists")
    expect(page.locator("main")).to_contain_text("8 plays")
    expect(page.locator("#spellings")).to_contain_text("Never under another name.")
    shot(page, "compilation-album")
