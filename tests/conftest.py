"""Shared fixtures: the real Docker engine, an isolated QA_HOME, and a check that no container leaks.

Every test that starts containers does so through `docker_backend` (or labels its containers
`envqa`); the session-wide check at the end fails the run if any `envqa` container is left behind.
"""

from __future__ import annotations

import os
import sys
import uuid

import pytest

# Every container this test session starts (in-process or in `qa` subprocesses, which inherit the
# environment) carries envqa.session=<this id>; the leak check looks at exactly those.
SESSION = os.environ.setdefault("QA_SESSION", f"pytest-{uuid.uuid4().hex[:12]}")
from qa_testkit import EXAMPLES, QA, REPO, copy_example, run_qa, wait_for  # noqa: F401  (re-exported)


def _docker():
    import docker

    try:
        client = docker.from_env(timeout=120)
        client.ping()
        return client
    except Exception as e:  # pragma: no cover - setup.sh starts dockerd; this only explains a broken machine
        pytest.fail(f"Docker engine unreachable ({e}); run `make setup`", pytrace=False)


@pytest.fixture(scope="session")
def docker_client():
    return _docker()


@pytest.fixture(scope="session")
def base_image(docker_client):
    from envqa.core.config import DEFAULT_BASE_IMAGE

    try:
        docker_client.images.get(DEFAULT_BASE_IMAGE)
    except Exception:
        pytest.fail(f"base image {DEFAULT_BASE_IMAGE} missing; run `make setup`", pytrace=False)
    return DEFAULT_BASE_IMAGE


@pytest.fixture
def qa_config(tmp_path):
    from envqa.core.config import load_config

    return load_config(None, {"home": str(tmp_path / "qa-home")})


@pytest.fixture(scope="session")
def docker_backend(docker_client, base_image):
    from envqa.core.config import SandboxSettings
    from envqa.sandbox.docker_backend import DockerBackend

    return DockerBackend(image_map=SandboxSettings().resolved_image_map(), client=docker_client)


@pytest.fixture
def qa_env(tmp_path):
    """Environment for running the `qa` CLI as a subprocess with isolated state."""
    env = dict(os.environ)
    env["QA_HOME"] = str(tmp_path / "qa-home")
    env.pop("REDIS_URL", None)
    return env


def pytest_sessionfinish(session, exitstatus):
    """Fail the run when a test left an envqa container behind (also after failing tests)."""
    try:
        import docker

        client = docker.from_env(timeout=30)
        leftovers = client.containers.list(all=True, filters={"label": f"envqa.session={SESSION}"})
    except Exception:
        return
    if leftovers:
        names = ", ".join(c.name for c in leftovers)
        for c in leftovers:
            try:
                c.remove(force=True)
            except docker.errors.APIError:  # already being removed
                pass
        sys.stderr.write(f"\nLEAK: containers left behind by the suite (removed now): {names}\n")
        session.exitstatus = 1


# --- the store backend (issue 16) -----------------------------------------------------------------------
# QA_TEST_STORE=postgres runs the tests against a private Postgres (initdb in a temp dir, unix socket): every
# test gets a fresh database through QA_STORE_URL, which every Store (and every `qa` subprocess and worker the
# test starts, since they inherit the environment) then uses. scripts/test.sh runs the store and scheduler
# tests a second time that way.
@pytest.fixture(scope="session")
def pg_server():
    from envqa.store.pg_server import PostgresServer

    server = PostgresServer().start()  # its own dir under /tmp: the `postgres` user cannot enter pytest's
    yield server
    server.cleanup()


