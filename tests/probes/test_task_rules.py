"""Harbor metadata and timeout rules, the timing-dependent verifier rule, and examples' info-level rules."""

from __future__ import annotations

import json

import pytest

from envqa.core.environment import load_environment
from envqa.probes.static.findings import static_findings

from .conftest import EXAMPLES, expected, run_qa, write_env

pytestmark = pytest.mark.fast  # the fast tier (make test-fast): no Docker, Redis or Postgres


def by_rule(env_dir) -> dict[str, str]:
    return {f.rule: f.severity for f in static_findings(load_environment(env_dir))}


def test_metadata_and_timeouts(tmp_path):
    bare = write_env(tmp_path / "bare", task_toml='version = "1.0"\n[agent]\ntimeout_sec = 3.0\n')
    assert by_rule(bare) == {
        "task-metadata-missing": "info",
        "task-timeout-missing": "info",
        "task-timeout-implausible": "warning",
    }
    # The newer Harbor schema: keywords under [task], difficulty_explanation under [metadata].
    newer = write_env(
        tmp_path / "newer",
        task_toml=(
            'schema_version = "1.1"\n[task]\nname = "org/t"\nkeywords = ["k"]\n'
            '[metadata]\ndifficulty_explanation = "trivial"\ncategory = "c"\n'
            "[agent]\ntimeout_sec = 600.0\n[verifier]\ntimeout_sec = 120.0\n"
        ),
    )
    assert by_rule(newer) == {}


@pytest.mark.parametrize(
    "test_py,flagged",
    [
        (
            "import time\n\ndef test_fast():\n    t0 = time.perf_counter()\n    work()\n"
            "    assert time.perf_counter() - t0 < 2\n",
            True,
        ),
        (
            "import time\n\ndef test_fast():\n    start = time.time()\n    work()\n    elapsed = time.time() - start\n"
            "    if elapsed > 1.5:\n        raise AssertionError('slow')\n",
            True,
        ),
        (
            "from time import monotonic\n\ndef test_fast():\n    a = monotonic()\n    work()\n    b = monotonic()\n"
            "    assert b - a <= 10\n",
            True,
        ),
        # The clock read but never compared with a threshold; a subprocess timeout is a limit, not a verdict.
        (
            "import subprocess, time\n\ndef test_ok():\n    t = time.time()\n"
            "    subprocess.run(['true'], timeout=30)\n    print('took', time.time() - t)\n    assert 1 < 2\n",
            False,
        ),
        ("import datetime\n\ndef test_stamp():\n    assert datetime.datetime.now().year > 2000\n", False),
    ],
)
def test_timing_dependent_verifier(tmp_path, test_py, flagged):
    env = write_env(tmp_path, {"tests/test_x.py": test_py})
    found = [f for f in static_findings(load_environment(env)) if f.rule == "verifier-timing-dependent"]
    assert bool(found) == flagged
    if flagged:
        assert found[0].location.startswith("tests/test_x.py:") and found[0].severity == "warning"


@pytest.mark.parametrize(
    "name",
    sorted(p.name for p in EXAMPLES.iterdir() if (p / "qa-expected.json").is_file() and "info" in expected(p.name)),
)
def test_examples_info_rules_through_qa_lint(name, qa_env):
    """Info-level rules do not change a verdict, so the detection table does not see them: lint does."""
    res = run_qa(["lint", str(EXAMPLES / name), "--json"], qa_env)
    out = json.loads(res.stdout)
    info = {f["rule"] for f in out["findings"] if f["severity"] == "info"}
    serious = {f["rule"] for f in out["findings"] if f["severity"] != "info"}
    want = expected(name)
    assert set(want["info"]) <= info
    assert serious <= set(want["rules"])  # lint's serious rules are a part of what the run must find
