"""What the protocol tests share: `vinylogue serve --demo` started against a
local fake Last.fm on free ports with a fresh data directory, over plain
HTTP (`server`) or over HTTPS with a throwaway certificate authority made
with openssl (`tls_server`; `throwaway_authority` in
Tests/Python/certificates.py), and the few things every test does with it
(make a listen token on the settings page as a person would, read the chart
JSON). The servers are started and stopped by `ServerProcess` in
Tests/Python/launcher.py, shared with the browser tests. Nothing here
reaches the internet: Last.fm is the local fake, and the clients are
pointed at 127.0.0.1. The demo's household list has `demo` as "me", so the
household's token submits for `demo`.
"""

from __future__ import annotations

import json
import os
import re
import ssl
import sys
import time
import urllib.parse
import urllib.request
from datetime import datetime, timezone
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "Python"))
from certificates import throwaway_authority  # noqa: E402  (Tests/Python, shared with the test mail server)
from launcher import ServerProcess, binary  # noqa: E402  (Tests/Python, shared with the browser tests)


class Vinylogue:
    """A running `vinylogue serve --demo`: its base URL and, over HTTPS, the
    CA file (and an SSL context trusting it) a client must be told about."""

    def __init__(self, url: str, ca_file: Path | None, pid: int):
        self.url = url
        self.ca_file = ca_file
        self.pid = pid
        self.ssl_context = ssl.create_default_context(cafile=str(ca_file)) if ca_file else None

    def open(self, request, timeout: float = 10):
        return urllib.request.urlopen(request, timeout=timeout, context=self.ssl_context)

    def make_token(self) -> str:
        """Opens /settings for a CSRF cookie, presses "Make a new token", and reads the token the page shows once."""
        with self.open(self.url + "/settings") as page:
            cookie = page.headers["Set-Cookie"].split(";", 1)[0]
        csrf = cookie.split("=", 1)[1]
        form = urllib.parse.urlencode({"csrf": csrf}).encode()
        request = urllib.request.Request(self.url + "/settings/listen-token", data=form, method="POST",
                                         headers={"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"})
        with self.open(request) as page:
            body = page.read().decode()
        match = re.search(r'<code class="listen-token">([0-9a-f]{64})</code>', body)
        assert match, body[-2000:]
        return match.group(1)

    def chart(self, day: str, kind: str = "album", user: str = "demo") -> dict:
        with self.open(f"{self.url}/api/u/{user}/chart?week={day}&kind={kind}") as r:
            return json.load(r)

    @staticmethod
    def a_recent_hour() -> tuple[int, str]:
        """13:00 UTC of the latest day whose following hour is all past, and that day: `?week=DAY`
        means the day at noon, and weeks change on Sunday at noon, so the week of the day's noon
        holds the instant and the tests' listens up to an hour after it, on every day of the week.
        (It was 01:00: on a Sunday the day's noon was in the next week, and every chart read said
        "no charts after" the week before.) From Sunday noon to 14:00 UTC the day is Saturday, in
        the week that has just ended, which the demo has filled with its own plays: a test looks
        for its own listens in a chart, never for a chart of nothing else."""
        now = int(time.time())
        instant = now // 86400 * 86400 + 13 * 3600
        if instant > now - 3600:
            instant -= 86400
        return instant, datetime.fromtimestamp(instant, timezone.utc).strftime("%Y-%m-%d")


class Fakes:
    """A local fake Last.fm and fake ListenBrainz, and the environment that points `vinylogue` at them."""

    def __init__(self, tmp_path: Path, started: list[ServerProcess]):
        self.lastfm = ServerProcess([binary("fake-lastfm"), "--port", "0", "--host", "127.0.0.1"], "fake Last.fm listening at ",
                                    tmp_path)
        started.append(self.lastfm)
        self.listenbrainz = ServerProcess([binary("fake-listenbrainz"), "--port", "0", "--host", "127.0.0.1"],
                                          "fake ListenBrainz listening at ", tmp_path)
        started.append(self.listenbrainz)

    def environment(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = dict(os.environ)
        env.update({"LISTENBRAINZ_API_URL": self.listenbrainz.url, "LASTFM_API_URL": self.lastfm.url + "/2.0/",
                    "LASTFM_IMAGE_URL": self.lastfm.url + "/i/u/", "LASTFM_API_KEY": "test-key",
                    "TZ": "UTC", "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"})
        for name in ("LASTFM_API_SECRET", "VINYLOGUE_TLS_CERTIFICATE", "VINYLOGUE_TLS_KEY", "VINYLOGUE_PUBLIC_URL",
                     "VINYLOGUE_SMTP_URL", "VINYLOGUE_MAIL_FROM", "VINYLOGUE_SMTP_CA_FILE", "VINYLOGUE_TEST_NOW", "DATABASE_URL"):
            env.pop(name, None)
        env.update(extra or {})
        return env


def start_vinylogue(tmp_path: Path, fakes: Fakes, data_dir: Path, extra_env: dict[str, str] | None = None,
                    extra_args: list[str] | None = None) -> ServerProcess:
    """`vinylogue serve --demo` on a free port, its data in `data_dir`, pointed at `fakes`."""
    args = [binary("vinylogue"), "serve", "--demo", "--host", "127.0.0.1", "--port", "0", "--data-dir", data_dir] + (extra_args or [])
    return ServerProcess(args, "Vinylogue is serving at ", tmp_path, env=fakes.environment(extra_env))


def serve(tmp_path: Path, tls: bool):
    started: list[ServerProcess] = []
    try:
        fakes = Fakes(tmp_path, started)
        extra_args: list[str | Path] = []
        ca_file = None
        if tls:
            (tmp_path / "tls").mkdir()
            ca_file, certificate, key = throwaway_authority(tmp_path / "tls")
            extra_args += ["--tls-certificate", certificate, "--tls-key", key]
        app = start_vinylogue(tmp_path, fakes, tmp_path / "data", extra_args=extra_args)
        started.append(app)
        assert app.url.startswith("https://" if tls else "http://"), app.url
        yield Vinylogue(app.url, ca_file, app.pid)
    finally:
        for process in reversed(started):
            process.stop()


@pytest.fixture(scope="module")
def module_server(tmp_path_factory):
    """One `vinylogue serve --demo` over plain HTTP for a whole module (the fuzzing's many calls)."""
    yield from serve(tmp_path_factory.mktemp("module-server"), tls=False)


@pytest.fixture
def server(tmp_path):
    """`vinylogue serve --demo` over plain HTTP against a local fake Last.fm, in UTC."""
    yield from serve(tmp_path, tls=False)


@pytest.fixture
def tls_server(tmp_path):
    """The same, over HTTPS (`serve --tls-certificate --tls-key`) with a throwaway CA."""
    yield from serve(tmp_path, tls=True)
