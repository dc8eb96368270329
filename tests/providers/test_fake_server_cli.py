"""`python -m envqa.demo.provider_server --script FILE --port N`: the demo entry point, YAML scripts."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import openai
import pytest

pytestmark = pytest.mark.fast  # the fast tier (make test-fast): no Docker, Redis or Postgres


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_module_serves_a_yaml_script_to_the_openai_sdk(tmp_path):
    script = tmp_path / "demo.yaml"
    script.write_text(
        "models:\n  '*':\n    turns:\n      - text: hello from the script\n        usage: {input: 11, output: 3}\n"
    )
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "envqa.demo.provider_server", "--script", str(script), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert f"http://127.0.0.1:{port}" in proc.stdout.readline()
        client = openai.OpenAI(api_key="anything", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0)
        deadline = time.monotonic() + 10
        while True:  # the line is printed just before serve_forever; poll until it answers
            try:
                reply = client.chat.completions.create(model="demo", messages=[{"role": "user", "content": "hi"}])
                break
            except openai.APIConnectionError:
                assert time.monotonic() < deadline
                time.sleep(0.05)
        assert reply.choices[0].message.content == "hello from the script"
        assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (11, 3)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_bad_script_names_the_file_and_exits_2(tmp_path):
    script = tmp_path / "bad.yaml"
    script.write_text("models:\n  m:\n    turns:\n      - txt: typo\n")
    proc = subprocess.run(
        [sys.executable, "-m", "envqa.demo.provider_server", "--script", str(script)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 2 and str(script) in proc.stderr and "txt" in proc.stderr
