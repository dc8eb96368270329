"""Everything the sandbox takes from docker-py beyond its documented API, in one place.

Two things the public API cannot do: a build we can abort at a deadline (`images.build` hides its HTTP
response, so we post to /build ourselves and keep the socket to shut it down), and an exec whose stdin we
can close and whose output we read frame by frame with a byte cap (`start_exec`: the hijacked connection,
read through the HTTP response's buffer, which docker-py's `exec_start(socket=True)` loses).
Both use docker-py internals; they are listed in `REQUIRED` and checked by
tests/foundation/test_docker_adapter.py, which fails on a docker-py release that no longer has them.
"""

from __future__ import annotations

import inspect
import socket
from collections.abc import Iterator

from docker.api.client import APIClient
from docker.utils import socket as docker_socket

# (owner, attribute, parameters it must accept)
REQUIRED: list[tuple[object, str, tuple[str, ...]]] = [
    (APIClient, "_post", ()),
    (APIClient, "_url", ("pathfmt",)),
    (APIClient, "_raise_for_status", ("response",)),
    (APIClient, "_get_raw_response_socket", ("response",)),
    (APIClient, "_stream_helper", ("response", "decode")),
    (APIClient, "exec_start", ("exec_id", "socket")),
    (APIClient, "_post_json", ("url", "data")),
    (APIClient, "_get_raw_response_socket", ("response",)),
    (docker_socket, "frames_iter", ("socket", "tty")),
]


def problems() -> list[str]:
    """What the installed docker-py lacks of `REQUIRED` (empty when it has everything)."""
    out = []
    for owner, name, params in REQUIRED:
        attr = getattr(owner, name, None)
        where = getattr(owner, "__name__", str(owner))
        if attr is None:
            out.append(f"{where}.{name} is gone")
            continue
        missing = [p for p in params if p not in inspect.signature(attr).parameters]
        if missing:
            out.append(f"{where}.{name}{inspect.signature(attr)}: no parameter {', '.join(missing)}")
    return out


def post_build(api: APIClient, context: bytes, params: dict):
    """POST /build with a tar context; returns the streaming response (raises docker's APIError on 4xx/5xx)."""
    response = api._post(
        api._url("/build"),
        data=context,
        params=params,
        stream=True,
        timeout=None,
        headers={"Content-Type": "application/tar"},
    )
    api._raise_for_status(response)
    return response


def response_socket(api: APIClient, response):
    """The socket under a streaming response: shutting it down makes the engine cancel the build."""
    return api._get_raw_response_socket(response)


def json_stream(api: APIClient, response) -> Iterator[dict]:
    """The build's progress messages, decoded."""
    return api._stream_helper(response, decode=True)


def raw_socket(sock) -> socket.socket:
    """The real socket under `exec_start(socket=True)`'s wrapper (for sendall, shutdown, close)."""
    return getattr(sock, "_sock", sock)


def frames(sock) -> Iterator[tuple[int, bytes]]:
    """(stream, bytes) frames of a non-tty exec (stream 1 stdout, 2 stderr)."""
    return docker_socket.frames_iter(sock, tty=False)


class ExecConnection:
    """A started exec's hijacked connection: `frames()` yields its (stream, bytes) output frames, `sock` is
    the real socket (stdin's `sendall`, `shutdown`); `close()` releases everything."""

    def __init__(self, response, reader, sock: socket.socket):
        self.response, self.reader, self.sock = response, reader, sock  # the response keeps the reader alive

    def frames(self) -> Iterator[tuple[int, bytes]]:
        """Frames of a non-tty exec (stream 1 stdout, 2 stderr) until EOF. Read through the buffered
        reader http.client parsed the response head with: a command fast enough to answer before this
        process read that head (a loaded machine) has its first frames in that buffer already, and
        reading the raw socket, as docker-py's `frames_iter` on `exec_start(socket=True)` does, loses
        them: exit 0 and no output (docker/docker-py#3332; tests/sandbox/test_exec_output.py)."""
        while True:
            head = self.reader.read(8)  # blocks until 8 bytes or EOF
            if len(head) < 8:
                return
            stream, size = head[0], int.from_bytes(head[4:8], "big")
            while size > 0:
                data = self.reader.read1(min(size, 65536))  # what is buffered, else one read of the socket
                if not data:
                    return
                size -= len(data)
                yield stream, data

    def close(self) -> None:
        try:
            self.response.close()
        except (OSError, ValueError):  # already closed under us (the socket was shut down first)
            pass


def start_exec(api: APIClient, exec_id: str) -> ExecConnection:
    """Start a created (non-tty) exec and take over its connection; raises docker's APIError."""
    response = api._post_json(
        api._url("/exec/{0}/start", exec_id),
        data={"Tty": False, "Detach": False},
        headers={"Connection": "Upgrade", "Upgrade": "tcp"},
        stream=True,
    )
    sock = raw_socket(api._get_raw_response_socket(response))  # raises APIError on 4xx/5xx
    reader = getattr(getattr(response.raw, "_fp", None), "fp", None)  # http.client's buffered reader
    if reader is None or not hasattr(reader, "read1"):
        reader = sock.makefile("rb")  # another HTTP stack: no head buffer of its own to drain
    sock.settimeout(None)  # the caller keeps the deadline (and shuts the socket down to stop reading)
    return ExecConnection(response, reader, sock)
