"""Keeping one's listening: on Settings, "Who sees your listening" hides it
from everyone else, "Download everything" gives a
ZIP of one's archive, list and settings, and "Delete my account" (confirmed
by typing one's name) leaves nothing and signs one out."""

from __future__ import annotations

import json
import zipfile

from playwright.sync_api import expect

from test_signin import sign_in
from test_uploads import wait_until_copied, wait_until_imported


def test_download_everything_then_delete_the_account(pages, signin_app, tmp_path, shot):
    app = signin_app
    page = pages.new_page()
    sign_in(page, app, "ybsc")
    # Signing in starts the copy of ybsc's Last.fm history (a short one in the fake).
    wait_until_copied(page, app, "ybsc")

    # ybsc's Last.fm history is empty in the fake: an export brings listens in.
    page.goto(app("/settings"))
    listens = "\n".join(json.dumps({
        "listened_at": 1_626_000_000 + n * 600,
        "track_metadata": {"artist_name": "Björk", "release_name": "Homogenic", "track_name": f"Jóga {n}"},
    }) for n in range(12)) + "\n"
    upload = tmp_path / "listens.jsonl"
    upload.write_text(listens)
    page.get_by_label("Export file").set_input_files(str(upload))
    page.get_by_role("button", name="Upload and import").click()
    wait_until_imported(page, app, 1)

    expect(page.get_by_role("heading", name="Take it all with you")).to_be_visible()
    shot(page, "settings")
    with page.expect_download() as waiting:
        page.get_by_role("link", name="Download everything (ZIP)").click()
    download = waiting.value
    assert download.suggested_filename.startswith("vinylogue-ybsc-") and download.suggested_filename.endswith(".zip")
    path = tmp_path / download.suggested_filename
    download.save_as(path)
    with zipfile.ZipFile(path) as archive:
        assert archive.testzip() is None
        names = archive.namelist()
        assert "listens/2021/7.jsonl" in names, names
        lines = [json.loads(line) for line in archive.read("listens/2021/7.jsonl").decode().splitlines()]
        assert [line["track_metadata"]["track_name"] for line in lines] == [f"Jóga {n}" for n in range(12)], lines
        assert lines[0]["listened_at"] == 1_626_000_000 and lines[0]["track_metadata"]["release_name"] == "Homogenic"
        people = [person["name"] for person in json.loads(archive.read("vinylogue/list.json"))]
        assert people[0] == "ybsc", people

    # Only me: another browser gets the page of a name Last.fm does not know; the owner still sees hers.
    section = page.locator("#visibility")
    section.get_by_label("Only me").check()
    section.get_by_role("button", name="Save who sees it").click()
    expect(page.locator("#visibility").get_by_role("status")).to_have_text("Saved: your listening is shown to you alone.")
    expect(page.locator("#visibility").get_by_label("Only me")).to_be_checked()
    shot(page, "only-me")
    stranger = pages.new_page()
    answer = stranger.goto(app("/u/ybsc/week/2021-07-11"))
    assert answer.status == 404
    expect(stranger.get_by_text("The user “ybsc” was not found on Last.fm.")).to_be_visible()
    expect(stranger.get_by_text("Homogenic")).to_have_count(0)
    shot(stranger, "hidden-from-a-stranger")
    stranger.close()
    own = page.goto(app("/u/ybsc/week/2021-07-11"))
    assert own.status == 200
    expect(page.get_by_text("Homogenic").first).to_be_visible()
    page.goto(app("/settings"))

    # A wrong name deletes nothing and says so.
    section = page.locator("#delete")
    section.get_by_label("To confirm, type your Last.fm name").fill("someone")
    section.get_by_role("button", name="Delete my account and everything of it").click()
    expect(page.get_by_role("alert")).to_contain_text("Nothing was deleted: type your Last.fm name, ybsc, to confirm.")
    shot(page, "unconfirmed")

    page.locator("#delete").get_by_label("To confirm, type your Last.fm name").fill("ybsc")
    page.locator("#delete").get_by_role("button", name="Delete my account and everything of it").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Your account is deleted")
    shot(page, "deleted")
    # Signed out: Settings asks to sign in, and the start page offers it.
    page.goto(app("/"))
    expect(page.get_by_role("link", name="Sign in with Last.fm")).to_be_visible()
