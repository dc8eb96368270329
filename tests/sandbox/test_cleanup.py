"""cleanup on the real engine while other cleanups run: workers sweep a run's leftovers at the same time, so a
container listed by one may be gone before it is looked at (listing with an inspect per container raised
NotFound out of the list itself, as CI saw in a test that listed while other tests removed)."""

import threading
import uuid

from envqa.core.sandbox import SandboxSpec
from qa_testkit import containers, wait_for

LEFT, SWEEPS = 16, 6


def test_concurrent_cleanups_remove_everything_without_an_error(docker_backend, docker_client, base_image):
    labels = {"envqa.trial": f"sweep-{uuid.uuid4().hex[:8]}"}
    for _ in range(LEFT):
        docker_backend.start(SandboxSpec(image=base_image, labels=labels))  # left behind, as by a crash
    errors: list[BaseException] = []
    removed: list[int] = []
    start = threading.Barrier(SWEEPS)

    def sweep() -> None:
        start.wait(timeout=30)
        try:
            for _ in range(LEFT):  # until this sweep finds nothing left to remove
                if not (n := docker_backend.cleanup(labels)):
                    return
                removed.append(n)
        except BaseException as e:  # noqa: BLE001 - what the test reports
            errors.append(e)

    threads = [threading.Thread(target=sweep, daemon=True) for _ in range(SWEEPS)]
    for t in threads:
        t.start()
    wait_for(lambda: not any(t.is_alive() for t in threads), 120, "the sweeps to end")
    assert errors == []
    assert sum(removed) >= LEFT  # the engine may answer two concurrent removals of one container with success
    assert containers(docker_client, *(f"{k}={v}" for k, v in labels.items())) == []
