"""Starts and stops the servers the Python test suites (Tests/Browser and
Tests/Protocol) run against: `vinylogue serve` and `fake-lastfm`, built by
`swift build` into `.build/debug` or `VINYLOGUE_BUILD_DIR`.

A `ServerProcess` starts a binary that was asked to listen on port 0 and
waits for the line it prints once it listens ("Vinylogue is serving at
URL", "fake Last.fm listening at URL"). The wait is on that event, not on
polling a port: a reader thread copies the child's output (stdout and
stderr) to a log file in the work directory and signals when the line
arrives, or when the child ends first. A child that has not said it listens
within 10 s, or that ends before, is stopped, and the error names it and
shows its output.

Every child runs in its own session and so its own process group, and is
stopped by that group (SIGTERM, then SIGKILL after 5 s): this ends exactly
what the test started, and nothing else on the machine.

The conftests import it after putting this folder on `sys.path`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("VINYLOGUE_BUILD_DIR", ROOT / ".build" / "debug"))

# The most any wait here lasts: for a binary being relinked, for the line
# saying a server listens, for a stopped server to end.
PATIENCE = 10.0
STOP_GRACE = 5.0


class ServerDidNotStart(RuntimeError):
    """A server ended, or stayed silent, before saying where it listens. The message holds its output."""


def binary(name: str, patience: float = PATIENCE) -> Path:
    """The built binary `name`. `swift build` may be relinking it underneath
    a run, so a briefly missing one is waited for (checked every 0.1 s, for
    `patience` seconds at the most) before the test fails saying what to do."""
    path = BUILD / name
    deadline = time.monotonic() + patience
    while not (path.is_file() and os.access(path, os.X_OK)):
        if time.monotonic() > deadline:
            pytest.fail(f"{path} is missing: run `swift build` first (or set VINYLOGUE_BUILD_DIR to where the built "
                        "binaries are)", pytrace=False)
        time.sleep(0.1)
    return path


class ServerProcess:
    """A server started from `command` (which asks it to listen on port 0)
    that prints `marker` followed by its URL once it listens.

    `url` is that URL without a trailing "/" or "/2.0" (fake-lastfm announces
    its API endpoint); `pid` is the child's process id (strace attaches to it).
    `env` is the child's whole environment (None: this process's), `workdir`
    its working directory, where its log is written as `<name>-<ns>.log`.
    """

    def __init__(self, command: list[str | Path], marker: str, workdir: Path, env: dict[str, str] | None = None,
                 name: str | None = None, patience: float = PATIENCE):
        self.command = [str(part) for part in command]
        self.name = name or Path(self.command[0]).name
        self.log_path = workdir / f"{self.name}-{time.monotonic_ns()}.log"
        self.url = ""
        self.process = subprocess.Popen(self.command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, env=env, cwd=workdir, start_new_session=True)
        announced: list[str] = []
        ready = threading.Event()

        def copy_output() -> None:
            try:
                with open(self.log_path, "wb") as log:
                    for line in self.process.stdout:
                        log.write(line)
                        log.flush()
                        if announced:
                            continue
                        text = line.decode(errors="replace")
                        if marker in text:
                            words = text.split(marker, 1)[1].split()
                            if words:
                                announced.append(words[0])
                                ready.set()
            finally:
                ready.set()  # the child ended (before or after saying it listens), or the copy failed

        self._reader = threading.Thread(target=copy_output, name=f"{self.name} output", daemon=True)
        self._reader.start()
        if ready.wait(timeout=patience) and announced:
            self.url = announced[0].removesuffix("/").removesuffix("/2.0")
            return
        if ready.is_set():  # its output ended first: it is ending, or has ended
            try:
                status = self.process.wait(timeout=1)
                why = f"ended with status {status} before saying it listens ({marker!r})"
            except subprocess.TimeoutExpired:
                why = f"closed its output without saying it listens ({marker!r}), so it was stopped"
        else:
            why = f"did not say it listens ({marker!r}) within {patience:g} s, so it was stopped"
        self.stop()
        # After the stop the output is at its end: let the reader write the last of it.
        self._reader.join(timeout=STOP_GRACE)
        raise ServerDidNotStart(f"{self.name} {why}; its command was {' '.join(self.command)} and its output "
                                f"(also in {self.log_path}):\n{self.log()}")

    @property
    def pid(self) -> int:
        return self.process.pid

    def log(self) -> str:
        """The last 4,000 characters the child printed."""
        try:
            return self.log_path.read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def stop(self) -> None:
        """Ends the child's process group: SIGTERM, then SIGKILL if the child has not ended within 5 s.

        A child already ended (and reaped) is left alone: its process id, and
        so its group's, may since belong to someone else."""
        if self.process.poll() is not None:
            return
        self._signal_group(signal.SIGTERM)
        try:
            self.process.wait(timeout=STOP_GRACE)
        except subprocess.TimeoutExpired:
            self._signal_group(signal.SIGKILL)
            self.process.wait(timeout=STOP_GRACE)

    def kill(self) -> None:
        """Ends the child's process group at once with SIGKILL, as a crash or a power cut would, and reaps it."""
        if self.process.poll() is not None:
            return
        self._signal_group(signal.SIGKILL)
        self.process.wait(timeout=STOP_GRACE)

    def _signal_group(self, signum: int) -> None:
        try:
            os.killpg(self.pid, signum)
        except ProcessLookupError:
            pass  # the group has already ended
