"""BackendProxy (core/sandbox.py): a wrapper passes the whole backend protocol through and overrides only what it
changes; what it withholds is refused and not claimed by supports()."""

from __future__ import annotations

import pytest

from envqa.core.sandbox import BackendProxy, SandboxSpec
from envqa.probes.base import _OnNetwork
from envqa.sandbox.docker_backend import DockerBackend
from envqa.sandbox.fake import FakeBackend
from envqa.sandbox.network import AllowlistBackend
from envqa.sandbox.sidecars import SidecarBackend
from tests.probes.conftest import write_env

pytestmark = pytest.mark.fast  # no Docker engine: DockerBackend is only made, never connected


class _Labelled(BackendProxy):
    """A wrapper that changes one thing: every sandbox it starts carries a label."""

    def start(self, spec: SandboxSpec):
        return self.inner.start(spec.model_copy(update={"labels": {**spec.labels, "wrapped": "1"}}))


def test_a_proxy_passes_building_starting_and_cleanup_through(tmp_path):
    from envqa.core.environment import load_environment

    fake = FakeBackend()
    proxy = _Labelled(fake)
    tag, built = proxy.ensure_image(load_environment(write_env(tmp_path)))
    assert built and tag in fake.images
    sandbox = proxy.start(SandboxSpec(image=tag, labels={"run": "r1"}))
    assert fake.started == [sandbox] and sandbox.spec.labels == {"run": "r1", "wrapped": "1"}
    assert proxy.connected is fake.connected and proxy.handlers is fake.handlers  # the backend's own attributes
    assert proxy.cleanup({"run": "r1"}) == 1 and proxy.cleanup({"run": "r1"}) == 0


def test_a_proxy_supports_what_its_inner_backend_supports_unless_withheld():
    assert not _Labelled(FakeBackend()).supports("fake_internet")
    assert _Labelled(DockerBackend()).supports("fake_internet")
    with pytest.raises(NotImplementedError):
        _Labelled(FakeBackend()).with_sidecars(None)
    docker = DockerBackend()
    claims = {
        type(b).__name__: {c: b.supports(c) for c in ("fake_internet", "with_egress_allowlist", "with_sidecars")}
        for b in (AllowlistBackend(docker, "img", ["x"]), SidecarBackend(docker, None), _OnNetwork(docker, "n"))
    }
    assert claims == {  # the capabilities each wrapper offered before it was a proxy
        "AllowlistBackend": {"fake_internet": False, "with_egress_allowlist": True, "with_sidecars": True},
        "SidecarBackend": {"fake_internet": False, "with_egress_allowlist": True, "with_sidecars": True},
        "_OnNetwork": {"fake_internet": False, "with_egress_allowlist": False, "with_sidecars": True},
    }
    with pytest.raises(NotImplementedError):
        _OnNetwork(docker, "n").with_egress_allowlist(["x"], image="img")


def test_a_capability_that_returns_a_backend_keeps_the_wrapper_outermost():
    docker = DockerBackend()
    allow = AllowlistBackend(docker, "img", ["good.example.test"], upstream="up")
    wrapped = allow.with_sidecars(object())
    assert isinstance(wrapped, AllowlistBackend) and isinstance(wrapped.inner, SidecarBackend)
    assert (wrapped.allowed_hosts, wrapped.upstream, wrapped.inner.inner) == (["good.example.test"], "up", docker)
    on_net = _OnNetwork(docker, "fake-net").with_sidecars(object())
    assert isinstance(on_net, _OnNetwork) and on_net.network == "fake-net" and isinstance(on_net.inner, SidecarBackend)
