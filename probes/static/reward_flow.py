"""test.sh's control flow around the reward: `set -e` before the test command.

Under `set -e` (errexit) a failing command that is not tested (not in an `if`, `&&`, `||` or `!`) ends the
script at once. When the test command is such a command and the failure reward (0) is written only after it,
a failing test ends test.sh before any reward is written: the reward file the agent left behind (or none)
decides the trial. A case of reward-not-written-on-failure (probes/static/findings.py), on the same commands.

Look-alikes that stay quiet: 0 written before the tests run; the test command in an `if` or with `|| …`;
`set +e` before it; a pipeline into `tee` (its status is tee's unless `pipefail` is set).
"""

from __future__ import annotations

import re

from envqa.core.parsers.shell import Command

ERREXIT = re.compile(r"^-\w*e\w*$")
TEST_RUNNERS = re.compile(r"^(py\.?test(-3)?|python[\d.]*|bash|sh|node|npm|npx|go|cargo|make|ctest|uv|uvx)$")


def _errexit(cmd: Command) -> bool | None:
    """True for `set -e` / `set -o errexit`, False for `set +e` / `set +o errexit`, None otherwise."""
    if cmd.name != "set":
        return None
    words = cmd.words[1:]
    if any(ERREXIT.match(w) for w in words) or (words[:2] == ["-o", "errexit"]):
        return True
    if any(re.fullmatch(r"\+\w*e\w*", w) for w in words) or words[:2] == ["+o", "errexit"]:
        return False
    return None


def _pipefail(commands: list[Command]) -> bool:
    return any(c.name == "set" and "pipefail" in c.words for c in commands)


def aborts_before_failure_reward(
    commands: list[Command], writes: list[tuple[Command, str | None]], success: list[bool]
) -> Command | None:
    """The test command that `set -e` turns into an early exit before the first failure reward is written
    (None when a failure reward is written before it, or errexit is off there, or it is a tested command)."""
    failure_lines = [c.line for (c, _v), ok in zip(writes, success, strict=True) if not ok]
    if not failure_lines:
        return None  # only success written: the rule's first case already says it
    first_failure = min(failure_lines)
    on = False
    pipefail = _pipefail(commands)
    for cmd in commands:
        if not cmd.reachable or cmd.line >= first_failure:
            break
        state = _errexit(cmd)
        if state is not None and not cmd.conditional:
            on = state
            continue
        if not on or cmd.conditional or not TEST_RUNNERS.match(cmd.name):
            continue
        if "|" in cmd.text and not pipefail:
            continue
        if cmd.name.startswith(("python", "uv")) and not any("test" in w for w in cmd.words[1:]):
            continue  # a python helper (setup), not the test run
        return cmd
    return None
