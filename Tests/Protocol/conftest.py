"""What the protocol tests share: `vinylogue serve --demo` started against a
local fake Last.fm on free ports with a fresh data directory, over plain
HTTP (`server`) or over HTTPS with a throwaway certificate authority made
with openssl (`tls_server`), and the few things every test does with it
(make a listen token on the settings page as a person would, read the chart
JSON). Nothing here reaches the internet: Last.fm is the local fake, and the
clients are pointed at 127.0.0.1. The demo's household list has `demo` as
"me", so the household's token submits for `demo`.
"""

from __future__ import annotations

import json
import os
import re
import signal
import ssl
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from datetime import datetime, timezone
from pathlib import Path

import pytest

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
        """An instant an hour after a midnight (UTC) that is already past, and that day: the chart
        week containing the day's midnight also contains the instant (weeks change on Sunday at noon)."""
        now = int(time.time())
        instant = now // 86400 * 86400 + 3600
        if instant > now - 120:
            instant -= 86400
        return instant, datetime.fromtimestamp(instant, timezone.utc).strftime("%Y-%m-%d")


def throwaway_authority(directory: Path) -> tuple[Path, Path, Path]:
    """A certificate authority and a certificate for 127.0.0.1 signed by it,
    valid for a day (the CA file, the certificate, its key)."""
    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=directory, check=True, capture_output=True)

    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
            "-keyout", "ca.key", "-out", "ca.pem", "-subj", "/CN=Vinylogue protocol tests CA",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1")
    (directory / "server.ext").write_text("basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n"
                                          "extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n"
                                          "subjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "1",
            "-extfile", "server.ext", "-out", "server.pem")
    return directory / "ca.pem", directory / "server.pem", directory / "server.key"


def serve(tmp_path: Path, tls: bool):
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
        for name in ("LASTFM_API_SECRET", "VINYLOGUE_TLS_CERTIFICATE", "VINYLOGUE_TLS_KEY", "VINYLOGUE_PUBLIC_URL"):
            env.pop(name, None)
        args = [str(BUILD / "vinylogue"), "serve", "--demo", "--host", "127.0.0.1", "--port", "0", "--data-dir", str(tmp_path / "data")]
        ca_file = None
        if tls:
            (tmp_path / "tls").mkdir()
            ca_file, certificate, key = throwaway_authority(tmp_path / "tls")
            args += ["--tls-certificate", str(certificate), "--tls-key", str(key)]
        app = Process(args, "Vinylogue is serving at ", env, tmp_path)
        started.append(app)
        assert app.url.startswith("https://" if tls else "http://"), app.url
        yield Vinylogue(app.url, ca_file, app.process.pid)
    finally:
        for process in reversed(started):
            process.stop()


@pytest.fixture
def server(tmp_path):
    """`vinylogue serve --demo` over plain HTTP against a local fake Last.fm, in UTC."""
    yield from serve(tmp_path, tls=False)


@pytest.fixture
def tls_server(tmp_path):
    """The same, over HTTPS (`serve --tls-certificate --tls-key`) with a throwaway CA."""
    yield from serve(tmp_path, tls=True)
