"""`vinylogue playlist --to subsonic` and `--to mpd` against real servers:
Supysonic (Debian's), a Subsonic-API server, and mpd (Debian's), each over
the same generated music folder: short FLAC files made
with sox and tagged with mutagen, some albums under the names a person's
listens do not use ("Tidewater" in the library, "Tidewater (Deluxe
Edition)" in the listens). Vinylogue makes the playlist; the test reads it
back through the Subsonic API with py-sonic, a Subsonic client: its name,
its songs in chart order, and what the command says it did not find. Then:
the same command again replaces the playlist instead of making a second;
a wrong password, a port nobody listens on and an address that is no
Subsonic server each get a sentence and change nothing.

Supysonic answers only to a password (its API predates tokens): the client
asks with a token first, is refused for the missing password, and asks
again with it, as Subsonic clients do. mpd is read back with mpc (Debian's):
`mpc lsplaylists` and `mpc playlist NAME`; its password, when mpd.conf
asks for one, is sent first.

Then through the web app (`vinylogue serve` on the same archive): the
server saved in Settings as a person saves it, "Make it on …", the M3U8
of mpd's paths, and the weekly playlist made by the server's own job
runner, read back from Supysonic and mpd.
"""

from __future__ import annotations

import calendar
import http.server
import os
import threading
import socket
import subprocess
import time
import shlex
import socketserver
import urllib.error
import urllib.parse
import urllib.request
from datetime import datetime, timezone
from pathlib import Path

import libsonic
import pytest
from mutagen.flac import FLAC

from launcher import ServerProcess, binary  # Tests/Python (conftest.py puts it on the path)

PASSWORD = "correct horse"
WEEK = 7 * 86400
# A Sunday noon (UTC): Last.fm's weeks start at noon on Sundays.
WEEK_ORIGIN = 1_605_441_600

LIBRARY = {
    ("Vetiver", "Tidewater"): ["Rolling Sea", "Wonder Why", "More of This"],
    ("The Beatles", "Abbey Road"): ["Come Together", "Something", "Octopus's Garden"],
    ("Bill Callahan", "Apocalypse"): ["Drover", "Baby's Breath"],
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what: str, check, patience: float = 10) -> None:
    deadline = time.monotonic() + patience
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"{what} did not happen within {patience} s", pytrace=False)
        time.sleep(0.1)


def make_library(music: Path) -> None:
    """The generated music folder: half-second tones, tagged."""
    for (artist, album), titles in LIBRARY.items():
        folder = music / artist / album
        folder.mkdir(parents=True)
        for number, title in enumerate(titles, start=1):
            path = folder / f"{number:02d}.flac"
            subprocess.run(["sox", "-n", "-r", "8000", "-c", "1", str(path), "synth", "0.5", "sine", str(300 + 40 * number)], check=True)
            tags = FLAC(path)
            tags["artist"], tags["album"], tags["title"], tags["tracknumber"] = artist, album, title, str(number)
            tags.save()


@pytest.fixture
def supysonic(tmp_path: Path):
    """Supysonic on a free port, over the generated library, with the user `ana`."""
    music = tmp_path / "music"
    make_library(music)
    (tmp_path / "supysonic.conf").write_text(f"""[base]
database_uri = sqlite:///{tmp_path}/supysonic.db
[webapp]
cache_dir = {tmp_path}/cache
mount_webui = no
[daemon]
socket = {tmp_path}/daemon.sock
run_watcher = no
""")
    def cli(*arguments: str) -> None:
        subprocess.run(["supysonic-cli", *arguments], cwd=tmp_path, check=True, capture_output=True, timeout=10)
    cli("user", "add", "ana", "-p", PASSWORD)
    cli("folder", "add", "music", str(music))
    cli("folder", "scan", "--foreground", "music")
    port = free_port()
    log = open(tmp_path / "supysonic.log", "w")
    process = subprocess.Popen(["supysonic-server", "-S", "waitress", "-h", "127.0.0.1", "-p", str(port)], cwd=tmp_path,
                               stdout=log, stderr=subprocess.STDOUT)

    def answers() -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/rest/ping.view", timeout=1):
                return True
        except OSError:
            return process.poll() is not None
    try:
        wait_for("Supysonic answering", answers)
        assert process.poll() is None, (tmp_path / "supysonic.log").read_text()
        yield port
    finally:
        process.terminate()
        process.wait(timeout=10)
        log.close()


