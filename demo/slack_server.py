"""A fake Slack Web API: a real HTTP server on 127.0.0.1 that the real `slack_sdk.WebClient` talks to
through `base_url` (`[slack] api_base_url = "http://127.0.0.1:N/api/"`).

It implements what envqa uses: `auth.test`, `chat.postMessage`, `chat.update`, `chat.postEphemeral`,
`usergroups.users.list`, and the three steps of `files_upload_v2` (`files.getUploadURLExternal`, a POST of
the bytes to the upload URL it hands out, `files.completeUploadExternal`). It also accepts `response_url`
posts (`POST /_fake/response/<id>`), the URL Slack puts in every interaction payload.

Every call is recorded without its headers (so no token is ever kept) and can be read at
`GET /_fake/calls`. Faults are scriptable per method: `srv.fail("chat.postMessage", 429, retry_after=1)`
then `srv.fail("chat.postMessage", 500)` answers the next two calls with a 429 and a 500, in that order.

    python -m envqa.demo.slack_server --port N [--token xoxb-...]
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from envqa.demo.local_http import LocalHTTPServer, send_reply


@dataclass
class SlackFault:
    status: int
    retry_after: float | None = None
    delay: float = 0.0


class FakeSlackServer(LocalHTTPServer):
    """Start with `with FakeSlackServer(token) as srv:`; `srv.api_url` is the WebClient base_url."""

    thread_name = "fake-slack"

    def __init__(self, token: str | None = None, port: int = 0, groups: dict[str, list[str]] | None = None):
        self.token = token
        self.groups = dict(groups or {})
        self.calls: list[dict] = []
        self.files: dict[str, dict] = {}
        self._faults: dict[str, deque[SlackFault]] = {}
        self._ts = 0
        self._lock = threading.Lock()
        self._listen(_handler_for(self), port)

    @property
    def api_url(self) -> str:
        return self.url + "/api/"

    # -- scripting and inspection ------------------------------------------------------------------------
    def fail(self, method: str, status: int, retry_after: float | None = None, delay: float = 0.0) -> None:
        """Answer the next not-yet-faulted call of `method` with `status` (queued in order)."""
        with self._lock:
            self._faults.setdefault(method, deque()).append(SlackFault(status, retry_after, delay))

    def calls_to(self, method: str, ok_only: bool = False) -> list[dict]:
        with self._lock:
            return [c for c in self.calls if c["method"] == method and (c["status"] == 200 or not ok_only)]

    def _next_fault(self, method: str) -> SlackFault | None:
        with self._lock:
            queue = self._faults.get(method)
            return queue.popleft() if queue else None

    def _next_ts(self) -> str:
        with self._lock:
            self._ts += 1
            return f"{int(time.time())}.{self._ts:06d}"

    def _record(self, entry: dict) -> None:
        with self._lock:
            self.calls.append(entry)

    # -- the Web API methods ------------------------------------------------------------------------------
    def answer(self, method: str, args: dict[str, Any]) -> dict:
        channel = args.get("channel") or args.get("channel_id")
        if method == "auth.test":
            return {
                "ok": True,
                "url": self.url + "/",
                "team": "fake",
                "user": "envqa",
                "team_id": "T0FAKE",
                "user_id": "U0ENVQA",
                "bot_id": "B0ENVQA",
            }
        if method in ("chat.postMessage", "chat.update"):
            if not channel:
                return {"ok": False, "error": "channel_not_found"}
            ts = args.get("ts") if method == "chat.update" else self._next_ts()
            return {
                "ok": True,
                "channel": channel,
                "ts": ts,
                "message": {
                    "text": args.get("text"),
                    "blocks": args.get("blocks"),
                    "ts": ts,
                    "thread_ts": args.get("thread_ts"),
                },
            }
        if method == "chat.postEphemeral":
            return {"ok": True, "message_ts": self._next_ts()}
        if method == "usergroups.users.list":
            group = args.get("usergroup")
            if group not in self.groups:
                return {"ok": False, "error": "no_such_subteam"}
            return {"ok": True, "users": self.groups[group]}
        if method == "files.getUploadURLExternal":
            file_id = f"F{len(self.files) + 1:08d}"
            with self._lock:
                self.files[file_id] = {
                    "filename": args.get("filename"),
                    "length": int(args.get("length") or 0),
                    "content": None,
                }
            return {"ok": True, "upload_url": f"{self.url}/_fake/upload/{file_id}", "file_id": file_id}
        if method == "files.completeUploadExternal":
            listed = json.loads(args.get("files") or "[]")
            out = []
            for f in listed:
                stored = self.files.get(f.get("id"))
                if stored is None or stored["content"] is None:
                    return {"ok": False, "error": "file_not_found"}
                stored.update(title=f.get("title"), channel=channel, thread_ts=args.get("thread_ts"))
                out.append({"id": f["id"], "name": stored["filename"], "title": f.get("title")})
            return {"ok": True, "files": out}
        return {"ok": False, "error": "unknown_method"}


def _parse_args(handler: BaseHTTPRequestHandler, raw: bytes) -> dict[str, Any]:
    """WebClient sends some methods as JSON, others as a form or query string: merge them all."""
    args: dict[str, Any] = dict(parse_qsl(urlsplit(handler.path).query))
    ctype = (handler.headers.get("content-type") or "").split(";")[0].strip()
    if raw and ctype == "application/json":
        args.update(json.loads(raw))
    elif raw:
        args.update(parse_qsl(raw.decode()))
    if isinstance(args.get("blocks"), str):
        args["blocks"] = json.loads(args["blocks"])
    return args


def _handler_for(server: FakeSlackServer):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:  # quiet; calls are in /_fake/calls
            pass

        def do_GET(self) -> None:
            if self.path == "/_fake/calls":
                with server._lock:
                    return self._send(200, {"calls": list(server.calls), "files": dict(server.files)})
            self._send(404, {"ok": False, "error": "no_route"})

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            path = urlsplit(self.path).path
            if path.startswith("/_fake/upload/"):
                return self._upload(path.rsplit("/", 1)[-1], raw)
            if path.startswith("/_fake/response/"):
                server._record(
                    {
                        "t": time.time(),
                        "method": "response_url",
                        "status": 200,
                        "id": path.rsplit("/", 1)[-1],
                        "args": json.loads(raw or b"{}"),
                    }
                )
                return self._send(200, {"ok": True}, raw_text="ok")
            if not path.startswith("/api/"):
                return self._send(404, {"ok": False, "error": "no_route"})
            method = path.removeprefix("/api/")
            try:
                args = _parse_args(self, raw)
            except (json.JSONDecodeError, UnicodeDecodeError):
                return self._send(400, {"ok": False, "error": "invalid_form_data"})
            args.pop("token", None)
            entry = {"t": time.time(), "method": method, "status": 200, "args": args}
            server._record(entry)
            bearer = (self.headers.get("authorization") or "").removeprefix("Bearer ").strip()
            if server.token is not None and bearer != server.token:
                return self._send(200, {"ok": False, "error": "invalid_auth"})
            fault = server._next_fault(method)
            if fault is not None:
                time.sleep(fault.delay)
                entry["status"] = fault.status
                headers = {"Retry-After": f"{fault.retry_after:g}"} if fault.retry_after is not None else {}
                error = "ratelimited" if fault.status == 429 else "fatal_error"
                return self._send(fault.status, {"ok": False, "error": error}, headers)
            reply = server.answer(method, args)
            entry.update(ok=reply.get("ok"), ts=reply.get("ts"))
            self._send(200, reply)

        def _upload(self, file_id: str, raw: bytes) -> None:
            with server._lock:
                stored = server.files.get(file_id)
                if stored is not None:
                    stored["content"] = raw.decode(errors="replace")
            server._record({"t": time.time(), "method": "upload", "status": 200 if stored else 404, "id": file_id})
            self._send(200 if stored else 404, {}, raw_text=f"OK - {len(raw)}")

        def _send(self, status: int, payload: Any, headers: dict | None = None, raw_text: str | None = None) -> None:
            send_reply(self, status, payload, headers, raw_text)

    return Handler


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free port)")
    parser.add_argument("--token", default=None, help="bot token to require (default: accept any)")
    args = parser.parse_args(argv)
    srv = FakeSlackServer(args.token, args.port)
    srv.serve_until_interrupted(
        f'fake Slack listening on {srv.url}  ([slack] api_base_url = "{srv.api_url}")',
        lambda line: print(line, flush=True),
    )


if __name__ == "__main__":
    main()
