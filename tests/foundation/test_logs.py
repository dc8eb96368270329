"""Logging set up while stderr is a stream that later closes (a command run in-process) keeps working."""

import io
import json
import sys

import pytest
import structlog

from envqa.core.logs import configure_logging

pytestmark = pytest.mark.fast


def test_a_warning_after_the_set_up_stream_closed_reaches_the_stderr_of_the_moment(capsys, keep_logging, monkeypatch):
    """The CLI's set-up once bound the logger to the captured stderr of a CliRunner call; once that stream closed,
    every later warning in the process raised "I/O operation on closed file" inside the code that logged."""
    captured = io.StringIO()
    monkeypatch.setattr(sys, "stderr", captured)
    configure_logging("warning")
    monkeypatch.undo()
    captured.close()

    structlog.get_logger().warning("after_close", detail=1)

    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert json.loads(line)["event"] == "after_close"
    assert json.loads(line)["detail"] == 1
