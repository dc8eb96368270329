"""A fake model provider: a real HTTP server on 127.0.0.1 speaking the Anthropic Messages API
(`POST /v1/messages`) and OpenAI Chat Completions (`POST /v1/chat/completions`), tool calls included.

Tests and demos point the real SDKs at it (ANTHROPIC_BASE_URL=http://127.0.0.1:N,
OPENAI_BASE_URL=http://127.0.0.1:N/v1). It replays a script (demo/script.py) and can answer
429 with Retry-After, 500, 529, 401, or slowly, and can enforce a model's concurrency limit as real
providers do (429 + Retry-After beyond it). `GET /_fake/requests` returns what it was asked (model,
endpoint, message count, tools, the model's requests in progress on arrival) without headers, so no key
is ever kept.

    python -m envqa.demo.provider_server --script FILE --port N
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from envqa.core.errors import InputError
from envqa.demo.local_http import LocalHTTPServer, send_reply
from envqa.demo.script import Fault, Script, Turn, load_script

ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


class FakeProviderServer(LocalHTTPServer):
    """Start with `with FakeProviderServer(script) as srv:`; `srv.url` is the base address."""

    thread_name = "fake-provider"

    def __init__(self, script: Script | str | Path, port: int = 0):
        self.script = script if isinstance(script, Script) else load_script(script)
        self.requests: list[dict] = []
        self._fault_uses: dict[tuple[str, int], int] = {}
        self._seen: dict[str, int] = {}
        self._first: dict[str, float] = {}  # model -> monotonic time of its first request
        self._inflight: dict[str, int] = {}
        self._lock = threading.Lock()
        self._listen(_handler_for(self), port)

    # -- decisions, shared by both wire formats ---------------------------------------------------------
    def next_fault(self, model: str) -> Fault | None:
        with self._lock:
            seen = self._seen[model] = self._seen.get(model, 0) + 1
            age = time.monotonic() - self._first.setdefault(model, time.monotonic())
            for i, fault in enumerate(self.script.for_model(model).faults):
                used = self._fault_uses.get((model, i), 0)
                if fault.window_sec is not None and age >= fault.window_sec:
                    continue
                if seen > fault.after and (fault.times < 0 or used < fault.times):
                    self._fault_uses[(model, i)] = used + 1
                    return fault
        return None

    def admit(self, model: str) -> int | None:
        """Count a request as in progress: the model's count with it, or None (not counted) when the
        model's scripted `concurrency` is already reached."""
        limit = self.script.for_model(model).concurrency
        with self._lock:
            n = self._inflight.get(model, 0)
            if limit is not None and n >= limit:
                return None
            self._inflight[model] = n + 1
            return n + 1

    def done(self, model: str) -> None:
        with self._lock:
            self._inflight[model] -= 1

    def turn_for(self, model: str, assistant_turns: int, first_user_text: str = "") -> Turn:
        turns = self.script.for_model(model).turns_for(first_user_text)
        if assistant_turns < len(turns):
            return turns[assistant_turns]
        return Turn(text="(fake provider: script exhausted)")

    def key_ok(self, key: str | None) -> bool:
        return self.script.keys is None or key in self.script.keys

    def record(self, entry: dict) -> None:
        with self._lock:
            self.requests.append(entry)


