"""Shared fixtures: the real Docker engine, an isolated QA_HOME, and a check that no container leaks.

Every test that starts containers does so through `docker_backend` (or labels its containers
`envqa`); the session-wide check at the end fails the run if any `envqa` container is left behind.
"""

from __future__ import annotations

import os
import statistics
import sys
import uuid

import pytest

# Every container this test session starts (in-process or in `qa` subprocesses, which inherit the
# environment) carries envqa.session=<this id>; the leak check looks at exactly those.
SESSION = os.environ.setdefault("QA_SESSION", f"pytest-{uuid.uuid4().hex[:12]}")
# Roles get model clients through core's seam (envqa.core.model_client.client_for), which importing envqa.app wires
# to the SDK adapters in envqa.providers, as in every qa process; tests that build a solver directly need it too.
import envqa.app  # noqa: E402, F401
from qa_testkit import EXAMPLES, QA, REPO, containers, copy_example, run_qa, wait_for  # noqa: E402, F401 - after QA_SESSION; re-exported


def _docker():
    import docker

    try:
        client = docker.from_env(timeout=120)
        client.ping()
        return client
    except Exception as e:  # noqa: BLE001  # pragma: no cover - setup.sh starts dockerd; this only explains a broken machine
        pytest.fail(f"Docker engine unreachable ({e}); run `make setup`", pytrace=False)


@pytest.fixture(scope="session")
def docker_client():
    return _docker()


@pytest.fixture(scope="session")
def base_image(docker_client):
    from envqa.core.config import DEFAULT_BASE_IMAGE

    try:
        docker_client.images.get(DEFAULT_BASE_IMAGE)
    except Exception:  # noqa: BLE001 - any failure to find it is the same advice
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
    """Fail the run when a test left an envqa container behind (also after failing tests). Under pytest-xdist only
    the controller looks, once every worker is done: a worker that finished first would see the others' live
    containers of the same session."""
    if hasattr(session.config, "workerinput"):
        return
    try:
        import docker

        client = docker.from_env(timeout=30)
        leftovers = containers(client, f"envqa.session={SESSION}")
    except Exception:  # noqa: BLE001 - no engine, no leftovers to report
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


@pytest.fixture(scope="session")
def example_reports(tmp_path_factory, base_image):
    """`example_reports("NAME")`: the session's one `qa run --json` of examples/NAME under the detection table's
    configuration (qa_testkit.example_report). Use it in a test that only reads the report; a test that asserts on
    a run's own behaviour (its config, its exit, its containers) keeps its own run."""
    from qa_testkit import example_report

    base = tmp_path_factory.getbasetemp()  # under pytest-xdist a worker's own; its parent is the session's
    root = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "example-reports"
    return lambda name: example_report(name, root)


@pytest.fixture
def redis_server(tmp_path):
    """Start private redis-servers for this test: `redis_server()` or `redis_server(workdir, port=..., ...)`
    (envqa.scheduler.embedded.RedisServer's arguments). Each is stopped at teardown whatever the test did; a test
    may stop one earlier (to kill Redis mid-run). Using this fixture is what puts a test in the `redis` tier."""
    from envqa.scheduler.embedded import RedisServer

    started: list = []

    def start(workdir=None, **kwargs):
        server = RedisServer(workdir if workdir is not None else tmp_path / f"redis-{len(started)}", **kwargs).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.cleanup()


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


@pytest.fixture
def keep_logging():
    """A command run in-process sets structlog up for itself (its level, its renderer): put back what was there."""
    import structlog

    saved = structlog.get_config()
    yield
    structlog.configure(**saved)


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
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path="/usr/bin/chromium",
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 900},
        )
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


# --- the tiers (issues 21 and 31) ---------------------------------------------------------------------------
# `fast` is chosen by hand (a test that needs only the venv says so) and held by a guard: `make test-fast` sets
# QA_TEST_TIER=fast, runs only those, points DOCKER_HOST at nothing and runs `qa` in-process, and a fast test that
# reaches for a heavy fixture fails at once with the reason instead of waiting on a daemon.
# The resource tiers (`docker`, `redis`, `postgres`, `browser`) are never set by hand: they are derived here from
# the fixtures a test uses (pytest's closure, so a fixture built on `docker_backend` counts too), and a test that
# runs the real `qa` CLI without being fast uses the Docker engine and an embedded Redis. `slow` is the one tier a
# test declares (`pytest.mark.slow`): what `make test` leaves to `make test-all` for its wall time alone.
FAST = os.environ.get("QA_TEST_TIER") == "fast"
TIER_FIXTURES: dict[str, frozenset[str]] = {
    "docker": frozenset({"docker_client", "base_image", "docker_backend"}),
    "redis": frozenset({"redis_server"}),
    "postgres": frozenset({"pg_server", "pg_url"}),
    "browser": frozenset({"browser", "page"}),
}
CLI_FIXTURES = frozenset({"qa_env", "example_reports"})  # the real `qa` CLI: outside the fast tier, Docker and Redis
# A fixture parametrized over backends (tests/sandbox, tests/store) asks for the heavy fixture only for one of its
# params, through request.getfixturevalue, which pytest cannot see at collection: the param's value names it.
BACKEND_PARAMS = {"docker": "docker", "postgres": "postgres"}
HEAVY_FIXTURES = frozenset().union(*TIER_FIXTURES.values())


