"""The real Last.fm client for Python (`pylast` from PyPI) against
Vinylogue's Last.fm-compatible API (`/2.0/`) over HTTPS, with only its
server address changed.

pylast speaks only HTTPS, and verifies certificates with its module-level
`pylast.SSL_CONTEXT` (an `ssl.create_default_context()` handed to httpx as
`verify=`), so the test serves with `serve --tls-certificate --tls-key` and
a throwaway certificate authority (the `tls_server` fixture in conftest.py)
and gives pylast a context that trusts that authority. It signs in the way
pylast always does, `auth.getMobileSession` with `username` (in the address)
and `authToken = md5(username + md5(password))`, where the password is the
listen token made on the settings page; then scrobbles a batch and says
what is playing now, and reads the chart JSON of that week.
"""

from __future__ import annotations

import ssl
import urllib.error
import urllib.request
from urllib.parse import urlsplit

import pylast
import pytest


def network_for(server, monkeypatch) -> pylast.LastFMNetwork:
    """A Last.fm network whose web service is the test server, trusting its CA."""
    monkeypatch.setattr(pylast, "SSL_CONTEXT", ssl.create_default_context(cafile=str(server.ca_file)))
    # Any key and secret: the server accepts every api_key and cannot check api_sig.
    network = pylast.LastFMNetwork(api_key="a-player-key", api_secret="a-player-secret")
    network.ws_server = (urlsplit(server.url).netloc, "/2.0/")
    return network


def test_pylast_signs_in_scrobbles_a_batch_and_now_playing(tls_server, monkeypatch):
    network = network_for(tls_server, monkeypatch)
    token = tls_server.make_token()
    network.session_key = pylast.SessionKeyGenerator(network).get_session_key("demo", pylast.md5(token))
    assert len(network.session_key) == 32

    instant, day = tls_server.a_recent_hour()
    network.scrobble_many([
        {"artist": "Pylast Band", "title": f"Song {i}", "timestamp": instant + i * 240, "album": "Pylast Album",
         "album_artist": "Pylast Band", "duration": 200, "mbid": "c4b8a2e1-1b0b-4b5c-9d0a-2f9f6a1d7e21"}
        for i in range(5)
    ])
    network.scrobble(artist="Pylast Band", title="Single", timestamp=instant + 2000, album="Pylast Single")
    network.update_now_playing(artist="Now Playing Band", title="Still Playing", album="Unfinished", duration=180)

    albums = {entry["name"]: entry for entry in tls_server.chart(day)["entries"]}
    assert albums["Pylast Album"]["plays"] == 5
    assert albums["Pylast Album"]["artist"] == "Pylast Band"
    assert albums["Pylast Single"]["plays"] == 1
    assert "Unfinished" not in albums, "playing now is not a listen"
    tracks = {entry["name"] for entry in tls_server.chart(day, kind="track")["entries"]}
    assert {f"Song {i}" for i in range(5)} <= tracks


def test_pylast_is_refused_with_lastfms_codes(tls_server, monkeypatch):
    network = network_for(tls_server, monkeypatch)
    old = tls_server.make_token()
    generator = pylast.SessionKeyGenerator(network)
    with pytest.raises(pylast.WSError) as wrong:
        generator.get_session_key("demo", pylast.md5("not the token"))
    assert wrong.value.status == "4"
    with pytest.raises(pylast.WSError) as someone_else:
        generator.get_session_key("someone-else", pylast.md5(old))
    assert someone_else.value.status == "4"

    network.session_key = generator.get_session_key("demo", pylast.md5(old))
    tls_server.make_token()  # a new token ends the sessions made with the old one
    instant, _ = tls_server.a_recent_hour()
    with pytest.raises(pylast.WSError) as ended:
        network.scrobble(artist="A", title="T", timestamp=instant)
    assert ended.value.status == "9"


def test_plain_http_is_not_what_pylast_speaks(tls_server):
    """The TLS port answers only TLS: a plain-HTTP request gets no answer at
    all. The server ends the connection without a byte (the client sees the
    end of the stream, `http.client.RemoteDisconnected`, or a reset when its
    request was still unread); not a page, not an HTTP error, not silence
    until the timeout."""
    plain = tls_server.url.replace("https://", "http://")
    with pytest.raises((ConnectionResetError, BrokenPipeError, urllib.error.URLError)) as ended:
        urllib.request.urlopen(plain + "/healthz", timeout=5).read()
    error = ended.value
    # urlopen wraps an error met while sending the request in URLError.
    cause = error.reason if isinstance(error, urllib.error.URLError) and not isinstance(error, urllib.error.HTTPError) else error
    # RemoteDisconnected ("closed without response") is a ConnectionResetError.
    assert isinstance(cause, (ConnectionResetError, BrokenPipeError)), \
        f"a plain-HTTP request to the TLS port should be cut off without an answer, not: {error!r}"
