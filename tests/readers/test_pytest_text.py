"""pytest's own text as the verifiers print it (`-rA`): statuses, class-based node ids, setup errors, skips
without a node id, and the E lines of the FAILURES section as each failure's message."""

from __future__ import annotations

import pytest

from envqa.core.readers.common import clean_terminal, pytest_summary, says_not_found

pytestmark = pytest.mark.fast

OUTPUT = """\
============================= test session starts ==============================
collected 6 items

../tests/test_outputs.py .FsxE.                                          [100%]

==================================== ERRORS ====================================
__________________ ERROR at setup of TestServer.test_listens ___________________

    @pytest.fixture
    def server():
>       raise RuntimeError("port 8471 busy")
E       RuntimeError: port 8471 busy

../tests/test_outputs.py:9: RuntimeError
=================================== FAILURES ===================================
____________________________ TestReport.test_total _____________________________

self = <test_outputs.TestReport object at 0x7f>

    def test_total(self):
>       assert read_total() == "1234.50"
E       AssertionError: assert '1234.5' == '1234.50'
E         - 1234.50
E         + 1234.5

../tests/test_outputs.py:21: AssertionError
==================================== PASSES ====================================
=========================== short test summary info ============================
PASSED ../tests/test_outputs.py::test_exists
PASSED ../tests/test_outputs.py::test_param[a-1]
SKIPPED [1] ../tests/test_outputs.py:30: needs network
XFAIL ../tests/test_outputs.py::test_known_bug - reason: upstream
FAILED ../tests/test_outputs.py::TestReport::test_total - AssertionError: assert '1234.5' == '1234.50'
ERROR ../tests/test_outputs.py::TestServer::test_listens - RuntimeError: port 8471 busy
============= 1 failed, 2 passed, 1 skipped, 1 xfailed, 1 error in 0.31s =============
"""


def test_statuses_and_messages():
    got = {t.name: (t.status, t.message) for t in pytest_summary(OUTPUT)}
    assert got == {
        "../tests/test_outputs.py::test_exists": ("passed", ""),
        "../tests/test_outputs.py::test_param[a-1]": ("passed", ""),
        "../tests/test_outputs.py::test_known_bug": ("passed", ""),  # XFAIL counts as tb's parser counts it
        "../tests/test_outputs.py::TestReport::test_total": (
            "failed",
            "AssertionError: assert '1234.5' == '1234.50'\n- 1234.50\n+ 1234.5",
        ),
        "../tests/test_outputs.py::TestServer::test_listens": ("error", "RuntimeError: port 8471 busy"),
    }


def test_no_summary_is_no_tests():
    assert pytest_summary("collected 3 items\n...\n3 passed in 0.1s\n") == []
    assert pytest_summary("") == []


def test_summary_line_message_when_there_is_no_failures_section():
    text = "=== short test summary info ===\nFAILED t.py::test_a - assert 1 == 2\n"
    assert [(t.name, t.message) for t in pytest_summary(text)] == [("t.py::test_a", "assert 1 == 2")]


@pytest.mark.parametrize(
    "text",
    [
        "bash: claude: command not found",
        "/bin/sh: 1: codex: not found",
        'OCI runtime exec failed: exec: "aider": executable file not found in $PATH',
        "Agent command failed (exit code 127)",
        "zsh: command not found: goose",
    ],
)
def test_not_found_wordings(text):
    assert says_not_found(text)


@pytest.mark.parametrize("text", ["File not found: report.csv was created", "404 Not Found", "exit code 1"])
def test_not_found_look_alikes(text):
    assert not says_not_found(text)


def test_clean_terminal():
    assert clean_terminal("\x1b[?2004hroot@x:/app# ls\r\n\x1b[01;34mdir\x1b[0m\r\n") == "root@x:/app# ls\ndir\n"
