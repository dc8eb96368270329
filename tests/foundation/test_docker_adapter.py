"""docker-py internals the sandbox relies on (sandbox/docker_adapter.py) exist in the installed docker-py,
and work against the real engine: an abortable /build post, and an exec's raw socket read frame by frame."""

from __future__ import annotations

import io
import json
import socket
import tarfile

import pytest

from envqa.sandbox import docker_adapter
from envqa.sandbox.docker_sandbox import session_labels


@pytest.mark.fast
def test_the_installed_docker_py_has_every_internal_the_adapter_uses():
    assert docker_adapter.problems() == []


@pytest.mark.fast
def test_the_check_names_what_is_missing(monkeypatch):
    from docker.api.client import APIClient

    monkeypatch.setattr(docker_adapter, "REQUIRED", [(APIClient, "_post_v2", ()), (APIClient, "_url", ("fmt",))])
    assert docker_adapter.problems()[0] == "APIClient._post_v2 is gone"
    assert "no parameter fmt" in docker_adapter.problems()[1]


def test_exec_frames_and_stdin_through_the_raw_socket(docker_client, base_image):
    api = docker_client.api
    box = docker_client.containers.run(
        base_image,
        ["sleep", "60"],
        detach=True,
        network_mode="none",
        labels={"envqa.test": "docker-adapter", **session_labels()},
    )
    try:
        exec_id = api.exec_create(box.id, ["sh", "-c", "cat; echo to-err >&2"], stdin=True)["Id"]
        sock = api.exec_start(exec_id, socket=True)
        raw = docker_adapter.raw_socket(sock)
        raw.sendall(b"from-stdin\n")
        raw.shutdown(socket.SHUT_WR)
        got: dict[int, bytes] = {}
        for stream, data in docker_adapter.frames(sock):
            got[stream] = got.get(stream, b"") + data
        raw.close()
        assert got == {1: b"from-stdin\n", 2: b"to-err\n"}
    finally:
        box.remove(force=True)


def test_post_build_streams_progress_and_tags_the_image(docker_client, base_image):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        data = f"FROM {base_image}\nRUN echo adapter-build-ok\n".encode()
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    api = docker_client.api
    tag = "envqa-test-docker-adapter:latest"
    params = {"t": tag, "rm": True, "forcerm": True, "nocache": True, "labels": json.dumps({"envqa.test": "1"})}
    try:
        response = docker_adapter.post_build(api, buf.getvalue(), params)
        sock = docker_adapter.response_socket(api, response)
        assert sock.fileno() >= 0
        lines = [item.get("stream", "") for item in docker_adapter.json_stream(api, response)]
        assert any("adapter-build-ok" in line for line in lines)
        assert docker_client.images.get(tag).labels["envqa.test"] == "1"
    finally:
        docker_client.images.remove(tag, force=True)