@pytest.fixture
def archive(tmp_path: Path) -> Path:
    """A data directory where ana played, this week two years ago, Tidewater
    as its deluxe edition (most), Abbey Road (Remastered), and an album the
    library does not hold."""
    now = datetime.now(timezone.utc)
    then = now.replace(year=now.year - 2, day=min(now.day, 28))
    week = WEEK_ORIGIN + (calendar.timegm(then.timetuple()) - WEEK_ORIGIN) // WEEK * WEEK
    lines = ["uts,utc_time,artist,artist_mbid,album,album_mbid,track,track_mbid"]
    plays = [("Vetiver", "Tidewater (Deluxe Edition)", "Wonder Why")] * 3 + [("Vetiver", "Tidewater (Deluxe Edition)", "Rolling Sea")] * 2 \
        + [("The Beatles", "Abbey Road (Remastered)", "Something")] * 2 + [("Lower Dens", "Nootropics", "Brains")]
    for n, (artist, album, track) in enumerate(plays):
        lines.append(f"{week + 3600 + n * 600},x,{artist},,{album},,{track},")
    export = tmp_path / "export.csv"
    export.write_text("\n".join(lines) + "\n")
    data = tmp_path / "data"
    subprocess.run([str(binary("vinylogue")), "import", str(export), "--user", "ana", "--data-dir", str(data)], check=True,
                   capture_output=True, timeout=10)
    return data


def playlist(data: Path, server: str, password: str = PASSWORD, to: str = "subsonic", *extra: str) -> subprocess.CompletedProcess:
    user = ["--server-user", "ana"] if to == "subsonic" else []
    secret = {"VINYLOGUE_SUBSONIC_PASSWORD": password} if to == "subsonic" else ({"VINYLOGUE_MPD_PASSWORD": password} if password else {})
    return subprocess.run([str(binary("vinylogue")), "playlist", "ana", "--years-ago", "2", "--to", to, "--server", server, *user,
                           "--time-zone", "UTC", "--data-dir", str(data), *extra],
                          capture_output=True, text=True, timeout=10, env={**os.environ, **secret})


def test_the_week_becomes_a_playlist_on_supysonic(supysonic, archive):
    server = f"http://127.0.0.1:{supysonic}"
    made = playlist(archive, server)
    assert made.returncode == 0, made.stderr
    assert f"Made “Vinylogue — this week, 2 years ago” on {server}: 3 songs of 2 albums." in made.stdout, made.stdout
    assert "Not found there: Lower Dens — Nootropics." in made.stdout
    assert PASSWORD not in made.stdout + made.stderr

    client = libsonic.Connection("http://127.0.0.1", "ana", PASSWORD, port=supysonic, legacyAuth=True)
    lists = client.getPlaylists()["playlists"]["playlist"]
    assert [p["name"] for p in lists] == ["Vinylogue — this week, 2 years ago"]
    songs = client.getPlaylist(lists[0]["id"])["playlist"]["entry"]
    # Chart order: Tidewater (5 plays) first, its played songs in the
    # library's order; then Abbey Road's one song played.
    assert [(s["album"], s["title"]) for s in songs] == [("Tidewater", "Rolling Sea"), ("Tidewater", "Wonder Why"),
                                                         ("Abbey Road", "Something")]

    again = playlist(archive, server)
    assert again.returncode == 0, again.stderr
    assert "Replaced “Vinylogue — this week, 2 years ago”" in again.stdout
    assert len(client.getPlaylists()["playlists"]["playlist"]) == 1


def test_failures_say_why_and_change_nothing(supysonic, archive, tmp_path):
    server = f"http://127.0.0.1:{supysonic}"
    wrong = playlist(archive, server, password="not the one")
    assert wrong.returncode == 3
    assert f"127.0.0.1:{supysonic} does not accept that user and password. Check them, then try again." in wrong.stderr, wrong.stderr
    assert "not the one" not in wrong.stderr + wrong.stdout
    nobody = playlist(archive, f"http://127.0.0.1:{free_port()}")
    assert nobody.returncode == 3 and "could not reach" in nobody.stderr, nobody.stderr
    # A web server that is no music server (a router's login page, say).
    class Page(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(b"<html><body>Router login</body></html>")

        def log_message(self, *arguments):
            pass
    page = http.server.HTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=page.serve_forever, daemon=True).start()
    try:
        not_subsonic = playlist(archive, f"http://127.0.0.1:{page.server_port}")
    finally:
        page.shutdown()
    assert not_subsonic.returncode == 3
    assert "does not answer as a Subsonic-API music server does" in not_subsonic.stderr, not_subsonic.stderr
    client = libsonic.Connection("http://127.0.0.1", "ana", PASSWORD, port=supysonic, legacyAuth=True)
    assert client.getPlaylists()["playlists"].get("playlist", []) == []


