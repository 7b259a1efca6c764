"""The real ListenBrainz client (`liblistenbrainz` from PyPI) against
Vinylogue's ListenBrainz-compatible API (`/1/`), with only its server
address changed.

Each test starts its own fake Last.fm and `vinylogue serve --demo` on free
ports with a fresh data directory (the demo's household list has `demo` as
"me", so the household's token submits for `demo`), makes a token on the
settings page as a person would, and then reads the chart JSON. Nothing
here reaches the internet: Last.fm is the local fake, and the client is
pointed at 127.0.0.1.
"""

from __future__ import annotations

import html
import json
import os
import re
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from datetime import datetime, timezone
from pathlib import Path

import liblistenbrainz
import pytest
from liblistenbrainz import errors

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("VINYLOGUE_BUILD_DIR", ROOT / ".build" / "debug"))


class Process:
    """A server started on port 0 that prints `marker` and its URL once it listens."""

    def __init__(self, args: list[str], marker: str, env: dict, workdir: Path):
        self.log_path = workdir / f"{Path(args[0]).name}-{time.monotonic_ns()}.log"
        self.process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                        env=env, cwd=workdir, start_new_session=True)
        announced: list[str] = []
        ready = threading.Event()

        def copy_output() -> None:
            with open(self.log_path, "wb") as log:
                for line in self.process.stdout:
                    log.write(line)
                    log.flush()
                    text = line.decode(errors="replace")
                    if not announced and marker in text:
                        announced.append(text.split(marker, 1)[1].split()[0])
                        ready.set()
            ready.set()

        threading.Thread(target=copy_output, daemon=True).start()
        if not (ready.wait(timeout=30) and announced):
            self.stop()
            raise RuntimeError(f"{args[0]} did not say it serves:\n{self.log()}")
        self.url = announced[0].removesuffix("/").removesuffix("/2.0")

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def stop(self) -> None:
        if self.process.poll() is not None:
            return
        # Its own process group (start_new_session): this ends only what the test started.
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=5)


@pytest.fixture
def server(tmp_path):
    """`vinylogue serve --demo` against a local fake Last.fm, in UTC."""
    for binary in ("vinylogue", "fake-lastfm"):
        if not (BUILD / binary).is_file():
            pytest.fail(f"{BUILD / binary} is missing: run `swift build` first", pytrace=False)
    started: list[Process] = []
    try:
        fake = Process([str(BUILD / "fake-lastfm"), "--port", "0", "--host", "127.0.0.1"], "fake Last.fm listening at ",
                       dict(os.environ), tmp_path)
        started.append(fake)
        env = dict(os.environ)
        env.update({"LASTFM_API_URL": fake.url + "/2.0/", "LASTFM_IMAGE_URL": fake.url + "/i/u/", "LASTFM_API_KEY": "test-key",
                    "TZ": "UTC", "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"})
        env.pop("LASTFM_API_SECRET", None)
        data = tmp_path / "data"
        app = Process([str(BUILD / "vinylogue"), "serve", "--demo", "--host", "127.0.0.1", "--port", "0", "--data-dir", str(data)],
                      "Vinylogue is serving at ", env, tmp_path)
        started.append(app)
        yield app.url
    finally:
        for process in reversed(started):
            process.stop()


def make_token(base: str) -> str:
    """Opens /settings for a CSRF cookie, presses "Make a new token", and reads the token the page shows once."""
    with urllib.request.urlopen(base + "/settings", timeout=10) as page:
        cookie = page.headers["Set-Cookie"].split(";", 1)[0]
    csrf = cookie.split("=", 1)[1]
    form = urllib.parse.urlencode({"csrf": csrf}).encode()
    request = urllib.request.Request(base + "/settings/listen-token", data=form, method="POST",
                                     headers={"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"})
    with urllib.request.urlopen(request, timeout=10) as page:
        body = page.read().decode()
    match = re.search(r'<code class="listen-token">([0-9a-f]{64})</code>', body)
    assert match, body[-2000:]
    return match.group(1)


