"""mpdscribble (Debian's) against Vinylogue's Audioscrobbler 1.2 support,
configured with only `url`, `username` and `password` (the listen token),
next to a real mpd (Debian's) playing a generated file (sox) into a null
output. mpdscribble hand-shakes at the server's root address, submits the
plays waiting in its journal (what it keeps of plays it could not send
yet), and sends "now playing" when mpd starts the file.

Plays are given through the journal because mpdscribble counts real
playing time ("ignore seeking" in its NEWS): a play is submitted only
after half of a track of at least 30 s has really been heard.
"""

from __future__ import annotations

import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Mpd:
    """A line of mpd's own protocol at a time."""

    def __init__(self, port: int):
        deadline = time.monotonic() + 10
        while True:
            try:
                self.socket = socket.create_connection(("127.0.0.1", port), timeout=10)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        self.file = self.socket.makefile("rw")
        assert self.file.readline().startswith("OK MPD")

    def command(self, line: str) -> list[str]:
        self.file.write(line + "\n")
        self.file.flush()
        answer = []
        while True:
            reply = self.file.readline().strip()
            if reply == "OK":
                return answer
            assert not reply.startswith("ACK"), f"{line}: {reply}"
            answer.append(reply)


def wait_for(what: str, check, patience: float = 10) -> None:
    deadline = time.monotonic() + patience
    while not check():
        assert time.monotonic() < deadline, f"{what} did not happen within {patience} s"
        time.sleep(0.1)


def test_mpdscribble_submits_its_journal_and_now_playing(server, tmp_path: Path):
    token = server.make_token()
    music = tmp_path / "music"
    music.mkdir()
    subprocess.run(["sox", "-n", "-r", "8000", "-c", "1", "--comment", "ARTIST=Mpd Artist", "--add-comment", "TITLE=Sine Song",
                    "--add-comment", "ALBUM=Test Tones", str(music / "sine.flac"), "synth", "40", "sine", "440"], check=True)
    mpd_port = free_port()
    (tmp_path / "mpd.conf").write_text(f"""
music_directory "{music}"
db_file "{tmp_path / 'mpd.db'}"
state_file "{tmp_path / 'mpd.state'}"
bind_to_address "127.0.0.1"
port "{mpd_port}"
audio_output {{
    type "null"
    name "null"
}}
""")
    # Two plays mpdscribble could not send before (its journal's format).
    instant, day = server.a_recent_hour()
    (tmp_path / "journal").write_text("".join(
        f"a = Mpd Artist\nt = Journal {name}\nb = Test Tones\ni = {instant + offset}\nl = 200\no = P\n\n"
        for name, offset in [("One", 0), ("Two", 300)]))
    (tmp_path / "mpdscribble.conf").write_text(f"""
log = {tmp_path / 'mpdscribble.log'}
verbose = 3
host = 127.0.0.1
port = {mpd_port}
[vinylogue]
url = {server.url}/
username = demo
password = {token}
journal = {tmp_path / 'journal'}
""")
    mpd = subprocess.Popen(["mpd", "--no-daemon", "--stderr", str(tmp_path / "mpd.conf")],
                           stdout=subprocess.DEVNULL, stderr=open(tmp_path / "mpd.log", "w"))
    scribble = None
    try:
        player = Mpd(mpd_port)
        scribble = subprocess.Popen(["mpdscribble", "--no-daemon", "--conf", str(tmp_path / "mpdscribble.conf")],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def tracks() -> list[str]:
            """The player's tracks in the week's chart (on a Sunday afternoon the week is the one just
            ended, which holds the demo's own plays too)."""
            try:
                entries = server.chart(day, kind="track").get("entries", [])
                return [entry["name"] for entry in entries if entry.get("artist") == "Mpd Artist"]
            except urllib.error.HTTPError:  # no chart of that week yet
                return []
        wait_for("the journal's two plays in the chart", lambda: {"Journal One", "Journal Two"} <= set(tracks()))
        assert sorted(tracks()) == ["Journal One", "Journal Two"], tracks()
        log = (tmp_path / "mpdscribble.log").read_text()
        assert "session:" in log and "/audioscrobbler/submit" in log, log

        # mpd plays the file: mpdscribble says so, and the chart page shows it.
        player.command("update")
        wait_for("mpd's library to hold the file", lambda: any("sine.flac" in line for line in player.command("listall")))
        player.command("add sine.flac")
        player.command("play 0")

        def page() -> str:
            with server.open(server.url + "/u/demo") as answer:
                return answer.read().decode()
        wait_for("now playing on the chart page", lambda: "Sine Song" in page())
        assert "Mpd Artist" in page()
    finally:
        if scribble:
            scribble.terminate()
            scribble.wait(timeout=10)
        mpd.terminate()
        mpd.wait(timeout=10)
