"""Two "hosts" that share only Redis and Postgres: `qa run` on host A, a `qa worker` on host B.

Each side runs in its own mount namespace in which the OTHER host's directory is covered by an empty tmpfs,
so nothing can pass through the filesystem: host B gets the task from the store, and host A's report gets
every trial's files (result.json, verifier output, agent log) from the store too. The second test runs the
solver's trial on host B and its trace analysis on a worker of host A (its own QA_HOME): the analyst must
read the trajectory from the store.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from analyst import scripts as s
from envqa.store.db import Store
from envqa.store.shared_files import artifact_paths
from providers.conftest import GOOD_KEY, fake_provider  # noqa: F401  (fixture)
from qa_testkit import QA, copy_example, wait_for

pytestmark = pytest.mark.skipif(
    shutil.which("unshare") is None, reason="util-linux unshare is part of Debian's base system"
)


def _hidden(other: Path, argv: list[str]) -> list[str]:
    """argv run in a private mount namespace where `other` is an empty directory."""
    return ["unshare", "--mount", "sh", "-c", 'mount -t tmpfs tmpfs "$0" && exec "$@"', str(other), *argv]


@contextmanager
def _workers(tmp_path: Path, env: dict, specs: list[tuple[str, Path, Path, str]]):
    """Start `qa worker`s: (name, its QA_HOME, the directory hidden from it, its queues)."""
    procs = []
    try:
        for name, home, hidden, queues in specs:
            home.mkdir(parents=True, exist_ok=True)
            procs.append(
                subprocess.Popen(
                    _hidden(
                        hidden,
                        [
                            sys.executable,
                            "-m",
                            "envqa.app.cli",
                            "worker",
                            "--url",
                            env["REDIS_URL"],
                            "--queues",
                            queues,
                        ],
                    ),
                    env={**env, "QA_HOME": str(home)},
                    cwd=home,
                    stdout=subprocess.DEVNULL,
                    stderr=open(tmp_path / f"worker-{name}.log", "wb"),
                )
            )
        yield
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            wait_for(lambda p=p: p.poll() is not None, 30, "a worker to stop")


def _logs(tmp_path: Path) -> str:
    return "".join(p.read_text()[-1500:] for p in sorted(tmp_path.glob("worker-*.log")))


def _run_on_a(tmp_path: Path, hosts, workers: list, args: list[str], exit_codes: tuple[int, ...]) -> dict:
    """`qa run ARGS --json --oracle-runs 1` on host A (host B hidden) while `workers` serve; its report."""
    host_a, host_b, common = hosts
    with _workers(tmp_path, common, workers):
        run = subprocess.run(
            _hidden(host_b, [QA, "run", *args, "--json", "--oracle-runs", "1"]),
            env={**common, "QA_HOME": str(host_a / "home")},
            cwd=host_a,
            capture_output=True,
            text=True,
            timeout=420,
        )
    assert run.returncode in exit_codes, run.stderr[-3000:] + _logs(tmp_path)
    return json.loads(run.stdout.splitlines()[-1])


@pytest.fixture
def hosts(tmp_path, qa_env, pg_url, redis_server):
    """(host A, host B, the environment both share: Redis and Postgres only)."""
    host_a, host_b = tmp_path / "host-a", tmp_path / "host-b"
    (host_a / "home").mkdir(parents=True)
    (host_b / "home").mkdir(parents=True)
    redis = redis_server(tmp_path / "redis")
    try:
        yield host_a, host_b, {**qa_env, "REDIS_URL": redis.url, "QA_STORE_URL": pg_url}
    finally:
        redis.cleanup()


def test_a_run_on_host_a_with_its_trials_on_host_b_shares_no_directory(tmp_path, hosts, pg_url, base_image):
    host_a, host_b, _common = hosts
    env_dir = copy_example("clean-wordfreq", host_a)
    (host_a / "qa.toml").write_text("[probes]\nenabled = []\n")
    report = _run_on_a(tmp_path, hosts, [("b", host_b / "home", host_a, "sandbox")], [str(env_dir)], (0,))
    trials = report["trials"]
    assert sorted(t["agent"] for t in trials) == ["nop", "oracle"]
    store = Store(pg_url)
    for t in trials:
        # host B ran it: it wrote the files under ITS home, then into the store ...
        on_b = host_b / "home" / "runs" / report["run_id"] / t["trial_id"]
        stored = artifact_paths(store, t["trial_id"])
        assert "result.json" in stored and any(p.startswith("verifier/") for p in stored), stored
        assert sorted(p.relative_to(on_b).as_posix() for p in on_b.rglob("*") if p.is_file()) == stored
        # ... and host A's run directory holds the same files, which it could only have read from the store
        on_a = host_a / "home" / "runs" / report["run_id"] / t["trial_id"]
        for rel in stored:
            assert (on_a / rel).read_bytes() == (on_b / rel).read_bytes(), rel
    # the worker took the task from the store (host A's directory was never visible to it)
    assert [p.name for p in (host_b / "home" / "envs-cache").iterdir()] == [report["environment"]["version"]]
    html = host_a / "home" / "runs" / report["run_id"] / "report.html"
    if html.exists():  # the HTML report, when built, shows the fetched verifier output
        text = html.read_text()
        assert all(t["trial_id"] in text for t in trials)


def test_the_analyst_on_host_a_reads_the_trajectory_of_a_trial_that_ran_on_host_b(
    tmp_path,
    hosts,
    fake_provider,  # noqa: F811
    base_image,
):
    """The analyst's answer quotes the solver's step 3; the fake answers only when that step's text is in the
    prompt (its branch), and code verifies the quote against the trajectory the analyst job loaded."""
    host_a, host_b, common = hosts
    srv = fake_provider(
        {
            "models": {
                "solver": s.solver("HOST-B-RUN"),
                "analyst": {
                    "branches": [
                        s.branch(
                            "HOST-B-RUN",
                            s.answer("legitimate", "earned-pass", [(3, "HOST-B-RUN: I'll look around first.")]),
                        )
                    ]
                },
            }
        }
    )
    common = {**common, "ANTHROPIC_API_KEY": GOOD_KEY, "ANTHROPIC_BASE_URL": srv.url}
    env_dir = copy_example("clean-wordfreq", host_a)
    (host_a / "qa.toml").write_text("[probes]\nenabled = []\n[loop]\nmax_iterations = 0\n")
    report = _run_on_a(
        tmp_path,
        (host_a, host_b, common),
        [
            ("b", host_b / "home", host_a, "sandbox,anthropic/solver"),
            ("a", host_a / "worker-home", host_b, "anthropic/analyst"),
        ],
        [str(env_dir), "-n", "1", "-m", "anthropic/solver", "--analyst-model", "anthropic/analyst"],
        (0, 1),
    )
    solver = next(t for t in report["trials"] if t["agent"] == "solver")
    assert solver["outcome"] == "pass", solver
    # the trial ran on host B (its trajectory is under host B's home, a directory host A's side never sees) ...
    assert (host_b / "home" / "runs" / report["run_id"] / solver["trial_id"] / "agent" / "trajectory.json").is_file()
    # ... and the analysis on host A's worker saw its trajectory: the answer only comes when step 3 is in the
    # prompt, and its quote is verified against the trajectory the job loaded
    label = solver["label"]
    assert (label["label"], label["source"], label["verified"]) == ("legitimate", "model:anthropic/analyst", True), (
        label
    )
    assert [r["status"] for r in srv.requests if r["model"] == "analyst"] == [200]
    # (it fetched the trial's files from the store into its own home)
    fetched = host_a / "worker-home" / "runs" / report["run_id"] / solver["trial_id"] / "agent" / "trajectory.json"
    assert fetched.is_file(), _logs(tmp_path)


def test_a_probe_runs_on_host_b_and_its_trial_files_reach_host_a(tmp_path, hosts, pg_url, base_image):
    """Probes are jobs on the sandbox queue too (issue 9): host B's worker rebuilds the exploit probe from the
    store (the task's bundle, the validation trials by id), runs the exploit and uploads its files; host A's
    report has the finding, and its run directory the exploit trial's files, read from the store."""
    host_a, host_b, _common = hosts
    env_dir = copy_example("reward-tamper", host_a)
    (host_a / "qa.toml").write_text(
        '[probes]\nenabled = ["exploits"]\nexploits = ["exploit-reward-tamper"]\n[loop]\nmax_iterations = 0\n'
    )
    report = _run_on_a(tmp_path, hosts, [("b", host_b / "home", host_a, "sandbox")], [str(env_dir)], (1,))
    assert "exploit-reward-tamper" in {f["rule"] for f in report["findings"]}
    [exploit] = [t for t in report["trials"] if t["agent"] == "exploit-reward-tamper"]
    assert exploit["outcome"] == "pass"  # the tampering earned reward: that is the finding
    stored = artifact_paths(Store(pg_url), exploit["trial_id"])
    assert "result.json" in stored, stored
    on_b = host_b / "home" / "runs" / report["run_id"] / exploit["trial_id"]
    on_a = host_a / "home" / "runs" / report["run_id"] / exploit["trial_id"]
    for rel in stored:
        assert (on_a / rel).read_bytes() == (on_b / rel).read_bytes(), rel
