"""Terminal-Bench 1's result parsers: how a task.yaml's `parser_name` turns the verifier's output into a reward.

Follows terminal-bench 0.2.18 `terminal_bench/parsers/` (`parser_factory.py` ParserName, one class per parser)
and `harness/harness.py` (`_parse_results`, `_is_resolved`): a parser maps the output of run-tests.sh to
per-test PASSED/FAILED, the trial is resolved when every one passed, and a parser that raises is a parse error
(never a fail). Our own code, one function per parser and one table (`TB1_PARSERS`): the loader accepts exactly
its names and the verifier phase looks the task's parser up there (agents/phases.py), no branch on names.

What we do differently: `pytest` keeps qa's reader (core/rewards.py `parse_pytest`), which also reads pytest's
final counts line when there is no `-rA` summary and calls a run of no tests a verifier error (TB's parser
scores an empty summary as resolved). A parse error is `VerifierError` here: the trial is infra, not a fail.
"""

from __future__ import annotations

from collections.abc import Callable

from envqa.core.rewards import VerifierError, parse_pytest

# (reward, per-test rewards), as every reader of a verifier's verdict returns it
OutputParser = Callable[[str], tuple[float, dict[str, float]]]


def _between(output: str, start: str, end: str) -> str:
    """The text between the first `start` and the last `end` marker, stripped (TB's "safe extraction")."""
    return output.split(start, 1)[-1].rsplit(end, 1)[0].strip()


def _marked_verdict(output: str, start: str, end: str, what: str) -> tuple[float, dict[str, float]]:
    """swebench_parser.py / sweperf_parser.py: both markers required (their absence is a parse error, which TB
    blames on the harness fetching the repository); resolved iff the block between them is exactly PASSED."""
    if start not in output or end not in output:
        raise VerifierError(f"no {what} results between the markers {start!r} and {end!r} in the verifier output")
    value = 1.0 if _between(output, start, end) == "PASSED" else 0.0
    return value, {"tests": value}


def parse_swebench(output: str) -> tuple[float, dict[str, float]]:
    """swebench_parser.py SWEBenchParser."""
    return _marked_verdict(output, "SWEBench results starts here", "SWEBench results ends here", "SWEBench")


def parse_sweperf(output: str) -> tuple[float, dict[str, float]]:
    """sweperf_parser.py SWEPerfParser."""
    return _marked_verdict(output, "SWE-Perf results starts here", "SWE-Perf results ends here", "SWE-Perf")


def parse_mlebench(output: str) -> tuple[float, dict[str, float]]:
    """mlebench_parser.py MLEBenchParser: resolved iff the block between its markers is exactly `ALL TESTS
    PASSED`. It never raises: a missing marker leaves the whole output as the block (so it fails)."""
    block = _between(output, "MLEBench results starts here", "MLEBench results ends here")
    value = 1.0 if block == "ALL TESTS PASSED" else 0.0
    return value, {"tests": value}


def parse_swelancer(output: str) -> tuple[float, dict[str, float]]:
    """swelancer_parser.py SWELancerParser, case-insensitive: `swe lancer success` passes; else `swe lancer
    failure` fails; else the words `user_tool` and `completed` anywhere pass; else it fails. Never raises."""
    text = output.lower()
    if "swe lancer success" in text:
        value = 1.0
    elif "swe lancer failure" in text:
        value = 0.0
    else:
        value = 1.0 if "user_tool" in text and "completed" in text else 0.0
    return value, {"swelancer_task": value}


# parser_factory.py ParserName -> its reading of the output; the loader's accepted names (core/environment.py)
TB1_PARSERS: dict[str, OutputParser] = {
    "pytest": parse_pytest,
    "swebench": parse_swebench,
    "swelancer": parse_swelancer,
    "mlebench": parse_mlebench,
    "sweperf": parse_sweperf,
}


def output_parser(source: str) -> OutputParser | None:
    """The parser a reward source reads the verifier's output with; None for a reward read from files."""
    return TB1_PARSERS.get(str(source))
