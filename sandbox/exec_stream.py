"""One `docker exec` stream's plumbing, the steps DockerSandbox.exec (sandbox/docker_sandbox.py) strings together.

A thread reads the exec's frames into capped buffers (and stops reading at the kill-after-output cap); stdin is
fed in one go and then half-closed so the command sees EOF; the wait has a deadline and looks every few seconds
whether the container still exists (a container removed under us leaves the stream open until the timeout); the
close really ends the connection (a half-open exec stream makes the engine stall the container's removal).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from envqa.core.sandbox import OutputBuffer

STDOUT, STDERR = 1, 2
POLL_SECONDS = 0.5  # how often the wait wakes to check the output cap and the deadline
LIVENESS_SECONDS = 5.0  # how often a long exec asks the engine whether its container still exists
CLOSE_JOIN_SECONDS = 5  # how long the reader thread gets to finish once the connection is closed


@dataclass
class WaitOutcome:
    """How the wait for an exec's output ended (neither: the stream ended by itself)."""

    timed_out: bool = False
    vanished: bool = False


class ExecStream:
    """The hijacked connection of one exec, read by a daemon thread into two capped buffers."""

    def __init__(self, conn, output_limit_bytes: int, kill_after_output_bytes: int):
        self.conn, self.raw = conn, conn.sock
        self.out, self.err = OutputBuffer(output_limit_bytes), OutputBuffer(output_limit_bytes)
        self.over_limit = threading.Event()
        self._kill_after = kill_after_output_bytes
        self._reader = threading.Thread(target=self._pump, daemon=True)

    def _pump(self) -> None:
        """Read frames until the stream ends, breaks, or the output passes the kill-after cap (the caller then
        kills the command: a runaway writer must not fill memory or the disk)."""
        try:
            for stream, data in self.conn.frames():
                (self.err if stream == STDERR else self.out).feed(data)
                if self.out.total + self.err.total > self._kill_after:
                    self.over_limit.set()
                    return
        except (OSError, ValueError):
            return

    def start(self, stdin: bytes | None) -> None:
        """Start reading, then send stdin (if any) and half-close it so the command sees EOF. The reader runs
        first so a command that writes before it reads cannot block on a full pipe."""
        self._reader.start()
        if stdin is None:
            return
        try:
            self.raw.sendall(stdin)
            self.raw.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # the command exited without reading all of it: its exit code says what happened

    def wait(self, deadline: float | None, alive: Callable[[], bool]) -> WaitOutcome:
        """Wait for the stream to end, the output cap, the deadline (monotonic), or the container to vanish."""
        outcome = WaitOutcome()
        next_liveness = time.monotonic() + LIVENESS_SECONDS
        while self._reader.is_alive():
            wait = POLL_SECONDS if deadline is None else max(0.0, min(POLL_SECONDS, deadline - time.monotonic()))
            self._reader.join(wait)
            if self.over_limit.is_set():
                break
            if time.monotonic() >= next_liveness and self._reader.is_alive():
                next_liveness = time.monotonic() + LIVENESS_SECONDS
                if not alive():
                    outcome.vanished = True
                    break
            if deadline is not None and time.monotonic() >= deadline and self._reader.is_alive():
                outcome.timed_out = True
                break
        return outcome

    def close(self) -> None:
        """End the connection for good: shutdown() ends it even while other references (the SDK's SocketIO
        wrapper) keep the fd open. Then give the reader a moment to drain what was already received."""
        for end in (lambda: self.raw.shutdown(socket.SHUT_RDWR), self.raw.close, self.conn.close):
            try:
                end()
            except OSError:
                pass
        self._reader.join(CLOSE_JOIN_SECONDS)

    @property
    def output_bytes(self) -> int:
        return self.out.total + self.err.total
