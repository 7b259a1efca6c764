"""The weekly digest through a real mail server (aiosmtpd, Tests/Python/mail_server.py):
STARTTLS with a throwaway CA and AUTH, or implicit TLS; the confirmation link
from the received email; the digest parsed with Python's `email` package (its
text, links, inline covers and headers); the RFC 8058 one-click unsubscribe;
a refusing, slow or dropping server shown on Settings while pages answer; a
SIGKILL mid-send with nothing lost or doubled; and a fleet of two instances
on one PostgreSQL database sending each due digest once.

Every wait is on an event (a message arriving, held or discarded; a page
saying what happened) and lasts 10 s at the most.
"""

from __future__ import annotations

import html as htmllib
import os
import re
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from conftest import Fakes, start_vinylogue
from launcher import binary
from mail_server import MailServer, running_mail_server

SENDER = "vinylogue@example.test"
ADDRESS = "listener@example.org"
PATIENCE = 10.0


class NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


class Visitor:
    """A browser without JavaScript: keeps the CSRF cookie and posts forms with its token."""

    def __init__(self, url: str):
        self.url = url
        self.opener = urllib.request.build_opener(NoRedirects)
        self.cookie = ""
        self.csrf = ""

    def get(self, path: str) -> tuple[int, str]:
        request = urllib.request.Request(self.url + path, headers={"Cookie": self.cookie} if self.cookie else {})
        try:
            with self.opener.open(request, timeout=PATIENCE) as response:
                self._remember(response.headers.get("Set-Cookie"))
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    def post(self, path: str, fields: dict[str, str]) -> str:
        """Posts the form; returns where it redirects to."""
        if not self.csrf:
            self.get("/settings")
        body = urllib.parse.urlencode({**fields, "csrf": self.csrf}).encode()
        request = urllib.request.Request(self.url + path, data=body, method="POST",
                                         headers={"Cookie": self.cookie, "Content-Type": "application/x-www-form-urlencoded"})
        try:
            with self.opener.open(request, timeout=PATIENCE) as response:
                raise AssertionError(f"{path} answered {response.status} without a redirect: {response.read()[:500]!r}")
        except urllib.error.HTTPError as error:
            assert error.code == 303, (error.code, error.read()[:500])
            return error.headers["Location"]

    def settings_saying(self, *texts: str) -> str:
        """Settings, read again (every 0.1 s, 10 s at most) until it says all of `texts`: the outcome of a send is
        written just after the mail server answered."""
        deadline = time.monotonic() + PATIENCE
        while True:
            _, page = self.get("/settings")
            if all(text in page for text in texts):
                return page
            if time.monotonic() > deadline:
                section = page[page.find('id="digest"'):][:3000]
                raise AssertionError(f"Settings did not say {texts} within {PATIENCE:g} s; its digest section: {section}")
            time.sleep(0.1)

    def _remember(self, set_cookie: str | None) -> None:
        if set_cookie and set_cookie.startswith("vinylogue_csrf="):
            self.cookie = set_cookie.split(";", 1)[0]
            self.csrf = self.cookie.split("=", 1)[1]


def mail_environment(mail: MailServer) -> dict[str, str]:
    return {"VINYLOGUE_SMTP_URL": mail.url(), "VINYLOGUE_MAIL_FROM": SENDER, "VINYLOGUE_SMTP_CA_FILE": str(mail.ca_file)}


def text_of(message) -> str:
    return message.get_body(("plain",)).get_content()


def confirm(visitor: Visitor, mail: MailServer, count: int, app_url: str) -> None:
    """Opens the confirmation link of the `count`th email, as the person would, in a browser that has no cookie."""
    received = mail.wait_for(count)[count - 1]
    assert received.message["Subject"] == "Confirm your Vinylogue digest"
    link = re.search(r"(http://127\.0\.0\.1:\d+)(/digest/confirm\?token=[0-9a-f]{64})", text_of(received.message))
    assert link and link.group(1) == app_url, text_of(received.message)
    stranger = Visitor(app_url)
    status, page = stranger.get(link.group(2))
    assert status == 200 and "Confirm this address" in page, page[-1500:]
    request = urllib.request.Request(app_url + link.group(2), data=b"", method="POST")
    with urllib.request.urlopen(request, timeout=PATIENCE) as response:
        assert response.status == 200 and "Your weekly digest is on" in response.read().decode()


