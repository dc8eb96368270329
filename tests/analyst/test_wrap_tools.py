"""Wrap-tool detection reads what a task asks to be built, not one phrasing; mentioning a tool is not asking.

The phrasings below include the issue's own miss ("a compiler for a restricted subset of C") and the new
examples' instructions (examples/wraps-c-translator, wraps-sha256-digest, clean-mentions-compiler). The
examples themselves go through `qa run` in tests/probes/test_detection.py (expected rules, labels).
"""

from __future__ import annotations

import pytest

from envqa.core.environment import load_environment
from envqa.core.wrap_tools import requested_tool_kinds, wrap_candidates, wrapped_tools
from qa_testkit import EXAMPLES

pytestmark = pytest.mark.fast  # the fast tier (make test-fast): no Docker, Redis or Postgres

ASKS = {
    "Write a compiler for a restricted subset of C at /app/cc.": "c-compiler",
    "Build a translator that turns programs in a restricted C dialect into Linux executables.": "c-compiler",
    "`/app/cc` must compile C programs into executables.": "c-compiler",
    "Implement a C++ compiler front end as /app/cxx.": "c++-compiler",
    "Provide `/app/digest`, a command-line utility that prints the SHA-256 checksum of each file.": "sha256",
    "Create an assembler for a toy ISA.": "assembler",
    "Your task is to write a Python interpreter subset in C.": "python-interpreter",
}
MENTIONS = [
    "The tests build it with `gcc -O2 -o collatz /app/collatz.c`, so it must be valid C99.",
    "Write /app/warn.py which reads a C compiler's build log and counts warnings per file.",
    "Your program must compile without warnings.",
    "Implement an interpreter for a tiny Lisp in Python at /app/lisp.py",
    "Build the project using the C compiler in /usr/bin.",
]


@pytest.mark.parametrize("text,kind", ASKS.items())
def test_requests_for_a_tool_are_recognised(text, kind):
    assert [k.name for k in requested_tool_kinds(text)] == [kind]
    assert wrapped_tools(text)


@pytest.mark.parametrize("text", MENTIONS)
def test_mentions_are_not_requests(text):
    assert wrapped_tools(text) == set()


def test_image_tools_restrict_the_set():
    text = "Write a compiler for a restricted subset of C at /app/cc."
    assert wrapped_tools(text, image_tools={"gcc", "python3"}) == {"gcc"}
    assert wrap_candidates(text)[0] == "gcc"


@pytest.mark.parametrize(
    "name,want",
    [
        ("wraps-gcc", {"gcc"}),
        ("wraps-c-translator", {"gcc"}),
        ("wraps-sha256-digest", {"sha256sum"}),
        ("clean-mentions-compiler", set()),
        ("clean-uses-gcc-legitimately", set()),
    ],
)
def test_examples(name, want):
    instruction = load_environment(EXAMPLES / name).instruction
    assert want <= wrapped_tools(instruction) and bool(wrapped_tools(instruction)) == bool(want)
