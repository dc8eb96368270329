"""Reading environment/docker-compose.yaml into the subset qa runs (sandbox/compose.py): no engine needed."""

from __future__ import annotations

import pytest

from envqa.core.environment import load_environment
from envqa.sandbox.compose import ComposeError, load_compose, seconds
from qa_testkit import EXAMPLES

pytestmark = pytest.mark.fast


def compose(tmp_path, text: str, files: dict[str, str] | None = None):
    env = tmp_path / "environment"
    env.mkdir(parents=True, exist_ok=True)
    for rel, body in (files or {}).items():
        (env / rel).parent.mkdir(parents=True, exist_ok=True)
        (env / rel).write_text(body)
    path = env / "docker-compose.yaml"
    path.write_text(text)
    return load_compose(path, tmp_path.resolve())


def test_the_example_is_a_task_qa_runs_with_its_sidecar():
    env = load_environment(EXAMPLES / "clean-compose-sidecar")  # no longer refused
    spec = load_compose(env.compose_file, env.root)
    assert spec.names == ["inventory"] and spec.warnings == []
    inv = spec.sidecars[0]
    assert inv.dockerfile == env.root / "environment" / "inventory" / "Dockerfile"
    assert inv.healthcheck.test[0] == "CMD" and inv.healthcheck.interval == 1.0 and inv.healthcheck.retries == 30


def test_dependency_order_environment_and_main_overrides(tmp_path):
    spec = compose(
        tmp_path,
        """
services:
  main:
    environment: [GREETING=hi]
  web:
    image: envqa-base:bookworm
    depends_on: {db: {condition: service_healthy}}
    environment: {PORT: 80, DEBUG: true, URL: "${URL:-http://db}", EMPTY: "${NOPE}"}
    command: python3 -m http.server 80
    ports: ["8080:80"]
    privileged: true
  db:
    build: ./db
    healthcheck: {test: "pg_isready", interval: 1m30s, timeout: 500ms}
""",
        {"db/Dockerfile": "FROM debian:bookworm\n"},
    )
    assert spec.names == ["db", "web"]  # db first: web depends on it
    web = spec.sidecars[1]
    assert web.depends_on == {"db": "service_healthy"}
    assert web.environment == {"PORT": "80", "DEBUG": "true", "URL": "http://db", "EMPTY": ""}
    assert web.command == ["python3", "-m", "http.server", "80"]
    assert spec.sidecars[0].healthcheck.test == ["CMD-SHELL", "pg_isready"]
    assert spec.sidecars[0].healthcheck.interval == 90.0 and spec.sidecars[0].healthcheck.timeout == 0.5
    assert spec.main_environment == {"GREETING": "hi"}
    assert any("services.web.privileged" in w for w in spec.warnings)  # unsupported: a warning naming it
    assert any("EMPTY" in w for w in spec.warnings)
    assert not any("ports" in w for w in spec.warnings)  # ignored on purpose: nothing is published


@pytest.mark.parametrize(
    "text,files,word",
    [
        ("services:\n  db:\n    build: ../../elsewhere\n", {}, "outside the task"),
        ("services:\n  db:\n    build: ./db\n", {}, "not a directory"),
        ("services:\n  db:\n    restart: always\n", {}, "needs `build:`"),
        ("services:\n  a:\n    image: x\n    depends_on: [b]\n  b:\n    image: x\n    depends_on: [a]\n", {}, "cycle"),
        ("services:\n  a:\n    image: x\n    depends_on: [ghost]\n", {}, "unknown service 'ghost'"),
        ("services:\n  a:\n    image: x\n    healthcheck: {test: [CMD, x], interval: soon}\n", {}, "not a duration"),
        ("services: [a, b]\n", {}, "services:"),
        ("services:\n  -bad:\n    image: x\n", {}, "invalid service name"),
    ],
)
def test_what_cannot_run_is_an_error_naming_the_service(tmp_path, text, files, word):
    with pytest.raises(ComposeError) as e:
        compose(tmp_path, text, files)
    assert word in str(e.value) and "docker-compose.yaml" in str(e.value)


def test_durations():
    assert seconds("1m30s", "x") == 90 and seconds("250ms", "x") == 0.25 and seconds(5, "x") == 5.0
