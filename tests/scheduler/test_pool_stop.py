"""A worker stops on SIGTERM, whenever it lands, instead of waiting out the pool's grace.

Every embedded `qa run` ends with `WorkerPool.stop()` (SIGTERM, then SIGKILL after POOL_STOP_GRACE_SEC). An idle
`*` worker ends its rq loop every few seconds to re-read the queue list; a SIGTERM during that loop's teardown
makes rq raise StopRequested out of `Worker.work()`. `run_worker` took it for a failed loop and started a new
one, which then sat out the grace until SIGKILL: 15 s added to every local run (found in issue 40's profile of
`qa run`). scripts/stop_in_teardown.py hits that window every time.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from envqa.core.defaults import POOL_STOP_GRACE_SEC

SCRIPT = Path(__file__).parent / "scripts" / "stop_in_teardown.py"


def test_a_stop_signal_during_rqs_teardown_ends_the_worker(tmp_path, redis_server):
    server = redis_server(tmp_path / "redis")
    proc = subprocess.Popen([sys.executable, str(SCRIPT), server.url], stdout=subprocess.PIPE, text=True)
    try:
        out, _ = proc.communicate(timeout=POOL_STOP_GRACE_SEC)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate(timeout=10)
        raise AssertionError(
            f"the worker was still running {POOL_STOP_GRACE_SEC} s after its stop signal: it restarted its "
            "loop instead of stopping"
        ) from None
    finally:
        server.cleanup()
    assert proc.returncode == 0 and out.strip() == "returned", (proc.returncode, out)