@pytest.fixture
def processes():
    started = []
    yield started
    for process in reversed(started):
        process.stop()


def test_a_digest_arrives_through_starttls_and_one_click_stops_it(tmp_path, processes):
    with running_mail_server(tmp_path) as mail:
        fakes = Fakes(tmp_path, processes)
        app = start_vinylogue(tmp_path, fakes, tmp_path / "data", mail_environment(mail))
        processes.append(app)
        visitor = Visitor(app.url)
        assert visitor.post("/settings", {"filter": "0", "timezone": "UTC"}) == "/settings?saved=1"
        saved = visitor.post("/settings/digest", {"action": "save", "address": ADDRESS, "weekday": "2", "hour": "8", "years": "3"})
        assert saved == "/settings?digest=confirm#digest"
        [confirmation] = mail.wait_for(1)
        # It came over TLS (the server refuses AUTH and MAIL without it), signed in as configured.
        assert confirmation.login == mail.user and mail.accepted_logins >= 1
        assert confirmation.sender == SENDER and confirmation.recipients == (ADDRESS,)
        assert "Vinylogue is sending a link" in visitor.get("/settings?digest=confirm")[1]
        visitor.settings_saying("Waiting for you to confirm " + ADDRESS)
        confirm(visitor, mail, 1, app.url)
        assert "On: the next one goes to " + ADDRESS in visitor.settings_saying("Confirmation link ·")

        assert visitor.post("/settings/digest", {"action": "now"}) == "/settings?digest=now#digest"
        digest = mail.wait_for(2)[1].message
        assert digest["Subject"].startswith("This week a year ago: ")
        assert digest["From"] == f"Vinylogue <{SENDER}>" and digest["To"] == ADDRESS
        assert digest["Date"] and re.fullmatch(r"<vinylogue\.now\.\d+\.1@example\.test>", digest["Message-ID"])
        assert digest["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
        unsubscribe = digest["List-Unsubscribe"].strip("<>")
        assert re.fullmatch(re.escape(app.url) + r"/digest/unsubscribe\?token=[0-9a-f]{64}", unsubscribe)
        assert digest.get_content_type() == "multipart/alternative"

        plain = text_of(digest)
        assert plain.startswith("This week, years ago\nWhat demo was listening to")
        assert "A year ago · Week" in plain and "Unsubscribe: " + unsubscribe in plain
        for url in re.findall(r"http://\S+", plain):
            assert url.startswith(app.url)
        html = digest.get_body(("html",)).get_content()
        assert "<script" not in html.lower() and "javascript:" not in html.lower()
        # The covers are in the email, each one the HTML shows.
        cids = re.findall(r'src="cid:([^"]+)"', html)
        images = [part for part in digest.walk() if part.get_content_maintype() == "image"]
        assert cids and {part["Content-ID"].strip("<>") for part in images} == set(cids)
        for part in images:
            data = part.get_content()
            assert data.startswith(b"\x89PNG") or data.startswith(b"\xff\xd8"), part["Content-Type"]
        # Every link leads to a page of this server that opens.
        links = {htmllib.unescape(link) for link in re.findall(r'href="([^"]+)"', html)}
        assert any("/album/" in link for link in links) and any("/week/" in link for link in links)
        for link in sorted(links):
            assert link.startswith(app.url), link
            status, _ = Visitor(app.url).get(link[len(app.url):].split("#")[0])
            assert status == 200, link

        # The same from the command line, on the same data while the server runs (links on the public address).
        command = subprocess.run([str(binary("vinylogue")), "digest", "send", "demo", "--demo", "--data-dir", str(tmp_path / "data")],
                                 env=fakes.environment({**mail_environment(mail), "VINYLOGUE_PUBLIC_URL": app.url}),
                                 capture_output=True, text=True, timeout=PATIENCE)
        assert command.returncode == 0, command.stderr
        assert command.stdout == f"Sent demo's digest of this week to {ADDRESS}.\n"
        by_command = mail.wait_for(3)[2].message
        assert by_command["Subject"] == digest["Subject"] and app.url + "/u/demo/week/" in text_of(by_command)
        nobody = subprocess.run([str(binary("vinylogue")), "digest", "send", "theo", "--demo", "--data-dir", str(tmp_path / "data")],
                                env=fakes.environment({**mail_environment(mail), "VINYLOGUE_PUBLIC_URL": app.url}),
                                capture_output=True, text=True, timeout=PATIENCE)
        assert nobody.returncode == 2 and nobody.stderr.strip().endswith("theo has no weekly digest here: give an address on Settings "
                                                                          "(“This week, years ago, by email”) first."), nobody.stderr
        # Without the public address the links would lead nowhere: it says so, and sends nothing.
        unset = subprocess.run([str(binary("vinylogue")), "digest", "send", "demo", "--demo", "--data-dir", str(tmp_path / "data")],
                               env=fakes.environment(mail_environment(mail)), capture_output=True, text=True, timeout=PATIENCE)
        assert unset.returncode == 4 and "VINYLOGUE_PUBLIC_URL is not set" in unset.stderr, unset.stderr
        # The household's list is as the demo made it: the command changed nothing there.
        assert "theo" in visitor.get("/api/users")[1]

        # A mail client's one-click unsubscribe: a POST with no cookie and no form token.
        request = urllib.request.Request(unsubscribe, data=b"List-Unsubscribe=One-Click", method="POST",
                                         headers={"Content-Type": "application/x-www-form-urlencoded"})
        with urllib.request.urlopen(request, timeout=PATIENCE) as response:
            assert response.status == 200 and "You are unsubscribed" in response.read().decode()
        assert visitor.post("/settings/digest", {"action": "now"}) == "/settings?digest=no-address#digest"
        assert "Off. Give an address" in visitor.get("/settings")[1]
        assert len(mail.messages) == 3


def test_smtps_sends_the_confirmation(tmp_path, processes):
    with running_mail_server(tmp_path, mode="implicit") as mail:
        fakes = Fakes(tmp_path, processes)
        app = start_vinylogue(tmp_path, fakes, tmp_path / "data", mail_environment(mail))
        processes.append(app)
        assert mail.url().startswith("smtps://")
        visitor = Visitor(app.url)
        visitor.post("/settings/digest", {"action": "save", "address": ADDRESS, "weekday": "1", "hour": "18", "years": "1"})
        confirm(visitor, mail, 1, app.url)


def test_a_slow_refusing_or_dropping_server_is_shown_and_pages_answer(tmp_path, processes):
    with running_mail_server(tmp_path) as mail:
        fakes = Fakes(tmp_path, processes)
        app = start_vinylogue(tmp_path, fakes, tmp_path / "data", mail_environment(mail))
        processes.append(app)
        visitor = Visitor(app.url)
        # Slow: the server sits on the message; pages do not wait for it.
        mail.hold()
        visitor.post("/settings/digest", {"action": "save", "address": "one@example.org", "weekday": "2", "hour": "8", "years": "2"})
        mail.wait_for_held(1)
        for path in ("/u/demo", "/settings", "/u/demo/history"):
            status, _ = visitor.get(path)
            assert status == 200, path
        assert "being sent" in visitor.settings_saying("Confirmation link")
        mail.release()
        mail.wait_for(1)
        visitor.settings_saying("Confirmation link ·", "· sent")
        # Refusing for good: failed, in the server's words.
        mail.refuse(550, "5.1.1 No such user")
        visitor.post("/settings/digest", {"action": "save", "address": "two@example.org", "weekday": "2", "hour": "8", "years": "2"})
        page = visitor.settings_saying("· failed")
        assert "The mail server refused the recipient: 550 5.1.1 No such user." in page
        # Dropping the connection: tried again later, and said so.
        mail.drop_after("RCPT")
        visitor.post("/settings/digest", {"action": "save", "address": "three@example.org", "weekday": "2", "hour": "8", "years": "2"})
        page = visitor.settings_saying("will be tried again")
        assert "The mail server closed the connection (after RCPT TO)." in page
        mail.normal()
        assert visitor.get("/u/demo")[0] == 200
        assert len(mail.messages) == 1


def test_a_send_killed_midway_is_sent_once_after_a_restart(tmp_path, processes):
    with running_mail_server(tmp_path) as mail:
        fakes = Fakes(tmp_path, processes)
        data = tmp_path / "data"
        app = start_vinylogue(tmp_path, fakes, data, mail_environment(mail))
        processes.append(app)
        visitor = Visitor(app.url)
        visitor.post("/settings/digest", {"action": "save", "address": ADDRESS, "weekday": "2", "hour": "8", "years": "3"})
        confirm(visitor, mail, 1, app.url)
        # The digest is on its way, the server holding it after its last line; the sender dies.
        mail.hold()
        visitor.post("/settings/digest", {"action": "now"})
        mail.wait_for_held(1)
        app.kill()
        mail.release()
        mail.wait_for_discarded(1)
        # Started again on the same data: the claim of a process that is gone is taken over at once.
        mail.normal()
        again = start_vinylogue(tmp_path, fakes, data, mail_environment(mail))
        processes.append(again)
        received = mail.wait_for(2)
        assert received[1].message["Subject"].startswith("This week a year ago: ")
        later = Visitor(again.url)
        page = later.settings_saying("Digest sent on request ·", "· sent")
        assert "being sent" not in page and "waiting" not in page[page.find('id="digest"'):]
        assert len(mail.messages) == 2


def psql(url: str, sql: str) -> str:
    done = subprocess.run(["psql", url, "-v", "ON_ERROR_STOP=1", "-qAt", "-c", sql], capture_output=True, text=True, timeout=PATIENCE)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_fleet_sends_each_due_digest_once(tmp_path, processes):
    server = os.environ.get("VINYLOGUE_TEST_DATABASE_URL")
    if not server:
        pytest.skip("No PostgreSQL test cluster: VINYLOGUE_TEST_DATABASE_URL is not set (scripts/test sets it).")
    name = "digest_fleet_" + uuid.uuid4().hex[:12]
    psql(server, f"CREATE DATABASE {name}")
    database = server.rsplit("/", 1)[0] + "/" + name
    try:
        # Saturday 09:00 UTC has just come.
        now = datetime.now(timezone.utc)
        saturday = (now - timedelta(days=(now.weekday() - 5) % 7 or 7)).replace(hour=9, minute=0, second=20, microsecond=0)
        with running_mail_server(tmp_path) as mail:
            fakes = Fakes(tmp_path, processes)
            environment = {**mail_environment(mail), "VINYLOGUE_TEST_NOW": saturday.isoformat().replace("+00:00", "Z")}
            # The first start makes the tables; then five people are on, confirmed a week ago.
            first = start_vinylogue(tmp_path, fakes, tmp_path / "a", environment, ["--database", database])
            first.stop()
            people = ["demo", "theo", "mara", "felix", "june"]
            confirmed = (saturday - timedelta(days=7)).timestamp()
            rows = ", ".join(f"('{person}', '{person}', 'session-{person}', now(), now())" for person in people)
            psql(database, f"INSERT INTO account(name_key, name, lastfm_session_key, created_at, signed_in_at) VALUES {rows}")
            psql(database, "INSERT INTO digest_subscription(owner, address, weekday, hour, years, token, confirmed_at, created_at, updated_at) "
                           f"SELECT id, name || '@example.org', 7, 9, 3, md5(name), {confirmed}, {confirmed}, {confirmed} FROM account")
            a = start_vinylogue(tmp_path, fakes, tmp_path / "a", environment, ["--database", database])
            processes.append(a)
            b = start_vinylogue(tmp_path, fakes, tmp_path / "b", environment, ["--database", database])
            processes.append(b)
            received = mail.wait_for(5)
            assert sorted(message.recipients[0] for message in received) == sorted(f"{person}@example.org" for person in people)
            for message in received:
                assert message.message["Subject"].startswith("This week a year ago: ")
            # Both instances have looked (each queued or found the week's rows), and every row is sent, once.
            deadline = time.monotonic() + PATIENCE
            while psql(database, "SELECT count(*) FROM digest_send WHERE state <> 'sent'") != "0":
                assert time.monotonic() < deadline, psql(database, "SELECT owner, state, reason FROM digest_send")
                time.sleep(0.1)
            assert psql(database, "SELECT count(*) FROM digest_send") == "5"
            assert len(mail.messages) == 5
    finally:
        for process in reversed(processes):
            process.stop()
        processes.clear()
        psql(server, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
