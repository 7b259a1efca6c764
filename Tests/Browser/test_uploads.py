"""Bringing one's history in from the browser: an export uploaded on
Settings (a ListenBrainz ZIP and a Last.fm CSV), its progress watched by
reloading, then its weeks charted from the archive."""

from __future__ import annotations

import io
import json
import zipfile

from playwright.sync_api import Page, expect

from test_app import onboard


def import_states(page: Page) -> list[str]:
    return [text.strip() for text in page.locator(".import-job p").all_inner_texts()]


def wait_until_imported(page: Page, app, count: int) -> None:
    """Reloads Settings (as a person would) until `count` uploads are done; 10 s at most."""
    for _ in range(100):
        page.goto(app("/settings#imports"))
        states = import_states(page)
        if sum(1 for s in states if s.endswith("imported") or s.endswith("not imported")) >= count:
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"the uploads were not imported: {import_states(page)}")


def wait_until_copied(page: Page, app, user: str) -> None:
    """Reloads `user`'s chart until it no longer says their history is being copied; 10 s at most."""
    for _ in range(100):
        page.goto(app(f"/u/{user}"))
        if page.locator(".notice.copying").count() == 0:
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"{user}'s history copy did not finish")


def test_upload_a_listenbrainz_zip_and_a_lastfm_csv_then_see_the_chart(page, app, tmp_path, shot):
    onboard(page, app)
    # The first view starts the copy of ybsc's Last.fm history (a short one
    # in the fake); until it is done, the charts are Last.fm's.
    wait_until_copied(page, app, "ybsc")
    page.goto(app("/settings"))
    expect(page.get_by_role("heading", name="Bring in an export")).to_be_visible()

    listens = "\n".join(json.dumps({
        "listened_at": 1_626_000_000 + n * 600,
        "track_metadata": {"artist_name": "Björk", "release_name": "Homogenic", "track_name": f"Jóga {n}"},
    }) for n in range(12)) + "\n"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("listens/2021/7.jsonl", listens)
    lb_zip = tmp_path / "listenbrainz_ybsc_1700000000.zip"
    lb_zip.write_bytes(buffer.getvalue())

    page.get_by_label("Export file").set_input_files(str(lb_zip))
    page.get_by_role("button", name="Upload and import").click()
    expect(page.get_by_role("status").filter(has_text="Your export is stored")).to_be_visible()
    expect(page.locator(".import-job h3").first).to_have_text("listenbrainz_ybsc_1700000000.zip")
    shot(page, "queued")

    header = "uts,utc_time,artist,artist_mbid,album,album_mbid,track,track_mbid"
    lines = [f'{1_625_000_000 + n * 900},"x","Portishead","","Dummy","","Track {n % 11}",""' for n in range(40)]
    csv = tmp_path / "scrobbles.csv"
    csv.write_text("\n".join([header, *lines]) + "\n")
    page.get_by_label("Export file").set_input_files(str(csv))
    page.get_by_role("button", name="Upload and import").click()

    wait_until_imported(page, app, 2)
    summaries = page.locator(".import-summary").all_inner_texts()
    assert any("Imported 40 scrobbles for ybsc" in s for s in summaries), summaries
    assert any("listens/2021/7.jsonl" in s and "12 imported" in s for s in summaries), summaries
    shot(page, "imported")

    page.goto(app("/u/ybsc/week/2021-06-30"))
    expect(page.locator(".rows .row").first).to_contain_text("Portishead")
    page.goto(app("/u/ybsc/week/2021-07-14"))
    expect(page.locator(".rows .row").first).to_contain_text("Björk")
    shot(page, "chart")


def test_a_file_that_is_not_an_export_is_a_sentence(page, app, tmp_path):
    onboard(page, app)
    page.goto(app("/settings"))
    picture = tmp_path / "holiday.jpg"
    picture.write_bytes(b"\xff\xd8\xff" + bytes(3000))
    page.get_by_label("Export file").set_input_files(str(picture))
    page.get_by_role("button", name="Upload and import").click()
    wait_until_imported(page, app, 1)
    expect(page.locator(".import-job .error")).to_contain_text("“holiday.jpg” is not an export Vinylogue recognises")
