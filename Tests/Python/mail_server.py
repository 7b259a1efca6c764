"""A real SMTP server for the Python test suites: aiosmtpd (PyPI) run
in-process by its `Controller`, in a thread of its own with its own asyncio
loop, listening on 127.0.0.1 and a free port the system picks (port 0; the
port it got is read back from the listening socket, so no other process
can take it between a choice and a bind).

Two modes, both with a throwaway certificate authority made with openssl
(`throwaway_authority` in certificates.py; the CA file is `ca_file`):

- "starttls": a plain connection that offers STARTTLS and requires it
  before AUTH, MAIL and everything else but EHLO, NOOP and QUIT (530
  until then); the URL is `smtp://user:password@127.0.0.1:PORT`.
- "implicit": TLS from the first byte (smtps); `smtps://...`.

AUTH (PLAIN and LOGIN) is required before MAIL, RCPT and DATA (530), with
the one user name and password given at start; a wrong one gets 535.

Every accepted message is kept as a `Message` (envelope sender,
recipients, the raw bytes, the parsed `EmailMessage`, the user the
connection logged in as). `wait_for(count)` waits on a
`threading.Condition`, notified by the server's thread whenever something
arrives, for at most `patience` seconds (10 s unless told), and fails
saying how many arrived.

Faults, switchable while running, for every connection from then on:

- `refuse(code, text)` / `refuse_temporarily(code, text)`: RCPT TO is
  answered with that (550 / 451 by default).
- `hold()` / `release()`: after the client's final "." of DATA the server
  answers nothing, and stores nothing, until `release()`. The message
  waits on an asyncio.Event inside `handle_DATA`. What was chosen for a
  client that goes away while its message is held: the message is NOT
  stored, ever. The connection's loss cancels the held `handle_DATA` (that
  is how aiosmtpd ends a connection's work), which files the message under
  `discarded` instead; and a released message is only stored when its
  connection is still open at that moment. `wait_for_held(n)` waits until
  n messages are being held; `wait_for_discarded(n)` until n held
  messages were given up because their client went away.
- `drop_after(command)`: the connection is closed, with no answer, when
  that command ("RCPT", "MAIL", "DATA", "AUTH", "STARTTLS", ...) arrives.
- `normal()`: no refusal, no drop, and whatever is held is released.

`connections` counts the connections accepted and `logins` the AUTH
attempts that reached the credentials check (right or wrong);
`accepted_logins` those that succeeded.

    with running_mail_server(tmp_path) as mail:           # starttls
        ...  # point the app at mail.url(), trusting mail.ca_file
        [message] = mail.wait_for(1)
        assert message.message["Subject"] == "..."

Imported as `mail_server` once Tests/Python is on `sys.path`, as the
conftests do for launcher.py.
"""

from __future__ import annotations

import asyncio
import email
import email.policy
import functools
import logging
import ssl
import tempfile
import threading
import urllib.parse
from contextlib import contextmanager
from dataclasses import dataclass
from email.message import EmailMessage
from pathlib import Path
from typing import Callable, Iterator

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword

from certificates import throwaway_authority

HOST = "127.0.0.1"
MODES = ("starttls", "implicit")
# The most any wait here lasts.
PATIENCE = 10.0
# The commands `drop_after` can drop the connection at.
COMMANDS = ("EHLO", "HELO", "STARTTLS", "AUTH", "MAIL", "RCPT", "DATA", "RSET", "NOOP", "QUIT", "VRFY")
DEFAULT_USER = "mailer@example.test"
DEFAULT_PASSWORD = "correct horse:battery/staple"

# aiosmtpd itself sets the deprecated Session.login_data on every successful AUTH, and logs a
# warning saying it is deprecated each time: not this fixture's, nor the client's, doing.
logging.getLogger("mail.log").addFilter(lambda record: "login_data is deprecated" not in record.getMessage())


class MailDidNotArrive(AssertionError):
    """`wait_for` (or `wait_for_held`, `wait_for_discarded`) ran out of patience; the message says what did arrive."""


