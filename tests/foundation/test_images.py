"""Images: built once per content hash, rebuilt when the context changes; the image map rewrites FROM."""

from __future__ import annotations

import time
import uuid

import docker.errors
import pytest

from envqa.core.environment import load_environment
from envqa.core.image_map import rewrite_dockerfile
from envqa.core.sandbox import ImageBuildError
from qa_testkit import containers, wait_for

MAP = {
    "debian:*": "envqa-base:bookworm",
    "debian": "envqa-base:bookworm",
    "python:3*": "envqa-base:bookworm",
    "ubuntu:*": "envqa-base:bookworm",
}


@pytest.mark.fast
def test_plain_from_is_rewritten():
    text, rewrites, bases = rewrite_dockerfile("FROM debian:bookworm\nRUN true\n", MAP)
    assert text == "FROM envqa-base:bookworm\nRUN true\n"
    assert rewrites == [("debian:bookworm", "envqa-base:bookworm")]
    assert bases == ["envqa-base:bookworm"]


@pytest.mark.fast
def test_lowercase_from_and_docker_io_prefix():
    text, _, bases = rewrite_dockerfile("from docker.io/library/python:3.11-slim\n", MAP)
    assert text == "from envqa-base:bookworm\n"
    assert bases == ["envqa-base:bookworm"]


@pytest.mark.fast
def test_platform_flag_is_kept_and_image_rewritten():
    text, rewrites, _ = rewrite_dockerfile("FROM --platform=linux/amd64 ubuntu:22.04 AS base\n", MAP)
    assert text == "FROM --platform=linux/amd64 envqa-base:bookworm AS base\n"
    assert rewrites == [("ubuntu:22.04", "envqa-base:bookworm")]


@pytest.mark.fast
def test_multi_stage_names_are_not_mapped_or_counted_as_bases():
    src = (
        "FROM python:3.11 AS Build\nRUN echo build > /x\n"
        "FROM --platform=$BUILDPLATFORM build AS test\n"
        "FROM debian:bookworm\nCOPY --from=build /x /x\n"
    )
    text, rewrites, bases = rewrite_dockerfile(src, MAP)
    lines = text.splitlines()
    assert lines[0] == "FROM envqa-base:bookworm AS Build"
    assert lines[2] == "FROM --platform=$BUILDPLATFORM build AS test"  # a stage name, case-insensitively
    assert lines[3] == "FROM envqa-base:bookworm"
    assert lines[4] == "COPY --from=build /x /x"
    assert [orig for orig, _ in rewrites] == ["python:3.11", "debian:bookworm"]
    assert bases == ["envqa-base:bookworm", "envqa-base:bookworm"]


@pytest.mark.fast
def test_unmapped_images_are_left_alone():
    text, rewrites, bases = rewrite_dockerfile("FROM alpine:3.19\nFROM pythonista:1\n", MAP)
    assert text == "FROM alpine:3.19\nFROM pythonista:1\n"
    assert rewrites == [] and bases == ["alpine:3.19", "pythonista:1"]


@pytest.mark.fast
def test_empty_map_rewrites_nothing_and_keeps_text_byte_for_byte():
    src = "# comment\nFROM debian:bookworm\r\nRUN echo 'FROM debian'\n"
    text, rewrites, _ = rewrite_dockerfile(src, {})
    assert text == src and rewrites == []


def test_build_then_cache_hit_then_new_tag_on_change(docker_backend, docker_client, make_env):
    root = make_env(
        dockerfile="FROM debian:bookworm\nCOPY data.txt /data.txt\n", extra={"environment/data.txt": "one\n"}
    )
    env = load_environment(root)
    first_tag, _ = docker_backend.ensure_image(env)
    builds = docker_backend.builds
    second_tag, built = docker_backend.ensure_image(load_environment(root))
    assert (second_tag, built) == (first_tag, False)
    assert docker_backend.builds == builds, "an unchanged environment was rebuilt"

    # A file outside environment/ changes the environment version but not the image.
    (root / "tests" / "test.sh").write_text("#!/bin/bash\necho 0 > /logs/verifier/reward.txt\n")
    env2 = load_environment(root)
    assert env2.version != env.version
    assert docker_backend.ensure_image(env2) == (first_tag, False)

    (root / "environment" / "data.txt").write_text("two\n")
    changed = load_environment(root)
    new_tag, built = docker_backend.ensure_image(changed)
    try:
        assert new_tag != first_tag and built is True
        assert docker_backend.builds == builds + 1
        out = docker_client.containers.run(new_tag, ["cat", "/data.txt"], remove=True, labels={"envqa": "1"})
        assert out == b"two\n"
    finally:
        docker_client.images.remove(new_tag, force=True)
        docker_client.images.remove(first_tag, force=True)


def test_exec_bit_change_gives_a_new_tag(docker_backend, make_env):
    root = make_env(extra={"environment/tool.sh": "#!/bin/sh\necho hi\n"})
    tag1, _ = docker_backend.prepare(load_environment(root))
    (root / "environment" / "tool.sh").chmod(0o755)
    tag2, _ = docker_backend.prepare(load_environment(root))
    assert tag1 != tag2


def test_broken_dockerfile_raises_image_build_error_with_log(docker_backend, make_env):
    root = make_env(dockerfile="FROM debian:bookworm\nRUN echo about-to-fail && exit 7\n")
    with pytest.raises(ImageBuildError) as info:
        docker_backend.ensure_image(load_environment(root))
    assert "about-to-fail" in info.value.log_tail
    assert not info.value.timed_out


def test_unresolvable_from_is_a_build_error_not_a_crash(docker_backend, make_env):
    root = make_env(dockerfile="ARG BASE\nFROM ${BASE}\n")
    with pytest.raises(ImageBuildError):
        docker_backend.ensure_image(load_environment(root))


def test_build_timeout_cancels_the_engine_build(docker_backend, docker_client, make_env):
    token = uuid.uuid4().hex  # unique, so no earlier run's layer cache can make this build fast
    root = make_env(dockerfile=f"FROM debian:bookworm\nRUN echo {token} && sleep 30\n")
    (root / "task.toml").write_text(
        (root / "task.toml").read_text().replace("build_timeout_sec = 120.0", "build_timeout_sec = 2")
    )
    env = load_environment(root)
    started = time.monotonic()
    with pytest.raises(ImageBuildError) as info:
        docker_backend.ensure_image(env)
    assert info.value.timed_out
    assert time.monotonic() - started < 15
    tag, _ = docker_backend.prepare(env)

    def build_container_gone():
        running = [
            c for c in containers(docker_client) if token in " ".join(c.attrs.get("Config", {}).get("Cmd") or [])
        ]
        return not running

    wait_for(build_container_gone, 20, "the engine to cancel the timed-out build")
    with pytest.raises(docker.errors.ImageNotFound):  # a timed-out build must never become a cache hit
        docker_client.images.get(tag)
