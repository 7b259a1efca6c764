"""Play it again, in a real browser, on the demo: a music server added in
Settings (refused with the wrong password, saved with the right one, its
password never shown back), the weekly playlist kept there and made by
the server's job runner, the week's page making it on the server, and the
year's page leading to its own playlist; on a desktop and on a phone.

The music server is a small Subsonic-API library in this process,
answering as the API documents (token-and-salt sign-in, `search3`,
`getAlbum`, `getPlaylists`, `createPlaylist`), holding the albums of the
week's own JSPF but one. (The protocol suite drives a real Supysonic.)"""

from __future__ import annotations

import hashlib
import json
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from playwright.sync_api import expect

from conftest import http_get
from test_kinds import DESKTOP, PHONE, fits_a_phone

PASSWORD = "right one"


class SubsonicLibrary:
    """Albums (name, artist, songs) and the playlists made, behind a Subsonic-API server on a free port."""

    def __init__(self, albums: list[dict]):
        self.albums = albums
        self.playlists: dict[str, dict] = {}
        self.made = threading.Event()
        self.lock = threading.Lock()
        library = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                self.answer(urllib.parse.urlsplit(self.path).query)

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                self.answer(self.rfile.read(length).decode())

            def answer(self, query: str):
                fields = urllib.parse.parse_qs(query)
                method = urllib.parse.urlsplit(self.path).path.rsplit("/", 1)[-1]
                body = library.respond(method, fields)
                data = json.dumps({"subsonic-response": {"status": "ok" if "error" not in body else "failed", "version": "1.16.1", **body}})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data.encode())))
                self.end_headers()
                self.wfile.write(data.encode())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def address(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def respond(self, method: str, fields: dict) -> dict:
        one = lambda name: (fields.get(name) or [""])[0]  # noqa: E731
        token, salt = one("t"), one("s")
        if hashlib.md5((PASSWORD + salt).encode()).hexdigest() != token:
            return {"error": {"code": 40, "message": "Wrong username or password."}}
        if method == "ping.view":
            return {}
        if method == "search3.view":
            query = one("query").lower()
            found = [{"id": str(i), "name": a["name"], "artist": a["artist"]} for i, a in enumerate(self.albums) if query in a["name"].lower()]
            return {"searchResult3": {"album": found}}
        if method == "getAlbum.view":
            album = self.albums[int(one("id"))]
            songs = [{"id": f"{one('id')}-{n}", "title": t, "artist": album["artist"], "album": album["name"], "track": n + 1}
                     for n, t in enumerate(album["songs"])]
            return {"album": {"id": one("id"), "name": album["name"], "song": songs}}
        if method == "getPlaylists.view":
            with self.lock:
                return {"playlists": {"playlist": [{"id": k, "name": v["name"]} for k, v in self.playlists.items()]}}
        if method == "createPlaylist.view":
            with self.lock:
                key = one("playlistId") or f"pl{len(self.playlists) + 1}"
                name = self.playlists.get(key, {}).get("name") or one("name")
                self.playlists[key] = {"name": name, "songs": fields.get("songId", [])}
            self.made.set()
            return {}
        return {"error": {"code": 0, "message": "Unknown method"}}

    def close(self):
        self.server.shutdown()


def test_a_music_server_in_settings_a_weekly_playlist_and_the_weeks_page(pages, stack, fake, shot):
    app = stack.app(fake, "--demo", environment={"VINYLOGUE_MUSIC_SERVERS": "127.0.0.1"})
    # The week two years ago, as its JSPF has it: the library holds every album but the second.
    status, body = http_get(app("/u/demo/playlist/2.jspf"), timeout=10)
    assert status == 200, body
    tracks = json.loads(body)["playlist"]["track"]
    albums: dict[tuple[str, str], list[str]] = {}
    for track in tracks:
        albums.setdefault((track["album"], track["creator"]), []).append(track["title"])
    names = list(albums)
    assert len(names) >= 3, names
    lacking = names[1]
    library = SubsonicLibrary([{"name": n, "artist": a, "songs": s + ["A Song Nobody Played"]}
                               for (n, a), s in albums.items() if (n, a) != lacking])
    try:
        page = pages.new_page(viewport=DESKTOP)
        page.goto(app("/settings#music"))
        section = page.locator("section#music")
        expect(section.locator("h2")).to_have_text("Your music server")
        section.get_by_label("Address").fill(library.address)
        section.get_by_label("User").fill("demo")
        section.get_by_label("Password").fill("not it")
        section.get_by_role("button", name="Check and save").click()
        expect(page.locator("section#music [role=alert]")).to_contain_text("does not accept that user and password")
        expect(page.locator("section#music [role=alert]")).to_contain_text("Nothing was saved.")
        expect(page.locator("#weekly-playlist")).to_have_count(0)

        section = page.locator("section#music")
        section.get_by_label("Password").fill(PASSWORD)
        section.get_by_role("button", name="Check and save").click()
        expect(page.locator("section#music [role=status]")).to_have_text("Your music server answered, and is saved.")
        expect(page.get_by_label("Password")).to_have_value("")
        assert PASSWORD not in page.content()

        # Every week, by itself: kept two years back, made by the job runner.
        expect(page.locator("#weekly-playlist")).to_have_text("Every week, by itself")
        page.locator("section#music").get_by_label("This week,").select_option("2")
        page.get_by_role("button", name="Keep it every week").click()
        expect(page.locator("section#music [role=status]")).to_contain_text("Your weekly playlist is being made now")
        assert library.made.wait(10), "the job runner made no playlist on the server"
        page.reload()
        expect(page.locator("section#music .last-run")).to_contain_text("Made “Vinylogue — this week, 2 years ago”")
        expect(page.locator("section#music .last-run")).to_contain_text(f"Not in your library: {lacking[0]}")
        expect(page.get_by_role("button", name="Stop making it")).to_be_visible()
        shot(page, "settings")
        assert [p["name"] for p in library.playlists.values()] == ["Vinylogue — this week, 2 years ago"]

        # The week's page makes it again on the server, replacing it.
        page.goto(app("/u/demo?years_ago=2"))
        page.get_by_role("link", name="on your music server").click()
        expect(page.locator(".years-ago")).to_have_text("2 years ago, to play again")
        page.get_by_role("button", name=f"Make it on 127.0.0.1:{library.server.server_address[1]}").click()
        expect(page.locator("[role=status]")).to_contain_text("Replaced “Vinylogue — this week, 2 years ago”")
        expect(page.locator("[role=alert]")).to_have_count(0)
        expect(page.get_by_text("Not in your library:")).to_contain_text(lacking[0])
        shot(page, "week")
        made = list(library.playlists.values())
        assert len(made) == 1 and "A Song Nobody Played" not in made[0]["songs"]

        # The year's page leads to its own playlist.
        page.goto(app("/u/demo?years_ago=2"))
        page.locator(".page-links a", has_text="in review").click()
        page.get_by_role("link", name="Play the year again").click()
        expect(page.locator(".week-label")).to_have_text("The year’s 20 most played albums")
        expect(page.locator("ol.playlist-albums > li")).to_have_count(20)

        phone = pages.new_page(**PHONE)
        phone.goto(app("/u/demo/playlist/2"))
        expect(phone.locator("ol.playlist-albums > li")).to_have_count(len(names))
        fits_a_phone(phone)
        shot(phone, "phone")
        phone.goto(app("/settings#music"))
        expect(phone.locator("#weekly-playlist")).to_be_visible()
        fits_a_phone(phone)
        shot(phone, "phone-settings")
    finally:
        library.close()