@pytest.fixture
def pg_url(pg_server, request):
    """A fresh, empty database on the private server."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    return pg_server.create_database(name)


class ModuleStore:
    """The store of a module-scoped fixture's `qa` processes, and each test's own copy of it. A module fixture
    is set up before the per-test `_store_backend`, so it must name its store itself: SQLite lives in QA_HOME
    (copying the home copies it); a Postgres database is cloned (CREATE DATABASE ... TEMPLATE)."""

    def __init__(self, server):
        self.server, self.name = server, f"m_{uuid.uuid4().hex[:12]}"
        self.url = server.create_database(self.name) if server is not None else None

    def env(self, env: dict) -> dict:
        """`env` for the module fixture's `qa` processes."""
        return dict(env, QA_STORE_URL=self.url) if self.url else {k: v for k, v in env.items() if k != "QA_STORE_URL"}

    def branch(self, env: dict, monkeypatch) -> dict:
        """`env` for one test's processes, on its own copy of the store (this process reads that copy too)."""
        if self.server is None:
            return self.env(env)
        url = self.server.create_database(f"t_{uuid.uuid4().hex[:12]}", template=self.name)
        monkeypatch.setenv("QA_STORE_URL", url)
        return dict(env, QA_STORE_URL=url)


@pytest.fixture(scope="module")
def module_store(request) -> ModuleStore:
    postgres = os.environ.get("QA_TEST_STORE", "sqlite") == "postgres"
    return ModuleStore(request.getfixturevalue("pg_server") if postgres else None)


@pytest.fixture
def separate_store(request) -> dict:
    """Environment overrides for a second run in the same test that must have a store of its own: nothing
    for SQLite (it lives in that run's QA_HOME), a second fresh database on Postgres."""
    if os.environ.get("QA_TEST_STORE", "sqlite") != "postgres":
        return {}
    return {"QA_STORE_URL": request.getfixturevalue("pg_server").create_database(f"t_{uuid.uuid4().hex[:12]}")}


@pytest.fixture(autouse=True)
def _store_backend(request, monkeypatch):
    if os.environ.get("QA_TEST_STORE", "sqlite") != "postgres":
        return
    monkeypatch.setenv("QA_STORE_URL", request.getfixturevalue("pg_url"))


@pytest.fixture(scope="session")
def browser(tmp_path_factory):
    """One headless Chromium for the whole session (see qa_testkit.CHROMIUM_ARGS)."""
    from playwright.sync_api import sync_playwright

    from qa_testkit import CHROMIUM_ARGS

    with sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path="/usr/bin/chromium", headless=True,
            args=CHROMIUM_ARGS, viewport={"width": 1280, "height": 900})
        yield ctx
        ctx.close()


@pytest.fixture
def page(browser):
    """A page that records console errors and uncaught exceptions in `page.errors`."""
    pg = browser.new_page()
    pg.errors = []
    pg.on("console", lambda m: pg.errors.append(f"console: {m.text}") if m.type == "error" else None)
    pg.on("pageerror", lambda e: pg.errors.append(f"pageerror: {e}"))
    yield pg
    pg.close()


# --- the fast tier (issue 21) ----------------------------------------------------------------------------
# `make test-fast` (scripts/test_fast.sh) sets QA_TEST_TIER=fast: only tests marked `fast` run, DOCKER_HOST points
# at nothing and `qa` runs in-process (QA_SCHEDULER_MODE=local), so no Redis is started either. A fast test that
# reaches for one of the heavy fixtures below fails at once with the reason, instead of waiting on a daemon.
FAST = os.environ.get("QA_TEST_TIER") == "fast"
HEAVY_FIXTURES = {"docker_client", "base_image", "docker_backend", "pg_server", "pg_url", "browser", "page"}


def pytest_collection_modifyitems(config, items):
    if not FAST:
        return
    keep = [i for i in items if i.get_closest_marker("fast")]
    dropped = [i for i in items if not i.get_closest_marker("fast")]
    config.hook.pytest_deselected(items=dropped)
    items[:] = keep


def pytest_runtest_setup(item):
    if FAST:
        heavy = sorted(HEAVY_FIXTURES & set(getattr(item, "fixturenames", ())))
        if heavy:
            pytest.fail(f"{item.nodeid} is marked fast but uses {', '.join(heavy)} (Docker, Postgres or Chromium)",
                        pytrace=False)