MPD_PASSWORD = "tones only"


@pytest.fixture
def mpd(tmp_path: Path):
    """mpd on a free port over the generated library, wanting a password for everything: its port and playlist directory."""
    music = tmp_path / "mpd-music"
    make_library(music)
    (tmp_path / "playlists").mkdir()
    port = free_port()
    (tmp_path / "mpd.conf").write_text(f"""
music_directory "{music}"
playlist_directory "{tmp_path / 'playlists'}"
db_file "{tmp_path / 'mpd.db'}"
state_file "{tmp_path / 'mpd.state'}"
bind_to_address "127.0.0.1"
port "{port}"
password "{MPD_PASSWORD}@read,add,control,admin"
default_permissions ""
audio_output {{
    type "null"
    name "null"
}}
""")
    process = subprocess.Popen(["mpd", "--no-daemon", "--stderr", str(tmp_path / "mpd.conf")],
                               stdout=subprocess.DEVNULL, stderr=open(tmp_path / "mpd.log", "w"))
    try:
        def up() -> bool:
            return subprocess.run(["mpc", "-h", f"{MPD_PASSWORD}@127.0.0.1", "-p", str(port), "status"], capture_output=True).returncode == 0
        wait_for("mpd answering", up)
        subprocess.run(["mpc", "-h", f"{MPD_PASSWORD}@127.0.0.1", "-p", str(port), "update", "--wait"], check=True, capture_output=True,
                       timeout=10)
        yield port, tmp_path / "playlists"
    finally:
        process.terminate()
        process.wait(timeout=10)


def mpc(port: int, *arguments: str) -> list[str]:
    done = subprocess.run(["mpc", "-h", f"{MPD_PASSWORD}@127.0.0.1", "-p", str(port), "-f", "%album% / %title%", *arguments],
                          capture_output=True, text=True, timeout=10, check=True)
    return done.stdout.splitlines()


def test_the_week_becomes_a_stored_playlist_in_mpd(mpd, archive):
    mpd, _ = mpd
    server = f"127.0.0.1:{mpd}"
    made = playlist(archive, server, password=MPD_PASSWORD, to="mpd")
    assert made.returncode == 0, made.stderr
    assert f"Made “Vinylogue — this week, 2 years ago” on {server} (mpd): 3 songs of 2 albums." in made.stdout, made.stdout
    assert "Not found there: Lower Dens — Nootropics." in made.stdout
    assert mpc(mpd, "lsplaylists") == ["Vinylogue — this week, 2 years ago"]
    assert mpc(mpd, "playlist", "Vinylogue — this week, 2 years ago") == [
        "Tidewater / Rolling Sea", "Tidewater / Wonder Why", "Abbey Road / Something"]

    again = playlist(archive, server, password=MPD_PASSWORD, to="mpd")
    assert again.returncode == 0, again.stderr
    assert "Replaced “Vinylogue — this week, 2 years ago”" in again.stdout
    assert len(mpc(mpd, "playlist", "Vinylogue — this week, 2 years ago")) == 3

    wrong = playlist(archive, server, password="not it", to="mpd")
    assert wrong.returncode == 3
    assert f"{server} does not accept that password, or wants one." in wrong.stderr, wrong.stderr
    assert "not it" not in wrong.stderr
    none = playlist(archive, server, password="", to="mpd")
    assert none.returncode == 3 and "does not accept that password, or wants one" in none.stderr, none.stderr
    closed = playlist(archive, f"127.0.0.1:{free_port()}", password="", to="mpd")
    assert closed.returncode == 3 and "could not reach" in closed.stderr, closed.stderr
    assert mpc(mpd, "lsplaylists") == ["Vinylogue — this week, 2 years ago"]


def test_an_m3u8_of_mpds_own_paths_loads_as_a_stored_playlist(mpd, archive):
    """`--to m3u`: the songs mpd has, as an M3U8 file of its paths; put in
    mpd's playlist directory, mpd reads it as a stored playlist."""
    port, directory = mpd
    target = directory / "Played again.m3u"
    made = playlist(archive, f"127.0.0.1:{port}", MPD_PASSWORD, "m3u", "-o", str(target))
    assert made.returncode == 0, made.stderr
    assert "Wrote 3 tracks of 2 albums to" in made.stderr and "Not in the library: Lower Dens — Nootropics." in made.stderr, made.stderr
    text = target.read_text(encoding="utf-8")
    assert text.startswith("#EXTM3U\n#PLAYLIST:Vinylogue — this week, 2 years ago\n#EXTINF:-1,Vetiver - Rolling Sea\nVetiver/Tidewater/01.flac\n"), text
    assert mpc(port, "playlist", "Played again") == ["Tidewater / Rolling Sea", "Tidewater / Wonder Why", "Abbey Road / Something"]


