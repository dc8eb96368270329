"""One GET with a deadline, for the index clients: it answers, or says in a few words why not, and never hangs.

urllib's timeout bounds each socket operation, not an answer: a server that sends one byte a second, or a name
that takes a minute to resolve, would hold a lint for as long as it likes. So the request runs in a daemon thread
and the caller waits for it until its deadline (time.monotonic()); the body is read in chunks, each chunk's wait
bounded by the read timeout and the whole by the deadline. A thread left behind by a black-holed resolver dies
with the process (daemon), holding nothing the caller needs.
"""

from __future__ import annotations

import queue
import socket
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from urllib.parse import urlsplit

CHUNK = 1 << 16


class Unanswered(Exception):
    """The index did not answer (unreachable, timed out, an HTTP error other than 404, too large): `why` is the
    few words a "pins not checked" note shows."""

    def __init__(self, why: str):
        super().__init__(why)
        self.why = why


@dataclass(frozen=True)
class Response:
    status: int  # 200, or 404 (the caller decides what a missing page means)
    content_type: str
    body: bytes
    url: str  # after redirects


@dataclass(frozen=True)
class Limits:
    connect_timeout: float
    read_timeout: float
    max_bytes: int


def host_of(url: str) -> str:
    return urlsplit(url).netloc or url


def _read(url: str, headers: dict[str, str], limits: Limits, deadline: float) -> Response:
    request = urllib.request.Request(url, headers={"User-Agent": "envqa-online-pins", **headers})
    timeout = max(0.05, min(limits.connect_timeout, deadline - time.monotonic()))
    try:
        reply = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as e:
        if e.code == 404:
            return Response(404, "", b"", url)
        raise Unanswered(f"{host_of(url)} answered HTTP {e.code}") from None
    with reply:
        sock = getattr(getattr(getattr(reply, "fp", None), "raw", None), "_sock", None)
        chunks, size = [], 0
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Unanswered(f"{host_of(url)} did not finish answering in time")
            if isinstance(sock, socket.socket) and sock.fileno() >= 0:  # closed once the whole body is read
                sock.settimeout(max(0.05, min(limits.read_timeout, left)))
            chunk = reply.read(CHUNK)
            if not chunk:
                break
            size += len(chunk)
            if size > limits.max_bytes:
                raise Unanswered(f"{host_of(url)} sent more than {limits.max_bytes // (1024 * 1024)} MB")
            chunks.append(chunk)
        return Response(reply.status, reply.headers.get("Content-Type", ""), b"".join(chunks), reply.geturl())


def _reason(e: BaseException, url: str) -> str:
    host = host_of(url)
    if isinstance(e, Unanswered):
        return e.why
    if isinstance(e, TimeoutError | socket.timeout):
        return f"{host} did not answer in time"
    if isinstance(e, urllib.error.URLError):
        return f"{host} is unreachable ({getattr(e.reason, 'strerror', None) or e.reason})"
    if isinstance(e, ConnectionError | OSError):
        return f"{host} is unreachable ({e.strerror or type(e).__name__})"
    return f"{host} gave an unreadable answer ({type(e).__name__})"


def get(url: str, headers: dict[str, str], limits: Limits, deadline: float) -> Response:
    """GET `url`, finished by `deadline` or Unanswered. A 404 is a Response (the page is not there), any other
    failure Unanswered with its reason."""
    if time.monotonic() >= deadline:
        raise Unanswered(f"{host_of(url)} was not asked: the task's time budget was spent")
    box: queue.Queue[tuple[bool, object]] = queue.Queue(maxsize=1)

    def work() -> None:
        try:
            box.put((True, _read(url, headers, limits, deadline)))
        except BaseException as e:  # noqa: BLE001 - every failure becomes the caller's Unanswered
            box.put((False, e))

    threading.Thread(target=work, name=f"index-get {host_of(url)}", daemon=True).start()
    try:
        ok, value = box.get(timeout=max(0.0, deadline - time.monotonic()))
    except queue.Empty:
        raise Unanswered(f"{host_of(url)} did not answer in time") from None
    if ok:
        assert isinstance(value, Response)
        return value
    assert isinstance(value, BaseException)
    raise Unanswered(_reason(value, url))
