"""The real Last.fm client for Python (`pylast` from PyPI) reading an archive
kept here through Last.fm's read methods at `/2.0/`, with only its server
address changed: the profile, the weekly chart list and charts, the recent
tracks with what is playing now first, the friends list, an album's details
with the person's own play count, and Last.fm's error for a name nobody
archived. pylast reads Last.fm's XML; one request checks the JSON shape.
"""

from __future__ import annotations

import json
import urllib.error
from datetime import datetime, timezone
import urllib.request

import pylast
import pytest

from test_lastfm_scrobble import network_for


def test_pylast_reads_the_archive_as_it_reads_lastfm(tls_server, monkeypatch):
    network = network_for(tls_server, monkeypatch)
    demo = network.get_user("demo")

    assert demo.get_playcount() > 1000
    registered = demo.get_unixtime_registered()
    assert 1_000_000_000 < int(registered) < 2_000_000_000

    weeks = demo.get_weekly_chart_dates()
    assert len(weeks) > 500
    week_from, week_to = weeks[-60]
    assert int(week_to) - int(week_from) == 7 * 86400
    albums = demo.get_weekly_album_charts(week_from, week_to)
    assert albums, "a week of the demo's history has albums"
    assert all(isinstance(item.item, pylast.Album) and item.weight > 0 for item in albums)
    assert [item.weight for item in albums] == sorted((item.weight for item in albums), reverse=True)
    # Equal to the archive's own chart of that week, as the chart JSON gives it.
    day = datetime.fromtimestamp(int(week_from) + 86400, timezone.utc).strftime("%Y-%m-%d")
    own = tls_server.chart(day)
    assert own["week"] == {"from": int(week_from), "to": int(week_to)}
    assert [(item.item.artist.name, item.item.title, int(item.weight)) for item in albums] \
        == [(entry["artist"], entry["name"], entry["plays"]) for entry in own["entries"]]
    # The chart list runs in whole weeks, Sunday noon to Sunday noon, to the week of the last listen.
    assert all(int(to) - int(start) == 7 * 86400 and int(start) % 604800 == 302400 for start, to in weeks)
    assert all(int(weeks[i][1]) == int(weeks[i + 1][0]) for i in range(len(weeks) - 1))
    artists = demo.get_weekly_artist_charts(week_from, week_to)
    assert {item.item.name for item in artists} >= {item.item.artist.name for item in albums}
    tracks = demo.get_weekly_track_charts(week_from, week_to)
    assert sum(int(item.weight) for item in tracks) == sum(int(item.weight) for item in albums)

    # Scrobbled now, read back newest first; what plays now comes first.
    token = tls_server.make_token()
    network.session_key = pylast.SessionKeyGenerator(network).get_session_key("demo", pylast.md5(token))
    instant, _ = tls_server.a_recent_hour()
    network.scrobble_many([{"artist": "Reader Band", "title": f"Read {i}", "timestamp": instant + i * 60, "album": "Read Back"}
                           for i in range(3)])
    network.update_now_playing(artist="Reader Band", title="Now Reading", album="Read Back")
    recent = demo.get_recent_tracks(limit=3, time_from=instant, time_to=instant + 600)
    assert [played.track.title for played in recent] == ["Read 2", "Read 1", "Read 0"]
    assert [int(played.timestamp) for played in recent] == [instant + 120, instant + 60, instant]
    assert recent[0].album == "Read Back"
    playing = demo.get_now_playing()
    assert playing is not None and playing.title == "Now Reading" and playing.artist.name == "Reader Band"

    # The household's list, less its "me".
    friends = demo.get_friends(limit=50)
    assert [friend.name for friend in friends] == ["theo", "mara", "felix", "june"]

    album = pylast.Album("Reader Band", "Read Back", network, username="demo")
    assert album.get_userplaycount() == 3

    with pytest.raises(pylast.WSError) as unknown:
        network.get_user("nobody-archived-here").get_playcount()
    assert unknown.value.status == "6"


def test_the_json_shape_and_lastfms_errors(tls_server):
    def call(query: str) -> tuple[int, dict]:
        try:
            with tls_server.open(f"{tls_server.url}/2.0/?{query}") as answer:
                return answer.status, json.load(answer)
        except urllib.error.HTTPError as error:
            return error.code, json.load(error)

    status, body = call("method=user.getweeklychartlist&user=demo&api_key=k&format=json")
    assert status == 200
    chart = body["weeklychartlist"]["chart"][0]
    assert set(chart) == {"#text", "from", "to"} and body["weeklychartlist"]["@attr"]["user"] == "demo"
    week = body["weeklychartlist"]["chart"][-60]
    status, body = call(f"method=user.getweeklyalbumchart&user=demo&api_key=k&format=json&from={week['from']}&to={week['to']}")
    first = body["weeklyalbumchart"]["album"][0]
    assert set(first) >= {"artist", "@attr", "mbid", "playcount", "name", "url"} and first["@attr"]["rank"] == "1"
    assert set(first["artist"]) == {"mbid", "#text"} and first["playcount"].isdigit()

    assert call("method=user.getinfo&user=demo&format=json") == (403, {"error": 10, "message": "Invalid API key - You must be granted a valid key by last.fm: Send an api_key, as Last.fm asks (any value is accepted here)."})
    status, body = call("method=user.getinfo&user=nobody-archived-here&api_key=k&format=json")
    assert (status, body) == (404, {"error": 6, "message": "User not found"})
    status, body = call("method=user.getlovedtracks&user=demo&api_key=k&format=json")
    assert status == 400 and body["error"] == 3
