"""Implementing versus using (issue 35, item 6): `pass-runs-existing-tool` and the wrap-tool exploit read the task
for a request to *implement* a tool (or a prohibition of it), not for a result the tool legitimately produces.

"Compute the SHA-256 digest of a file" asks for a result: sha256sum is the right way. "Implement SHA-256 without
hashlib" asks for the tool. The tests can forbid it too (`assert "hashlib" not in source`). The examples go
through `qa run` in tests/probes/test_detection.py (wraps-sha256-no-hashlib, clean-computes-sha256-digest).
"""

from __future__ import annotations

import pytest

from envqa.core.environment import load_environment
from envqa.core.wrap_tools import task_tests_text, wrapped_tools
from qa_testkit import EXAMPLES

pytestmark = pytest.mark.fast

IMPLEMENT = [
    # the issue's own phrasings of an implementation request
    "Implement SHA-256 yourself, in Python, as `/app/sha256.py`. Do not use `hashlib` or `sha256sum`.",
    "Write a compressor: a gzip compressor at /app/gz that reads stdin and writes a gzip stream to stdout.",
    "Build a C compiler for the subset below and install it as /app/cc.",
    # a result, but the tool is forbidden: using it breaks the instruction
    "Compute the SHA-256 digest of /app/data.bin without using sha256sum, openssl or hashlib, and write it to "
    "/app/digest.txt.",
    # Terminal-Bench-style wording: a tool of the agent's own
    "Create a small base64 encoder of your own in C at /app/b64.c; it reads stdin and writes the encoding.",
]
USE = [
    # the issue's own phrasing: a result the standard tool produces
    "Compute the SHA-256 digest of a file: write the digest of /app/data.bin to /app/digest.txt.",
    "Produce a SHA-256 checksum manifest of the files in `/app/data`: write `/app/checksums.txt`.",
    "Write the base64 encoding of /app/key.bin to /app/key.txt.",
    "Create a Makefile that will compile the C sources in /app/src into /app/bin/app.",
    "Your C program must compile without warnings.",
    "Write the MD5 checksum of every file under /srv/www to /app/md5.txt so the deploy can be verified.",
]


@pytest.mark.parametrize("text", IMPLEMENT)
def test_asking_to_implement_or_forbidding_the_tool_is_a_request(text):
    assert wrapped_tools(text), text


@pytest.mark.parametrize("text", USE)
def test_asking_for_a_result_is_not_a_request(text):
    assert wrapped_tools(text) == set(), text


@pytest.mark.parametrize(
    "tests_text",
    [
        'src = open("/app/sha.py").read()\nassert "hashlib" not in src\n',  # pytest, ours
        "! grep -q sha256sum /app/sha.sh || exit 1\n",  # test.sh, shell
    ],
)
def test_a_test_that_forbids_the_tool_makes_it_a_request(tests_text):
    instruction = "Compute the SHA-256 digest of /app/data.bin and write it to /app/digest.txt."
    assert wrapped_tools(instruction) == set()
    assert "sha256sum" in wrapped_tools(instruction, tests_text=tests_text)
    # look-alike: a test that only uses hashlib to compute the expected value forbids nothing
    assert (
        wrapped_tools(instruction, tests_text="import hashlib\nexpected = hashlib.sha256(b'x').hexdigest()\n") == set()
    )


@pytest.mark.parametrize(
    "name, want",
    [
        ("wraps-sha256-no-hashlib", True),
        ("clean-computes-sha256-digest", False),
        ("wraps-sha256-digest", True),
        ("wraps-gcc", True),
        ("clean-uses-gcc-legitimately", False),
    ],
)
def test_examples(name, want):
    env = load_environment(EXAMPLES / name)
    assert bool(wrapped_tools(env.instruction, tests_text=task_tests_text(env))) == want