# --------------------------------------------------------------------------
# Through the web app


class NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *arguments):
        return None


class WebSession:
    """A browser's session with `vinylogue serve`: its CSRF cookie and token, forms posted from its own origin."""

    def __init__(self, url: str):
        self.url = url
        self.opener = urllib.request.build_opener(NoRedirects)
        with self.opener.open(url + "/settings", timeout=10) as page:
            self.cookie = page.headers["Set-Cookie"].split(";", 1)[0]
        self.token = self.cookie.split("=", 1)[1]

    def _send(self, request: urllib.request.Request) -> tuple[int, str, str]:
        try:
            with self.opener.open(request, timeout=10) as answer:
                return answer.status, answer.read().decode(), answer.headers.get("Location", "")
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode(), error.headers.get("Location", "")

    def get(self, path: str) -> tuple[int, str]:
        status, body, _ = self._send(urllib.request.Request(self.url + path, headers={"Cookie": self.cookie}))
        return status, body

    def post(self, path: str, fields: dict[str, str]) -> tuple[int, str, str]:
        form = urllib.parse.urlencode({**fields, "csrf": self.token}).encode()
        return self._send(urllib.request.Request(self.url + path, data=form, method="POST", headers={
            "Cookie": self.cookie, "Content-Type": "application/x-www-form-urlencoded", "Origin": self.url}))


@pytest.fixture
def web(tmp_path: Path, archive: Path):
    """`vinylogue serve` on the archive, with 127.0.0.1 listed for music servers and `ana` as the household's "me"."""
    env = dict(os.environ)
    for name in ("LASTFM_API_KEY", "LASTFM_API_SECRET", "DATABASE_URL", "VINYLOGUE_TEST_NOW", "VINYLOGUE_PUBLIC_URL"):
        env.pop(name, None)
    env.update({"VINYLOGUE_MUSIC_SERVERS": "127.0.0.1", "TZ": "UTC", "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"})
    app = ServerProcess([binary("vinylogue"), "serve", "--host", "127.0.0.1", "--port", "0", "--data-dir", archive],
                        "Vinylogue is serving at ", tmp_path, env=env)
    try:
        session = WebSession(app.url)
        status, body, _ = session.post("/users", {"username": "ana"})
        assert status == 303, body[-2000:]
        yield session
    finally:
        app.stop()


NAME = "Vinylogue — this week, 2 years ago"


def test_through_the_web_app_supysonic_gets_the_week_and_the_weekly_playlist(supysonic, web):
    client = libsonic.Connection("http://127.0.0.1", "ana", PASSWORD, port=supysonic, legacyAuth=True)
    address = f"http://127.0.0.1:{supysonic}"
    status, body, _ = web.post("/settings/music-server", {"music": "save", "kind": "subsonic", "address": address, "username": "ana",
                                                          "password": "not the one"})
    assert status == 422 and "does not accept that user and password" in body and "not the one" not in body, body[-2000:]
    status, body, location = web.post("/settings/music-server", {"music": "save", "kind": "subsonic", "address": address,
                                                                 "username": "ana", "password": PASSWORD})
    assert status == 303 and location.endswith("?music=saved#music"), body[-2000:]

    status, body, _ = web.post("/u/ana/playlist/2", {})
    assert status == 200, body[-2000:]
    assert f"Made “{NAME}” on 127.0.0.1:{supysonic}: 3 songs of 2 albums." in body, body[-3000:]
    assert "Not in your library: Nootropics (Lower Dens)." in body
    lists = client.getPlaylists()["playlists"]["playlist"]
    assert [p["name"] for p in lists] == [NAME]
    client.deletePlaylist(lists[0]["id"])

    # Every week, by itself: the job runner makes it at once, then on each new week.
    status, body, _ = web.post("/settings/music-server", {"music": "keep", "years": "2"})
    assert status == 303, body[-2000:]

    def made() -> bool:
        return [p["name"] for p in client.getPlaylists()["playlists"].get("playlist", [])] == [NAME]
    wait_for("the weekly playlist on Supysonic", made)
    songs = client.getPlaylist(client.getPlaylists()["playlists"]["playlist"][0]["id"])["playlist"]["entry"]
    assert [(s["album"], s["title"]) for s in songs] == [("Tidewater", "Rolling Sea"), ("Tidewater", "Wonder Why"), ("Abbey Road", "Something")]
    wait_for("Settings telling the run", lambda: "Last run, " in web.get("/settings")[1])
    settings = web.get("/settings")[1]
    assert f"Made “{NAME}”: 3 songs of 2 albums. Not in your library: Nootropics (Lower Dens)." in settings, settings[-3000:]
    assert PASSWORD not in settings


