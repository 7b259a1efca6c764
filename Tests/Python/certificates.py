"""A throwaway certificate authority for the Python test suites, made with
the openssl command-line tool: a CA and a certificate signed by it for
127.0.0.1 and localhost, valid for a day. The protocol tests serve HTTPS
with it (Tests/Protocol/conftest.py) and the test mail server speaks
STARTTLS and implicit TLS with it (Tests/Python/mail_server.py); a client
trusts the CA file and nothing else.

Imported as `certificates` once Tests/Python is on `sys.path`, as the
conftests do for launcher.py.
"""

from __future__ import annotations

import subprocess
from pathlib import Path


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
