"""The test mail server itself (Tests/Python/mail_server.py), checked with
Python's own SMTP client, smtplib: STARTTLS and implicit TLS with the
throwaway CA, AUTH PLAIN and LOGIN required, a wrong password, and each
fault it can inject (a refused recipient, a held answer, a dropped
connection). It starts in-process in well under a second and needs no
Vinylogue binary.
"""

from __future__ import annotations

import base64
import smtplib
import threading
import urllib.parse
from contextlib import contextmanager
from email.message import EmailMessage

import pytest

from mail_server import MailServer, running_mail_server  # Tests/Python, on sys.path through conftest.py

SENDER = "vinylogue@example.test"
RECIPIENT = "listener@example.test"


@pytest.fixture
def mail(tmp_path):
    """The server in "starttls" mode."""
    with running_mail_server(tmp_path) as server:
        yield server


@pytest.fixture
def smtps_mail(tmp_path):
    """The server in "implicit" (smtps) mode."""
    with running_mail_server(tmp_path, mode="implicit") as server:
        yield server


@contextmanager
def client(mail: MailServer, log_in: bool = True):
    """smtplib connected over TLS (STARTTLS, or from the first byte), trusting only the throwaway CA,
    logged in unless told; it checks the certificate against 127.0.0.1."""
    if mail.mode == "implicit":
        smtp = smtplib.SMTP_SSL(mail.host, mail.port, timeout=10, context=mail.ssl_context)
    else:
        smtp = smtplib.SMTP(mail.host, mail.port, timeout=10)
        smtp.starttls(context=mail.ssl_context)
    try:
        smtp.ehlo()  # again after STARTTLS: smtplib's auth() does not, and AUTH needs it
        if log_in:
            smtp.login(mail.user, mail.password)
        yield smtp
    finally:
        smtp.close()


def a_message(subject: str = "Your week in records", body: str = "Ça tourne.\n.A line starting with a dot\n") -> EmailMessage:
    message = EmailMessage()
    message["From"] = SENDER
    message["To"] = RECIPIENT
    message["Subject"] = subject
    message.set_content(body)
    return message


def test_starttls_then_auth_plain_then_a_message_arrives_parsed(mail):
    with smtplib.SMTP(mail.host, mail.port, timeout=10) as smtp:
        smtp.ehlo()
        assert smtp.has_extn("starttls") and not smtp.has_extn("auth"), "AUTH is offered only once TLS is on"
        smtp.starttls(context=mail.ssl_context)
        smtp.ehlo()
        assert smtp.esmtp_features["auth"].split() == ["LOGIN", "PLAIN"]
        smtp.user, smtp.password = mail.user, mail.password
        assert smtp.auth("PLAIN", smtp.auth_plain)[0] == 235
        smtp.send_message(a_message())

    [arrived] = mail.wait_for(1)
    assert arrived.sender == SENDER
    assert arrived.recipients == (RECIPIENT,)
    assert arrived.login == mail.user
    assert arrived.message["Subject"] == "Your week in records"
    assert arrived.message["To"] == RECIPIENT
    assert arrived.message.get_content() == "Ça tourne.\n.A line starting with a dot\n"
    assert b"\r\nSubject: Your week in records\r\n" in b"\r\n" + arrived.data
    assert (mail.connections, mail.logins, mail.accepted_logins) == (1, 1, 1)


def test_auth_login_answers_both_challenges(mail):
    with client(mail, log_in=False) as smtp:
        smtp.user, smtp.password = mail.user, mail.password
        assert smtp.auth("LOGIN", smtp.auth_login, initial_response_ok=False)[0] == 235
        smtp.sendmail(SENDER, [RECIPIENT], a_message().as_bytes())
    [arrived] = mail.wait_for(1)
    assert arrived.login == mail.user
    assert mail.accepted_logins == 1


def test_without_starttls_auth_and_mail_are_refused(mail):
    plain = base64.b64encode(f"\0{mail.user}\0{mail.password}".encode()).decode()
    with smtplib.SMTP(mail.host, mail.port, timeout=10) as smtp:
        smtp.ehlo()
        with pytest.raises(smtplib.SMTPNotSupportedError):
            smtp.login(mail.user, mail.password)
        assert smtp.docmd("AUTH", f"PLAIN {plain}")[0] == 530
        assert smtp.mail(SENDER)[0] == 530
        assert smtp.rcpt(RECIPIENT)[0] == 530
    # Over TLS but not logged in: still no mail.
    with client(mail, log_in=False) as smtp:
        code, text = smtp.mail(SENDER)
        assert (code, text) == (530, b"5.7.0 Authentication required")
    assert mail.logins == 0
    assert mail.messages == []