@dataclass(frozen=True)
class Message:
    """One accepted message: the envelope (`sender` from MAIL FROM, `recipients`
    from the accepted RCPT TOs), the bytes after DATA as sent (CRLF line ends,
    dot-stuffing removed), those parsed with `email.policy.default` (line ends
    made "\n" first, as Python's email package writes them, so `get_content()`
    of a text part is plain Python text), and the user name the connection
    logged in as."""
    sender: str
    recipients: tuple[str, ...]
    data: bytes
    message: EmailMessage
    login: str | None


class MailServer:
    """The test SMTP server. `start()` / `stop()`, or use `running_mail_server`.

    `directory` is where the throwaway CA and certificate are written (in a
    fresh subdirectory of it). Attributes: `mode`, `user`, `password`,
    `host`, `port` (once started), `ca_file` (the CA's PEM), `ssl_context`
    (a client context that trusts that CA and nothing else).
    """

    def __init__(self, directory: Path, mode: str = "starttls", user: str = DEFAULT_USER,
                 password: str = DEFAULT_PASSWORD):
        if mode not in MODES:
            raise ValueError(f"mode {mode!r}: the mail server speaks {' or '.join(MODES)}")
        self.mode = mode
        self.user = user
        self.password = password
        self.host = HOST
        self.port = 0
        tls_dir = Path(tempfile.mkdtemp(prefix="mail-tls-", dir=directory))
        self.ca_file, certificate, key = throwaway_authority(tls_dir)
        self.ssl_context = ssl.create_default_context(cafile=str(self.ca_file))
        self._server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self._server_tls.load_cert_chain(str(certificate), str(key))

        # Everything below is guarded by this condition's lock, and every change notifies it.
        self._changed = threading.Condition()
        self._messages: list[Message] = []
        self._discarded: list[Message] = []
        self._held = 0
        self._connections = 0
        self._logins = 0
        self._accepted_logins = 0
        self._rcpt_answer: str | None = None
        self._drop_at: str | None = None

        self._gate: asyncio.Event | None = None  # made in the server's loop by start(); set = not holding
        self._controller: _Controller | None = None

    # --- Lifecycle

    def start(self) -> MailServer:
        assert self._controller is None, "the mail server is already running"
        implicit = self.mode == "implicit"
        self._controller = _Controller(
            self, hostname=HOST, port=0, ready_timeout=PATIENCE,
            ssl_context=self._server_tls if implicit else None,  # implicit TLS: the listening socket's
            server_hostname="localhost",  # and not socket.getfqdn(), which may ask DNS
            tls_context=None if implicit else self._server_tls,
            require_starttls=not implicit,
            auth_required=True,
            authenticator=self._authenticate,
        )
        self._controller.start()
        self.port = self._controller.port
        self._gate = self._in_loop(asyncio.Event)
        self._in_loop(self._gate.set)
        # Controller.start() made one connection of its own to see the server answer: not a client's.
        with self._changed:
            self._connections = 0
        return self

    def stop(self) -> None:
        """Stops the server; a message still held is discarded (its connection is cut)."""
        if self._controller is not None:
            self._controller.stop()
            self._controller = None

    def __enter__(self) -> MailServer:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def url(self, user: str | None = None, password: str | None = None) -> str:
        """`smtp://user:password@127.0.0.1:PORT` (starttls) or `smtps://...` (implicit),
        user name and password percent-encoded; the server's own unless given."""
        scheme = "smtps" if self.mode == "implicit" else "smtp"
        user = self.user if user is None else user
        password = self.password if password is None else password
        quote = functools.partial(urllib.parse.quote, safe="")
        return f"{scheme}://{quote(user)}:{quote(password)}@{self.host}:{self.port}"

    # --- What arrived

    @property
    def messages(self) -> list[Message]:
        with self._changed:
            return list(self._messages)

    @property
    def discarded(self) -> list[Message]:
        """Messages that were held and whose client went away before `release()`: never stored."""
        with self._changed:
            return list(self._discarded)

    @property
    def held(self) -> int:
        """How many messages are waiting for `release()` now."""
        with self._changed:
            return self._held

    @property
    def connections(self) -> int:
        with self._changed:
            return self._connections

    @property
    def logins(self) -> int:
        """AUTH attempts that reached the credentials check, right or wrong."""
        with self._changed:
            return self._logins

    @property
    def accepted_logins(self) -> int:
        with self._changed:
            return self._accepted_logins

    def clear(self) -> None:
        """Forgets the messages (stored and discarded) and the counts of connections and logins."""
        with self._changed:
            self._messages.clear()
            self._discarded.clear()
            self._connections = self._logins = self._accepted_logins = 0
            self._changed.notify_all()

    def wait_for(self, count: int = 1, patience: float = PATIENCE) -> list[Message]:
        """All messages, once at least `count` have arrived; fails after `patience` seconds saying how many did."""
        self._wait(lambda: len(self._messages) >= count, patience, f"{count} message(s)")
        return self.messages

    def wait_for_held(self, count: int = 1, patience: float = PATIENCE) -> int:
        """Waits until at least `count` messages are being held; returns how many are."""
        self._wait(lambda: self._held >= count, patience, f"{count} held message(s)")
        return self.held

    def wait_for_discarded(self, count: int = 1, patience: float = PATIENCE) -> list[Message]:
        """Waits until at least `count` held messages were discarded because their client went away."""
        self._wait(lambda: len(self._discarded) >= count, patience, f"{count} discarded message(s)")
        return self.discarded

    def _wait(self, arrived: Callable[[], bool], patience: float, what: str) -> None:
        with self._changed:
            if not self._changed.wait_for(arrived, timeout=patience):
                raise MailDidNotArrive(
                    f"the test mail server ({self.mode}, port {self.port}) waited {patience:g} s for {what}: "
                    f"{len(self._messages)} message(s) arrived, {self._held} held, {len(self._discarded)} discarded; "
                    f"{self._connections} connection(s), {self._logins} AUTH attempt(s) of which "
                    f"{self._accepted_logins} accepted")

    # --- Faults

    def refuse(self, code: int = 550, text: str = "5.1.1 No such user") -> None:
        """RCPT TO is answered `code text` (a permanent failure, 5xx)."""
        if not 500 <= code <= 599:
            raise ValueError(f"refuse({code}): a permanent refusal is a 5xx code; use refuse_temporarily for 4xx")
        self._set(_rcpt_answer=f"{code} {text}")

    def refuse_temporarily(self, code: int = 451, text: str = "4.3.0 Try again later") -> None:
        """RCPT TO is answered `code text` (a temporary failure, 4xx)."""
        if not 400 <= code <= 499:
            raise ValueError(f"refuse_temporarily({code}): a temporary refusal is a 4xx code")
        self._set(_rcpt_answer=f"{code} {text}")

    def hold(self) -> None:
        """From now on, the final "." of DATA gets no answer, and the message is not stored, until `release()`."""
        self._in_loop(self._gate.clear)

    def release(self) -> None:
        """Held messages whose clients are still connected are stored and answered 250; holding stops."""
        self._in_loop(self._gate.set)

    def drop_after(self, command: str) -> None:
        """The connection is closed, unanswered, when `command` (e.g. "RCPT") arrives."""
        command = command.upper()
        if command not in COMMANDS:
            raise ValueError(f"drop_after({command!r}): one of {', '.join(COMMANDS)}")
        self._set(_drop_at=command)

    def normal(self) -> None:
        """No refusal, no drop, nothing held."""
        self._set(_rcpt_answer=None, _drop_at=None)
        self.release()

    def _set(self, **state) -> None:
        with self._changed:
            for name, value in state.items():
                setattr(self, name, value)

    def _in_loop(self, function: Callable):
        """Calls `function` in the server's loop (asyncio objects belong to it) and returns what it returned."""
        assert self._controller is not None, "the mail server is not running"

        async def call():
            return function()
        return asyncio.run_coroutine_threadsafe(call(), self._controller.loop).result(PATIENCE)

    # --- Called in the server's thread

    def _note(self, **changes: int) -> None:
        with self._changed:
            for name, change in changes.items():
                setattr(self, name, getattr(self, name) + change)
            self._changed.notify_all()

    def _authenticate(self, smtp, session, envelope, mechanism: str, auth_data) -> AuthResult:
        right = (isinstance(auth_data, LoginPassword) and auth_data.login == self.user.encode()
                 and auth_data.password == self.password.encode())
        self._note(_logins=1, _accepted_logins=int(right))
        # A refusal, not handled by us: aiosmtpd answers 535 5.7.8.
        return AuthResult(success=right, handled=False, auth_data=auth_data if right else None)

    def _record(self, into: list[Message], session, envelope) -> None:
        data = bytes(envelope.original_content)
        login = session.auth_data.login.decode(errors="replace") if isinstance(session.auth_data, LoginPassword) else None
        message = Message(sender=envelope.mail_from, recipients=tuple(envelope.rcpt_tos), data=data,
                          message=email.message_from_bytes(data.replace(b"\r\n", b"\n"), policy=email.policy.default),
                          login=login)
        with self._changed:
            into.append(message)
            self._changed.notify_all()

    def _rcpt_answer_now(self) -> str | None:
        with self._changed:
            return self._rcpt_answer

    def _drops_at(self, command: str) -> bool:
        with self._changed:
            return self._drop_at == command


