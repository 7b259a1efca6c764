"""A 200 for a listen means it is on disk: seen from outside the process.

`strace` follows every thread of a running `vinylogue serve --demo` while
liblistenbrainz sends single listens one after another, each waiting for
its answer. Every acknowledged submission must have been followed by a
sync call (fsync or fdatasync) before its 200: SQLite in WAL mode with
GRDB's default `synchronous = NORMAL` made none at all, so a power cut
could lose listens the player had been told were stored (issue 29).
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import threading

import liblistenbrainz
import pytest

LISTENS = 6


def test_every_acknowledged_listen_is_synced_to_disk_before_its_answer(server, tmp_path):
    strace = shutil.which("strace")
    if strace is None:
        pytest.fail("strace is missing: apt-get install -y strace (scripts/protocol-tests installs it)", pytrace=False)
    client = liblistenbrainz.ListenBrainz(api_base_url=server.url)
    client.set_auth_token(server.make_token())
    instant, day = server.a_recent_hour()

    trace = tmp_path / "syncs.trace"
    tracer = subprocess.Popen([strace, "-f", "-e", "trace=fsync,fdatasync", "-o", str(trace), "-p", str(server.pid)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    attached = threading.Event()
    said: list[str] = []

    def read_strace() -> None:
        for line in tracer.stderr:
            said.append(line)
            if "attached" in line:
                attached.set()
        attached.set()

    threading.Thread(target=read_strace, daemon=True).start()
    assert attached.wait(timeout=10) and tracer.poll() is None, "strace could not attach: " + "".join(said)
    try:
        for i in range(LISTENS):
            listen = liblistenbrainz.Listen(track_name=f"Durable {i}", artist_name="Disk Band", release_name="On Disk",
                                            listened_at=instant + i * 300)
            assert client.submit_single_listen(listen) == {"status": "ok"}
    finally:
        tracer.send_signal(signal.SIGINT)
        tracer.wait(timeout=10)

    calls = [line for line in trace.read_text().splitlines() if "fsync(" in line or "fdatasync(" in line]
    print(f"{len(calls)} sync calls for {LISTENS} acknowledged listens")
    assert len(calls) >= LISTENS, f"{len(calls)} sync calls for {LISTENS} acknowledged listens:\n" + "\n".join(calls)
    albums = {entry["name"]: entry for entry in server.chart(day)["entries"]}
    assert albums["On Disk"]["plays"] == LISTENS