def test_through_the_web_app_mpd_gets_the_weekly_playlist_and_the_m3u8(mpd, web):
    port, _ = mpd
    status, body, location = web.post("/settings/music-server", {"music": "save", "kind": "mpd", "address": f"127.0.0.1:{port}",
                                                                 "username": "", "password": MPD_PASSWORD})
    assert status == 303 and location.endswith("?music=saved#music"), body[-2000:]
    status, page = web.get("/u/ana/playlist/2")
    assert status == 200 and "/u/ana/playlist/2.m3u8" in page, page[-3000:]
    status, m3u8 = web.get("/u/ana/playlist/2.m3u8")
    assert status == 200, m3u8[-2000:]
    assert m3u8 == (f"#EXTM3U\n#PLAYLIST:{NAME}\n#EXTINF:-1,Vetiver - Rolling Sea\nVetiver/Tidewater/01.flac\n"
                    "#EXTINF:-1,Vetiver - Wonder Why\nVetiver/Tidewater/02.flac\n"
                    "#EXTINF:-1,The Beatles - Something\nThe Beatles/Abbey Road/02.flac\n"), m3u8

    status, body, _ = web.post("/settings/music-server", {"music": "keep", "years": "2"})
    assert status == 303, body[-2000:]
    wait_for("the weekly playlist in mpd", lambda: NAME in mpc(port, "lsplaylists"))
    assert mpc(port, "playlist", NAME) == ["Tidewater / Rolling Sea", "Tidewater / Wonder Why", "Abbey Road / Something"]
    wait_for("Settings telling the run", lambda: "Last run, " in web.get("/settings")[1])

    # Stopped: the playlist stays, and forgetting the server forgets its password.
    status, _, _ = web.post("/settings/music-server", {"music": "stop"})
    assert status == 303
    status, _, _ = web.post("/settings/music-server", {"music": "forget"})
    assert status == 303
    assert "Every week, by itself" not in web.get("/settings")[1]
    assert mpc(port, "lsplaylists") == [NAME]


class RefusingMPD:
    """An mpd that holds the playlist NAME already, finds every album, and
    refuses the second song added: what is left on it after a refused save."""

    def __init__(self):
        self.commands: list[str] = []
        self.playlists = {NAME: ["old/01.flac"]}
        outer = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self):
                self.wfile.write(b"OK MPD 0.23.5\n")
                adds = 0
                for raw in self.rfile:
                    line = raw.decode().rstrip("\n")
                    outer.commands.append(line)
                    verb, _, rest = line.partition(" ")
                    args = shlex.split(rest)
                    if verb == "listplaylists":
                        reply = "".join(f"playlist: {n}\n" for n in outer.playlists)
                    elif verb == "search":
                        album = args[1] if len(args) > 1 else ""
                        reply = "".join(f"file: {a}/{album}/0{n}.flac\nTitle: {t}\nArtist: {a}\nAlbum: {album}\nTrack: {n}\n"
                                        for (a, b), titles in LIBRARY.items() if b == album for n, t in enumerate(titles, 1))
                    elif verb == "playlistadd":
                        adds += 1
                        if adds == 2:
                            self.wfile.write(b"ACK [50@0] {playlistadd} No such song\n")
                            continue
                        outer.playlists.setdefault(args[0], []).append(args[1])
                        reply = ""
                    elif verb == "rm":
                        outer.playlists.pop(args[0], None)
                        reply = ""
                    elif verb == "rename":
                        outer.playlists[args[1]] = outer.playlists.pop(args[0])
                        reply = ""
                    else:
                        reply = ""
                    self.wfile.write((reply + "OK\n").encode())

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def port(self) -> int:
        return self.server.server_address[1]


def test_a_song_mpd_refuses_midway_leaves_the_playlist_from_before(archive):
    """The new playlist is made under a name of its own, then put in the
    old one's place: refused midway, the one from before is untouched and
    the half-made one removed (the probe found the old one deleted first)."""
    mpd = RefusingMPD()
    try:
        refused = playlist(archive, f"127.0.0.1:{mpd.port}", "", "mpd")
    finally:
        mpd.server.shutdown()
    assert refused.returncode == 3 and "No such song" in refused.stderr, refused.stderr
    assert mpd.playlists == {NAME: ["old/01.flac"]}, mpd.playlists
    assert f'rm "{NAME}"' not in mpd.commands, mpd.commands
