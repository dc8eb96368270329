"""A `qa worker` loop (run_worker, queues `*`) whose stop signal lands while rq tears its loop down.

rq ends an idle `*` loop after max_idle_time and tears it down (joining its scheduler process); a SIGTERM in that
window reaches rq's handler, which raises StopRequested out of `Worker.work()`. This script sends itself the
SIGTERM exactly there (inside the first teardown), so the race is hit every time. Prints "returned" when
run_worker came back.  Usage: python stop_in_teardown.py REDIS_URL
"""

import os
import signal
import sys

from redis import Redis

from envqa.core.config import SchedulerSettings
from envqa.scheduler.worker import run_worker

fired = []


def stop_during_teardown(worker):
    teardown = worker.teardown

    def teardown_with_a_stop():
        if not fired:
            fired.append(True)
            os.kill(os.getpid(), signal.SIGTERM)  # rq's handler runs here, inside its own teardown
        teardown()

    worker.teardown = teardown_with_a_stop


run_worker(Redis.from_url(sys.argv[1]), ["*"], SchedulerSettings(), on_start=stop_during_teardown)
print("returned", flush=True)
