"""The Docker backend's optional capabilities beyond what network none can show: cutting and restoring a
real (internal) network, and the image diff's kinds."""

from __future__ import annotations

import uuid

from envqa.core.sandbox import PathChange, SandboxSpec
from envqa.sandbox.docker_sandbox import session_labels


def test_cut_and_restore_an_internal_network(docker_backend, docker_client, base_image):
    net = docker_client.networks.create(
        f"envqa-test-{uuid.uuid4().hex[:10]}", driver="bridge", internal=True, labels={"envqa": "1", **session_labels()}
    )
    try:
        with docker_backend.start(SandboxSpec(image=base_image, network=net.name)) as sb:

            def interfaces() -> list[str]:
                return sorted(sb.exec(["ls", "/sys/class/net"], timeout=30).stdout.split())

            assert sb.offline() is True  # only internal networks: no route out
            assert len(interfaces()) == 2, interfaces()  # lo and the network's interface
            sb.cut_network()
            assert interfaces() == ["lo"] and sb.offline() is True
            sb.restore_network()
            assert len(interfaces()) == 2 and sb.offline() is True
    finally:
        net.remove()


def test_changed_paths_tell_added_changed_and_deleted_apart(docker_backend, base_image):
    with docker_backend.start(SandboxSpec(image=base_image)) as sb:
        sb.exec(["rm", "/etc/debian_version"], timeout=30)
        sb.write_file("/etc/hostname-copy", b"x")
        changes = sb.changed_paths()
    assert PathChange(path="/etc/debian_version", kind="deleted") in changes
    assert PathChange(path="/etc/hostname-copy", kind="added") in changes
    assert PathChange(path="/etc", kind="changed") in changes
