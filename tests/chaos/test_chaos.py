"""The chaos run (benchmarks/chaos.py) as a slow test: 1,000 simulated trials on real workers of two
"hosts" (separate QA_HOMEs) sharing one redis-server and one Postgres, through 20 kill -9s of workers, a
Redis restart that loses everything and a Postgres restart. Nothing may be lost or recorded twice."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from qa_testkit import REPO


@pytest.mark.slow  # ~10 minutes of one core: `make test-all`
@pytest.mark.timeout(960)  # the benchmark's own subprocess limit (900 s) must fire before pytest's (600 s)
def test_a_thousand_trials_survive_kills_and_restarts_of_redis_and_postgres():
    out = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "chaos.py")], capture_output=True, text=True, timeout=900, cwd=REPO
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert (result["trials"], result["lost"], result["recorded_twice"]) == (1000, 0, 0)
    assert (result["kills"], result["redis_restarts"], result["postgres_restarts"]) == (20, 1, 1)
