"""A tiny HTTP(S) proxy that lets through only allowed hosts; it runs inside the egress proxy container.

Standalone (stdlib only): `python3 egress_proxy.py PORT HOST...`. Handles CONNECT host:port (HTTPS and any
TCP) and absolute-form plain HTTP requests (`GET http://host/path`). A host is allowed when it equals an
entry or, for entries starting with `*.` or `.`, ends with that suffix. Every decision is one log line on
stdout (`ALLOWED`/`DENIED method host:port`), which is the evidence `docker logs` shows.
"""

import select
import socket
import socketserver
import sys
import urllib.parse

ALLOWED: list[str] = []


def allowed(host: str) -> bool:
    host = host.lower().rstrip(".")
    for entry in ALLOWED:
        entry = entry.lower().rstrip(".")
        if entry.startswith(("*.", ".")):
            if host.endswith("." + entry.lstrip("*.")):
                return True
        elif host == entry:
            return True
    return False


def log(word: str, method: str, host: str, port: int) -> None:
    print(f"{word} {method} {host}:{port}", flush=True)


def pipe(a: socket.socket, b: socket.socket) -> None:
    socks = [a, b]
    while True:
        ready, _, _ = select.select(socks, [], [], 60)
        if not ready:
            return
        for s in ready:
            data = s.recv(65536)
            if not data:
                return
            (b if s is a else a).sendall(data)


class Handler(socketserver.StreamRequestHandler):
    rbufsize = 0  # unbuffered: bytes after the headers (a request body) must reach the upstream via `pipe`

    def reply(self, code: int, reason: str) -> None:
        body = f"envqa egress proxy: {reason}\n".encode()
        self.wfile.write(
            f"HTTP/1.1 {code} {reason}\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body
        )

    def handle(self) -> None:
        line = self.rfile.readline(8192).decode("latin-1").strip()
        headers = []
        while True:
            h = self.rfile.readline(8192)
            if h in (b"\r\n", b"\n", b""):
                break
            headers.append(h)
        try:
            method, target, version = line.split(" ", 2)
        except ValueError:
            return self.reply(400, "Bad Request")
        if method == "CONNECT":
            host, _, port = target.rpartition(":")
            port = int(port or 443)
        else:
            url = urllib.parse.urlsplit(target)
            host, port = url.hostname or "", url.port or 80
        if not host or not allowed(host):
            log("DENIED", method, host, port)
            return self.reply(403, "Forbidden")
        try:
            upstream = socket.create_connection((host, port), timeout=10)
        except OSError as e:
            log("FAILED", method, host, port)
            return self.reply(502, f"Bad Gateway ({e})")
        log("ALLOWED", method, host, port)
        with upstream:
            if method == "CONNECT":
                self.wfile.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                path = urllib.parse.urlunsplit(("", "", url.path or "/", url.query, ""))
                kept = [h for h in headers if not h.lower().startswith((b"proxy-", b"connection:"))]
                upstream.sendall(
                    f"{method} {path} {version}\r\n".encode() + b"".join(kept) + b"Connection: close\r\n\r\n"
                )
            self.wfile.flush()
            pipe(self.connection, upstream)


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


if __name__ == "__main__":
    ALLOWED.extend(sys.argv[2:])
    print(f"envqa egress proxy on :{sys.argv[1]}, allowed: {' '.join(ALLOWED) or '(nothing)'}", flush=True)
    Server(("0.0.0.0", int(sys.argv[1])), Handler).serve_forever()
