"""Put on PYTHONPATH by tests that set QA_TEST_RQ_FAULT: every Python process of that test (the `qa run`
and the workers it starts) loads this first. It breaks rq, never envqa, the way an incompatible rq release
did (rq 3.0 changed a worker method's signature): each worker's loop fails as it starts, for real."""

import os

if os.environ.get("QA_TEST_RQ_FAULT") == "register_birth":
    import rq.worker.base

    def _incompatible(self, *args, **kwargs):
        raise TypeError(
            "BaseWorker.register_birth() missing 1 required positional argument: 'execution' "
            "(simulated rq incompatibility)"
        )

    rq.worker.base.BaseWorker.register_birth = _incompatible