def chart(base: str, day: str, kind: str = "album") -> dict:
    with urllib.request.urlopen(f"{base}/api/u/demo/chart?week={day}&kind={kind}", timeout=10) as r:
        return json.load(r)


def a_recent_hour() -> tuple[int, str]:
    """An instant an hour after a midnight (UTC) that is already past, and that day: the chart
    week containing the day's midnight also contains the instant (weeks change on Sunday at noon)."""
    now = int(time.time())
    instant = now // 86400 * 86400 + 3600
    if instant > now - 120:
        instant -= 86400
    return instant, datetime.fromtimestamp(instant, timezone.utc).strftime("%Y-%m-%d")


def test_liblistenbrainz_submits_single_playing_now_and_import(server):
    client = liblistenbrainz.ListenBrainz(api_base_url=server)
    token = make_token(server)
    client.set_auth_token(token)  # checks it with GET /1/validate-token

    instant, day = a_recent_hour()
    single = liblistenbrainz.Listen(track_name="Opening", artist_name="Protocol Band", release_name="Protocol Single",
                                    listened_at=instant, recording_mbid="c4b8a2e1-1b0b-4b5c-9d0a-2f9f6a1d7e21",
                                    additional_info={"duration_ms": 201000, "listening_from": "pytest"})
    assert client.submit_single_listen(single) == {"status": "ok"}

    playing = liblistenbrainz.Listen(track_name="Still Playing", artist_name="Now Playing Band", release_name="Unfinished")
    assert client.submit_playing_now(playing) == {"status": "ok"}

    batch = [liblistenbrainz.Listen(track_name=f"Track {i}", artist_name="Protocol Band", release_name="Protocol Import",
                                    listened_at=instant + 60 + i * 240, release_mbid="9e53a5ba-8d36-3d2b-a6ce-0b4a5bb08d8f")
             for i in range(7)]
    assert client.submit_multiple_listens(batch) == {"status": "ok"}
    # The same import again is only duplicates.
    assert client.submit_multiple_listens(batch) == {"status": "ok"}

    albums = {entry["name"]: entry for entry in chart(server, day)["entries"]}
    assert albums["Protocol Import"]["plays"] == 7
    assert albums["Protocol Import"]["artist"] == "Protocol Band"
    assert albums["Protocol Import"].get("mbid") == "9e53a5ba-8d36-3d2b-a6ce-0b4a5bb08d8f"
    assert albums["Protocol Single"]["plays"] == 1
    assert "Unfinished" not in albums, "playing now is not a listen"
    artists = {entry["artist"]: entry for entry in chart(server, day, kind="artist")["entries"]}
    assert artists["Protocol Band"]["plays"] == 8
    assert "Now Playing Band" not in artists


def test_liblistenbrainz_sees_wrong_tokens_and_refused_listens(server):
    client = liblistenbrainz.ListenBrainz(api_base_url=server)
    with pytest.raises(errors.InvalidAuthTokenException):
        client.set_auth_token("ab" * 32)

    old = make_token(server)
    new = make_token(server)
    with pytest.raises(errors.InvalidAuthTokenException):
        client.set_auth_token(old)
    client.set_auth_token(old, check_validity=False)
    instant, _ = a_recent_hour()
    listen = liblistenbrainz.Listen(track_name="T", artist_name="A", listened_at=instant)
    with pytest.raises(errors.ListenBrainzAPIException) as refused:
        client.submit_single_listen(listen)
    assert refused.value.status_code == 401

    client.set_auth_token(new)
    future = liblistenbrainz.Listen(track_name="T", artist_name="A", listened_at=int(time.time()) + 86400)
    with pytest.raises(errors.ListenBrainzAPIException) as bad:
        client.submit_single_listen(future)
    assert bad.value.status_code == 400
    assert "future" in bad.value.message