def resource_tiers(fixturenames, params: dict, fast: bool) -> set[str]:
    """The resource tiers a test belongs to, from the fixtures it uses, their backend params, and whether it is
    fast."""
    names = set(fixturenames)
    tiers = {tier for tier, fixtures in TIER_FIXTURES.items() if fixtures & names}
    tiers |= {BACKEND_PARAMS[v] for v in params.values() if isinstance(v, str) and v in BACKEND_PARAMS}
    if not fast and CLI_FIXTURES & names:
        tiers |= {"docker", "redis"}
    if os.environ.get("QA_TEST_STORE") == "postgres":  # the Postgres pass: every store is a private server's
        tiers.add("postgres")
    return tiers


# `serial`: a test that asserts on the host's own state (free memory, pids, disk) or on wall-time windows and kill
# timing must not share the 2 cores with another worker; `make test` runs these alone after the parallel pass.
# The scheduler's modules are serial unless listed in PARALLEL_SAFE: these assert on what ran where and what was
# recorded, with no wall-time window and no look at the host's processes, so they share the parallel pass (52 s
# of the 210 s serial pass, measured with --durations=0).
SERIAL_PATHS = ("tests/scheduler/", "tests/chaos/", "tests/foundation/test_hostile.py")
PARALLEL_SAFE = tuple(
    f"tests/scheduler/{name}.py"
    for name in ("test_probe_jobs", "test_stock_rq_worker", "test_real_trial", "test_rq_adapter", "test_policy")
)


def pytest_xdist_make_scheduler(config, log):
    """`--dist loadgroup` (scripts/test.sh): each xdist_group_of group runs on one worker (tests/xdist_groups.py
    says why xdist's own marks cannot do it under pytest 9)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist_groups import GroupScheduling, xdist_group_of

    return GroupScheduling(config, log, group_of=xdist_group_of)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.nodeid.startswith(SERIAL_PATHS) and not item.nodeid.startswith(PARALLEL_SAFE):
            item.add_marker("serial")
        params = getattr(getattr(item, "callspec", None), "params", {})
        fast = bool(item.get_closest_marker("fast"))
        for tier in sorted(resource_tiers(getattr(item, "fixturenames", ()), params, fast)):
            item.add_marker(tier)
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
            pytest.fail(
                f"{item.nodeid} is marked fast but uses {', '.join(heavy)} (Docker, Redis, Postgres or Chromium)",
                pytrace=False,
            )


# --- the detection table (tests/probes/test_detection.py) ---------------------------------------------------
DETECTION_TABLE: dict[str, dict] = {}


def pytest_runtest_logreport(report):
    """Gather the detection table's rows from the test reports: under pytest-xdist they are made in the workers and
    reach the controller only as each report's user_properties."""
    if report.when == "call":
        for key, row in report.user_properties:
            if key == "detection_row":
                DETECTION_TABLE[row["name"]] = row


def pytest_terminal_summary(terminalreporter):
    """Print the detection table gathered by tests/probes/test_detection.py (when it ran). Here, in the root conftest:
    under pytest-xdist the controller collects nothing and loads no conftest below tests/."""
    TABLE = DETECTION_TABLE
    if not TABLE:
        return
    tr = terminalreporter
    tr.section("envqa detection table (qa run --json, no model)")
    tr.write_line(f"{'example':44} {'seconds':>7}  expected -> found (missing / extra)")
    for name, row in sorted(TABLE.items()):
        verdict = "OK " if not row["missing"] and (row["expected"] or not row["found"]) else "BAD"
        tr.write_line(
            f"{verdict} {name:40} {row['seconds']:7.1f}  {row['expected']} -> {row['found']}"
            + (f"  inconclusive={row['inconclusive']}" if row.get("inconclusive") else "")
            + (f"  missing={row['missing']}" if row["missing"] else "")
            + (f"  extra={row['extra']}" if row["extra"] else "")
        )
    seconds = sorted(row["seconds"] for row in TABLE.values())
    false_alarms = sum(1 for row in TABLE.values() if not row["expected"] and row["found"])
    tr.write_line(
        f"{len(seconds)} environments: median {statistics.median(seconds):.1f} s, max {seconds[-1]:.1f} s; "
        f"false alarms on clean examples: {false_alarms}"
    )