class _Handler:
    """aiosmtpd's hooks, for every connection of one MailServer."""

    def __init__(self, mail: MailServer):
        self.mail = mail

    async def handle_RCPT(self, smtp, session, envelope, address, rcpt_options):
        refusal = self.mail._rcpt_answer_now()
        if refusal is not None:
            return refusal
        envelope.rcpt_tos.append(address)
        envelope.rcpt_options.extend(rcpt_options)
        return "250 OK"

    async def handle_DATA(self, smtp, session, envelope):
        mail = self.mail
        gate = mail._gate
        if not gate.is_set():
            mail._note(_held=1)
            try:
                await gate.wait()
            except asyncio.CancelledError:
                # The connection was lost (or the server is stopping): aiosmtpd cancels the connection's work.
                mail._record(mail._discarded, session, envelope)
                raise
            finally:
                mail._note(_held=-1)
            if smtp.transport is None or smtp.transport.is_closing():
                mail._record(mail._discarded, session, envelope)
                return "421 4.4.2 The connection went away while the message was held"
        mail._record(mail._messages, session, envelope)
        return "250 2.0.0 OK: queued"


class _Session(SMTP):
    """aiosmtpd's SMTP, one per connection, that closes the connection when the command
    chosen with `drop_after` arrives, and counts itself as a connection."""

    def __init__(self, mail: MailServer, **kwargs):
        super().__init__(_Handler(mail), **kwargs)
        self.mail = mail
        mail._note(_connections=1)
        if mail.mode == "implicit":
            # The whole connection is TLS (the listening socket's), which SMTP does not see: without this
            # it would neither offer AUTH nor accept it (538) for want of a STARTTLS.
            assert hasattr(self, "_auth_require_tls"), "aiosmtpd changed: SMTP._auth_require_tls is gone"
            self._auth_require_tls = False


def _dropping(command: str, original):
    @functools.wraps(original)  # keeps aiosmtpd's HELP syntax attributes
    async def method(self: _Session, arg):
        if self.mail._drops_at(command):
            self.transport.close()
            return
        await original(self, arg)
    return method


for _command in COMMANDS:
    setattr(_Session, f"smtp_{_command}", _dropping(_command, getattr(SMTP, f"smtp_{_command}")))
del _command


class _Controller(Controller):
    def __init__(self, mail: MailServer, **kwargs):
        super().__init__(None, **kwargs)
        self.mail = mail

    def factory(self):
        return _Session(self.mail, **self.SMTP_kwargs)

    def _trigger_server(self):
        # Asked for port 0: the port the listening socket got, before start() connects to it.
        self.port = self.server.sockets[0].getsockname()[1]
        super()._trigger_server()


@contextmanager
def running_mail_server(tmp_path: Path, mode: str = "starttls", user: str = DEFAULT_USER,
                        password: str = DEFAULT_PASSWORD) -> Iterator[MailServer]:
    """A started MailServer, stopped when the block ends (also when it fails)."""
    with MailServer(tmp_path, mode, user, password) as mail:
        yield mail
