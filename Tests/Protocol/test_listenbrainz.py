"""The real ListenBrainz client (`liblistenbrainz` from PyPI) against
Vinylogue's ListenBrainz-compatible API (`/1/`), with only its server
address changed.

Each test gets its own `vinylogue serve --demo` (the `server` fixture in
conftest.py), makes a token on the settings page as a person would, and
then reads the chart JSON.
"""

from __future__ import annotations

import time

import liblistenbrainz
import pytest
from liblistenbrainz import errors


def test_liblistenbrainz_submits_single_playing_now_and_import(server):
    client = liblistenbrainz.ListenBrainz(api_base_url=server.url)
    token = server.make_token()
    client.set_auth_token(token)  # checks it with GET /1/validate-token

    instant, day = server.a_recent_hour()
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

    albums = {entry["name"]: entry for entry in server.chart(day)["entries"]}
    assert albums["Protocol Import"]["plays"] == 7
    assert albums["Protocol Import"]["artist"] == "Protocol Band"
    assert albums["Protocol Import"].get("mbid") == "9e53a5ba-8d36-3d2b-a6ce-0b4a5bb08d8f"
    assert albums["Protocol Single"]["plays"] == 1
    assert "Unfinished" not in albums, "playing now is not a listen"
    artists = {entry["artist"]: entry for entry in server.chart(day, kind="artist")["entries"]}
    assert artists["Protocol Band"]["plays"] == 8
    assert "Now Playing Band" not in artists


def test_liblistenbrainz_sees_wrong_tokens_and_refused_listens(server):
    client = liblistenbrainz.ListenBrainz(api_base_url=server.url)
    with pytest.raises(errors.InvalidAuthTokenException):
        client.set_auth_token("ab" * 32)

    old = server.make_token()
    new = server.make_token()
    with pytest.raises(errors.InvalidAuthTokenException):
        client.set_auth_token(old)
    client.set_auth_token(old, check_validity=False)
    instant, _ = server.a_recent_hour()
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