def _handler_for(server: FakeProviderServer):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:  # keep demos and tests quiet; requests are in /_fake/requests
            pass

        def do_GET(self) -> None:
            if self.path == "/_fake/requests":
                with server._lock:
                    return self._send(200, {"requests": list(server.requests)})
            self._send(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except json.JSONDecodeError:
                return self._send(400, {"error": {"message": "body is not JSON"}})
            bearer = (self.headers.get("authorization") or "").removeprefix("Bearer ").strip() or None
            if self.path.rstrip("/").endswith("/messages"):  # the anthropic SDK sends x-api-key or a bearer
                return self._serve(body, "anthropic", self.headers.get("x-api-key") or bearer)
            if self.path.rstrip("/").endswith("/chat/completions"):
                return self._serve(body, "openai", bearer)
            self._send(404, {"error": {"message": f"no route {self.path}"}})

        def _serve(self, body: dict, dialect: str, key: str | None) -> None:
            model = str(body.get("model", ""))
            messages = body.get("messages") or []
            entry = {
                "t": time.time(),
                "status": 200,
                "dialect": dialect,
                "model": model,
                "messages": len(messages),
                "tools": [_tool_name(t) for t in body.get("tools") or []],
                "tool_choice": body.get("tool_choice"),
                "last": _last_text(messages),
            }
            server.record(entry)
            if not server.key_ok(key):
                entry["status"] = 401
                return self._error(
                    dialect, 401, "invalid x-api-key" if dialect == "anthropic" else "Incorrect API key provided"
                )
            inflight = entry["inflight"] = server.admit(model)
            if inflight is None:  # over the model's own limit: refused, never in progress
                entry["status"], entry["over_limit"] = 429, True
                retry_after = server.script.for_model(model).concurrency_retry_after
                return self._error(dialect, 429, "concurrency limit reached", {"retry-after": f"{retry_after:g}"})
            try:
                reply = self._answer(body, dialect, model, messages, entry)
            finally:
                server.done(model)  # before the reply is sent: a client that reacts to it finds the slot free
            self._send(*reply)

        def _answer(self, body: dict, dialect: str, model: str, messages: list, entry: dict) -> tuple:
            """(status, payload, headers) for an admitted request: a scripted fault or the next turn."""
            fault = server.next_fault(model)
            if fault is not None:
                time.sleep(fault.delay)
                if fault.status is not None:
                    entry["status"] = fault.status
                    headers = {"retry-after": f"{fault.retry_after:g}"} if fault.retry_after is not None else {}
                    return (
                        fault.status,
                        _error_body(dialect, fault.status, fault.message or f"scripted HTTP {fault.status}"),
                        headers,
                    )
            turn = server.turn_for(
                model, sum(1 for m in messages if m.get("role") == "assistant"), _first_user_text(messages)
            )
            time.sleep(turn.delay)
            usage_in = turn.usage.input if turn.usage.input is not None else max(1, len(json.dumps(body)) // 4)
            usage_out = turn.usage.output if turn.usage.output is not None else max(1, len(turn.text) // 4 + 10)
            payload = (
                _anthropic_reply(model, turn, usage_in, usage_out)
                if dialect == "anthropic"
                else _openai_reply(model, turn, usage_in, usage_out)
            )
            return 200, payload, None

        def _error(self, dialect: str, status: int, message: str, headers: dict | None = None) -> None:
            self._send(status, _error_body(dialect, status, message), headers)

        def _send(self, status: int, payload: Any, headers: dict | None = None) -> None:
            send_reply(self, status, payload, headers)

    return Handler


def _error_body(dialect: str, status: int, message: str) -> dict:
    if dialect == "anthropic":
        return {"type": "error", "error": {"type": ANTHROPIC_ERROR_TYPES.get(status, "api_error"), "message": message}}
    code = {429: "rate_limit_exceeded", 401: "invalid_api_key"}.get(status)
    return {"error": {"message": message, "type": "error", "code": code}}


def _tool_name(tool: dict) -> str:
    return tool.get("name") or (tool.get("function") or {}).get("name", "?")


def _first_user_text(messages: list[dict]) -> str:
    first = next((m for m in messages if m.get("role") == "user"), None)
    return _content_text(first.get("content")) if first else ""


def _content_text(content) -> str:
    if isinstance(content, list):
        return " ".join(str(b.get("text") or b.get("content") or "") for b in content if isinstance(b, dict))
    return str(content or "")


def _last_text(messages: list[dict]) -> str:
    if not messages:
        return ""
    return _content_text(messages[-1].get("content"))[:4000]


def _anthropic_reply(model: str, turn: Turn, usage_in: int, usage_out: int) -> dict:
    content: list[dict] = [{"type": "text", "text": turn.text}] if turn.text else []
    for call in turn.tool_calls:
        content.append(
            {
                "type": "tool_use",
                "id": f"toolu_{uuid.uuid4().hex[:20]}",
                "name": call.name,
                "input": call.arguments if call.raw_arguments is None else call.raw_arguments,
            }
        )
    return {
        "id": f"msg_{uuid.uuid4().hex[:20]}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "max_tokens"
        if turn.finish_reason == "length"
        else turn.finish_reason or ("tool_use" if turn.tool_calls else "end_turn"),
        "stop_sequence": None,
        "usage": {"input_tokens": usage_in, "output_tokens": usage_out},
    }


def _openai_reply(model: str, turn: Turn, usage_in: int, usage_out: int) -> dict:
    message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
    if turn.tool_calls:
        message["tool_calls"] = [
            {
                "id": f"call_{uuid.uuid4().hex[:20]}",
                "type": "function",
                "function": {
                    "name": c.name,
                    "arguments": c.raw_arguments if c.raw_arguments is not None else json.dumps(c.arguments),
                },
            }
            for c in turn.tool_calls
        ]
    reply = {
        "id": f"chatcmpl-{uuid.uuid4().hex[:20]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": turn.finish_reason or ("tool_calls" if turn.tool_calls else "stop"),
            }
        ],
        "usage": {"prompt_tokens": usage_in, "completion_tokens": usage_out, "total_tokens": usage_in + usage_out},
    }
    if turn.omit_usage:
        del reply["usage"]
    return reply


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--script", required=True, type=Path, help="JSON or YAML script file")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free port)")
    args = parser.parse_args(argv)
    try:
        srv = FakeProviderServer(args.script, args.port)
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    srv.serve_until_interrupted(
        f"fake provider listening on {srv.url}  (ANTHROPIC_BASE_URL={srv.url} OPENAI_BASE_URL={srv.url}/v1)",
        lambda line: print(line, flush=True),
    )


if __name__ == "__main__":
    main()
