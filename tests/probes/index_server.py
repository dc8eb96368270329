"""A local package index for the online pin tests: a Debian archive's Packages files and a PEP 691 / PEP 503 simple
index, served on 127.0.0.1 from a dict, counting every request; paths under /slow/ wait for an Event (the test
releases it at teardown) so that a deadline, not the server, ends the request."""

from __future__ import annotations

import gzip
import json
import lzma
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PACKAGES_MAIN = b"""Package: python3-minimal
Source: python3-defaults (3.11.2-1)
Version: 3.11.2-1+b1
Architecture: amd64
Description: minimal subset of the Python language (default python3 version)
 Version: 0.0 (a continuation line, not a field)

Package: bash
Version: 5.2.15-2+b13
Architecture: amd64

Package: libc6
Version: 2.36-9+deb12u13
Architecture: amd64
"""
PACKAGES_UPDATES = b"Package: tzdata\nVersion: 2025b-0+deb12u2\nArchitecture: all\n"
PACKAGES_SECURITY = b"Package: openssl\nVersion: 1:3.0.17-1~deb12u3\nArchitecture: amd64\n"
JSON = "application/vnd.pypi.simple.v1+json"


def simple_json(name: str, files: list[str], versions: list[str] | None = None) -> bytes:
    data: dict = {"meta": {"api-version": "1.1" if versions else "1.0"}, "name": name}
    data["files"] = [{"filename": f, "url": f"../../files/{f}", "hashes": {}} for f in files]
    if versions is not None:
        data["versions"] = versions
    return json.dumps(data).encode()


def debian_files() -> dict[str, tuple[str, bytes]]:
    base = "/debian/dists"
    return {
        f"{base}/bookworm/main/binary-amd64/Packages.xz": ("application/x-xz", lzma.compress(PACKAGES_MAIN)),
        f"{base}/bookworm-updates/main/binary-amd64/Packages.gz": ("application/gzip", gzip.compress(PACKAGES_UPDATES)),
        "/debian-security/dists/bookworm-security/main/binary-amd64/Packages": ("text/plain", PACKAGES_SECURITY),
    }


def pypi_files() -> dict[str, tuple[str, bytes]]:
    return {
        "/simple/simplejson/": (JSON, simple_json("simplejson", ["simplejson-3.19.2.tar.gz"], ["3.19.1", "3.19.2"])),
        "/simple/requests/": (
            JSON,
            simple_json("requests", ["requests-2.31.0-py3-none-any.whl", "requests-2.32.3.tar.gz"]),
        ),
        "/simple/python-dateutil/": (JSON, simple_json("python-dateutil", ["python-dateutil-2.8.2.tar.gz"])),
        "/torch/torch/": (
            "text/html",
            b'<html><body><a href="/files/torch-2.1.0%2Bcpu-cp311-cp311-linux_x86_64.whl#sha256=ab">'
            b"torch-2.1.0+cpu-cp311-cp311-linux_x86_64.whl</a></body></html>",
        ),
    }


@dataclass
class IndexServer:
    url: str
    requests: list[str]
    release: threading.Event
    files: dict[str, tuple[str, bytes]] = field(default_factory=dict)


def start_index_server() -> tuple[IndexServer, ThreadingHTTPServer]:
    files = {**debian_files(), **pypi_files()}
    seen: list[str] = []
    release = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.path)
            path = self.path
            if path.startswith("/slow/"):
                release.wait(timeout=60)  # the test's deadline ends the request long before; teardown sets it
                path = path[len("/slow") :]
            if path not in files:
                self.send_error(404)
                return
            kind, body = files[path]
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return IndexServer(f"http://127.0.0.1:{httpd.server_address[1]}", seen, release, files), httpd