def test_a_wrong_password_gets_535(mail):
    with client(mail, log_in=False) as smtp:
        smtp.user, smtp.password = mail.user, "not the password"
        with pytest.raises(smtplib.SMTPAuthenticationError) as refused:
            smtp.auth("PLAIN", smtp.auth_plain)
        assert refused.value.smtp_code == 535
        assert smtp.mail(SENDER)[0] == 530
    assert (mail.logins, mail.accepted_logins) == (1, 0)


def test_implicit_tls_from_the_first_byte(smtps_mail):
    assert smtps_mail.url().startswith("smtps://")
    with smtplib.SMTP_SSL(smtps_mail.host, smtps_mail.port, timeout=10, context=smtps_mail.ssl_context) as smtp:
        smtp.ehlo()
        assert not smtp.has_extn("starttls")
        assert smtp.esmtp_features["auth"].split() == ["LOGIN", "PLAIN"]
        smtp.login(smtps_mail.user, smtps_mail.password)
        smtp.send_message(a_message("Over smtps"))
    [arrived] = smtps_mail.wait_for(1)
    assert arrived.message["Subject"] == "Over smtps"
    assert (smtps_mail.connections, smtps_mail.accepted_logins) == (1, 1)


def test_url_percent_encodes_the_user_and_password(mail):
    url = urllib.parse.urlsplit(mail.url())
    assert (url.scheme, url.hostname, url.port) == ("smtp", "127.0.0.1", mail.port)
    assert "@" not in url.username and " " not in url.password
    assert (urllib.parse.unquote(url.username), urllib.parse.unquote(url.password)) == (mail.user, mail.password)
    assert mail.url("a b", "c/d") == f"smtp://a%20b:c%2Fd@127.0.0.1:{mail.port}"


def test_refused_recipients_then_normal(mail):
    mail.refuse()
    with client(mail) as smtp:
        with pytest.raises(smtplib.SMTPRecipientsRefused) as refused:
            smtp.sendmail(SENDER, [RECIPIENT], a_message("Refused").as_bytes())
        assert refused.value.recipients == {RECIPIENT: (550, b"5.1.1 No such user")}

        mail.refuse_temporarily()
        with pytest.raises(smtplib.SMTPRecipientsRefused) as refused:
            smtp.sendmail(SENDER, [RECIPIENT], a_message("Refused for now").as_bytes())
        assert refused.value.recipients == {RECIPIENT: (451, b"4.3.0 Try again later")}

        mail.normal()
        smtp.sendmail(SENDER, [RECIPIENT], a_message("Accepted").as_bytes())
    assert [m.message["Subject"] for m in mail.wait_for(1)] == ["Accepted"]


def test_a_held_message_whose_client_gave_up_is_never_stored(mail):
    mail.hold()
    with client(mail) as smtp:
        smtp.sock.settimeout(1.0)  # the client's patience for the answer to DATA's final "."
        with pytest.raises(smtplib.SMTPServerDisconnected):
            smtp.sendmail(SENDER, [RECIPIENT], a_message("Held").as_bytes())
    [discarded] = mail.wait_for_discarded(1)
    assert discarded.message["Subject"] == "Held"
    assert mail.messages == []

    mail.release()
    with client(mail) as smtp:
        smtp.sendmail(SENDER, [RECIPIENT], a_message("After the release").as_bytes())
    assert [m.message["Subject"] for m in mail.wait_for(1)] == ["After the release"]


def test_a_held_message_is_stored_and_answered_on_release(mail):
    mail.hold()
    answers: list = []
    with client(mail) as smtp:
        sender = threading.Thread(target=lambda: answers.append(
            smtp.sendmail(SENDER, [RECIPIENT], a_message("Held, then released").as_bytes())))
        sender.start()
        try:
            assert mail.wait_for_held(1) == 1
            assert mail.messages == [], "a held message is not stored"
            mail.release()
        finally:
            sender.join(timeout=10)
    assert answers == [{}], "sendmail returns the refused recipients: none"
    assert [m.message["Subject"] for m in mail.wait_for(1)] == ["Held, then released"]
    assert mail.held == 0


def test_drop_after_rcpt_closes_the_connection(mail):
    mail.drop_after("RCPT")
    with client(mail) as smtp:
        with pytest.raises(smtplib.SMTPServerDisconnected):
            smtp.sendmail(SENDER, [RECIPIENT], a_message("Dropped").as_bytes())
    mail.normal()
    with client(mail) as smtp:
        smtp.sendmail(SENDER, [RECIPIENT], a_message("Not dropped").as_bytes())
    assert [m.message["Subject"] for m in mail.wait_for(1)] == ["Not dropped"]
    assert mail.connections == 2


def test_wait_for_says_how_many_arrived(mail):
    with pytest.raises(AssertionError, match=r"0 message\(s\) arrived"):
        mail.wait_for(1, patience=0.2)
