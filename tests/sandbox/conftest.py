"""Sandboxes of each backend for the conformance suite: the in-process fake, and Docker on the base image.

`make(**spec)` starts a sandbox (network none, the base image); without overrides it hands out one
sandbox shared by the module, so the ~30 checks cost a few container starts on Docker, not thirty.
Every sandbox started is stopped at teardown. The Docker fixtures (tests/conftest.py) are asked for only
when the "docker" parameter runs, so the fake's checks (marked `fast`) need no engine.
"""

from __future__ import annotations

import pytest

from envqa.core.config import DEFAULT_BASE_IMAGE
from envqa.core.sandbox import SandboxSpec
from envqa.sandbox.fake import FakeBackend

# the fake's checks belong to the fast tier (make test-fast); Docker's need the engine
BACKENDS = [pytest.param("fake", marks=pytest.mark.fast), "docker"]


def _backend(request, name: str):
    if name == "fake":
        return FakeBackend(), DEFAULT_BASE_IMAGE
    return request.getfixturevalue("docker_backend"), request.getfixturevalue("base_image")


@pytest.fixture(scope="module", params=BACKENDS)
def shared_sandbox(request):
    backend, image = _backend(request, request.param)
    sb = backend.start(SandboxSpec(image=image, network="none", labels={"envqa.conformance": "shared"}))
    yield request.param, backend, image, sb
    sb.stop()


@pytest.fixture
def make(shared_sandbox):
    name, backend, image, shared = shared_sandbox
    started = []

    def make(**spec):
        if not spec:
            return shared
        sb = backend.start(SandboxSpec(image=image, **{"network": "none", **spec}))
        started.append(sb)
        return sb

    make.backend_name = name
    yield make
    for sb in started:
        sb.stop()
