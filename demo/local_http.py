"""What the local fake servers (model providers, Slack) share: a threaded HTTP server on 127.0.0.1 that
starts on a free port in a daemon thread, and a JSON (or text) reply that tolerates a client that hung up.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class LocalHTTPServer:
    """Base of the fakes: `with Fake(...) as srv:` serves on `srv.url` until the block ends."""

    thread_name = "fake-server"

    def _listen(self, handler: type[BaseHTTPRequestHandler], port: int = 0) -> None:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self):
        self._thread = threading.Thread(target=self._httpd.serve_forever, name=self.thread_name, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def serve_until_interrupted(self, banner: str, say: Callable[[str], None] = print) -> None:
        """For `python -m envqa.demo.<name>`: serve in the foreground until Ctrl-C."""
        say(banner)
        try:
            self._httpd.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            self._httpd.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def send_reply(
    handler: BaseHTTPRequestHandler, status: int, payload: Any, headers: dict | None = None, raw_text: str | None = None
) -> None:
    """A JSON reply (or `raw_text` as text/plain) with content-length, so keep-alive clients work."""
    data = raw_text.encode() if raw_text is not None else json.dumps(payload).encode()
    handler.send_response(status)
    handler.send_header("content-type", "text/plain" if raw_text is not None else "application/json")
    handler.send_header("content-length", str(len(data)))
    for k, v in (headers or {}).items():
        handler.send_header(k, v)
    handler.end_headers()
    try:
        handler.wfile.write(data)
    except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test): fine
        handler.close_connection = True
