"""Calibration (issue 24): mutation testing decides code or data by content, a surviving mutant of code the
instruction does not name is a warning, the output files are ranked before they are capped; a verifier whose
names do not resolve is inconclusive whatever cut the network; a build step that fails on any base is a finding.

Each changed behaviour has two flawed fixtures in different wording (one shaped like a public task, one ours)
and a clean look-alike that must stay clean. Mutation runs on the fake backend (tests/fake_tasks.py) with the
verifier played in Python: the regular expressions are real, so the mutants' verdicts are.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import pytest

from envqa.core.environment import load_environment
from envqa.core.layout import RunLayout
from envqa.core.models import Finding, Label, Outcome, Severity, TrialResult
from envqa.core.sandbox import ImageBuildError
from envqa.probes.base import ProbeContext
from envqa.probes.inconclusive import build_failure_update, image_map_build_failed, verifier_needs_network
from envqa.probes.mutation.kinds import code_kind, traced_code
from envqa.probes.mutation.probe import mutants_of, output_files
from envqa.probes.oracle_state import oracle_state_probe
from envqa.sandbox.fake import FakeBackend
from envqa.sandbox.fake_commands import FakeOutput
from tests.fake_tasks import script_probe_commands
from tests.probes.conftest import write_env

pytestmark = pytest.mark.fast

# Terminal-Bench's regex-log shape: dates in lines that hold an IPv4 address, the regex kept in /app/regex.txt.
DATE_IN_IP_LINE = (
    r"(?m)^(?=.*\b(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}\b)"
    r".*\b(\d{4}-\d{2}-\d{2})\b"
)
LOG = (
    "2024-01-15 10.0.0.1 GET /index.html\n2024-02-20 no address on this line\n"
    "192.168.1.20 user login 2023-12-31\n1.2.3 is not an address 2022-05-05\n"
)
EXPECTED_DATES = ["2024-01-15", "2023-12-31"]
SEMVER = r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$"
VALID = ["1.0.0", "0.4.12", "10.20.30"]
INVALID = ["1.0", "01.2.3", "1.2.3-beta!"]


def _read(call, path: str) -> bytes | None:
    node = call.sandbox.fs.node(path)
    return node.data if node is not None else None


def _reward(call, ok: bool) -> FakeOutput:
    call.sandbox.fs.write("/logs/verifier/reward.txt", b"1\n" if ok else b"0\n", 0o644)
    return FakeOutput(stdout="passed\n" if ok else "failed\n")


def _task(tmp_path, qa_config, files: dict[str, bytes], verify, instruction: str, tests: dict[str, str]):
    def solve(call):
        for path, data in files.items():
            call.sandbox.fs.write(path, data, 0o644)
        return FakeOutput()

    backend = FakeBackend()
    backend.on(r"bash /solution/solve\.sh")(solve)
    backend.on(r"bash /tests/test\.sh")(lambda call: _reward(call, verify(call)))
    script_probe_commands(backend)
    env = load_environment(write_env(tmp_path / "env", {"instruction.md": instruction, **tests}))
    config = qa_config.model_copy(update={"probes": qa_config.probes.model_copy(update={"verifier_reruns": 0})})
    run_id = f"fake-{uuid.uuid4().hex[:8]}"
    return ProbeContext(
        env=env, config=config, backend=backend, run_id=run_id, layout=RunLayout(config.runs_dir, run_id), validation=[]
    )


REGEX_LOG_TEST = {
    "tests/test_outputs.py": (
        "import re\n\ndef test_dates():\n    pattern = open('/app/regex.txt').read().strip()\n"
        "    log = open('/tests/sample.log').read()\n    assert re.findall(pattern, log) == EXPECTED\n"
    )
}
REGEX_LOG_INSTRUCTION = (
    "Write a regular expression that matches the dates (YYYY-MM-DD) of the lines in a log file "
    "that contain an IPv4 address. Save it in /app/regex.txt; it is used with Python's "
    "re.findall.\n"
)


def _sound_regex_log(call) -> bool:
    """The clean look-alike's verifier: re.findall over the whole log, compared with the expected dates."""
    data = _read(call, "/app/regex.txt")
    if data is None:
        return False
    try:
        return re.findall(data.decode().strip(), LOG) == EXPECTED_DATES
    except re.error:
        return False


def test_clean_look_alike_a_regex_in_a_txt_file_is_code_and_a_sound_verifier_is_not_blamed(tmp_path, qa_config):
    """The sound regex-log task: its regex is mutated like code (emptied), not like data (no number bumped)."""
    data = DATE_IN_IP_LINE.encode() + b"\n"
    # What the extension-based decision did: the number mutant 25 -> 26 is equivalent on this log, and survived.
    as_data = {m.kind: m.data for m in mutants_of("/app/regex.txt", data, False, code=None)}
    assert "number 25 -> 26" in as_data
    assert re.findall(as_data["number 25 -> 26"].decode().strip(), LOG) == EXPECTED_DATES  # equivalent mutant
    ctx = _task(tmp_path, qa_config, {"/app/regex.txt": data}, _sound_regex_log, REGEX_LOG_INSTRUCTION, REGEX_LOG_TEST)
    assert oracle_state_probe(ctx) == []
    assert {"probe": "oracle_state/mutation", "status": "ran", "reason": None} in ctx.coverage


def test_public_shape_a_regex_verifier_that_checks_only_positives_still_fails_at_error(tmp_path, qa_config):
    """regex-log with a verifier that only re.searches the lines that should match: an emptied regex passes."""

    def weak(call):
        data = _read(call, "/app/regex.txt")
        return data is not None and all(
            re.search(data.decode().strip(), ln) for ln in LOG.splitlines() if ln.startswith(("2024-01-15", "192."))
        )

    ctx = _task(
        tmp_path,
        qa_config,
        {"/app/regex.txt": DATE_IN_IP_LINE.encode() + b"\n"},
        weak,
        REGEX_LOG_INSTRUCTION,
        REGEX_LOG_TEST,
    )
    [f] = oracle_state_probe(ctx)
    assert (f.rule, f.label, f.severity) == ("verifier-accepts-mutant", Label.SHORTCUT, Severity.ERROR)
    assert f.evidence[1:] == ["/app/regex.txt: empty -> verifier still passes (code: regular expression)"]


def test_our_wording_a_grep_pattern_file_checked_on_valid_lines_only_fails_at_error(tmp_path, qa_config):
    """Our own wording: an extended regex in /app/pattern.txt fed to `grep -Ec -f`; only valid versions are
    counted, so an empty pattern (it matches every line) passes."""

    def weak(call):
        data = _read(call, "/app/pattern.txt")
        return data is not None and sum(bool(re.search(data.decode().strip(), v)) for v in VALID) == len(VALID)

    tests = {
        "tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\nn=$(grep -Ec -f /app/pattern.txt "
        '/tests/valid.txt)\n[ "$n" = 3 ] && echo 1 > /logs/verifier/reward.txt || '
        "echo 0 > /logs/verifier/reward.txt\n"
    }
    ctx = _task(
        tmp_path,
        qa_config,
        {"/app/pattern.txt": SEMVER.encode() + b"\n"},
        weak,
        "Put an extended regular expression matching plain semantic versions (MAJOR.MINOR.PATCH, no "
        "leading zeros) in /app/pattern.txt.\n",
        tests,
    )
    [f] = oracle_state_probe(ctx)
    assert f.severity == Severity.ERROR
    assert f.evidence[1:] == ["/app/pattern.txt: empty -> verifier still passes (code: regular expression)"]


def test_a_surviving_mutant_of_code_the_instruction_does_not_name_is_a_warning(tmp_path, qa_config):
    """The oracle also left a helper module the verifier imports but never exercises: emptying it survives, and
    that may be an equivalent mutant (the output the task states, /app/out.txt, is checked in full)."""

    def verify(call):
        return _read(call, "/app/helper.py") is not None and _read(call, "/app/out.txt") == b"total 42\n"

    ctx = _task(
        tmp_path,
        qa_config,
        {"/app/out.txt": b"total 42\n", "/app/helper.py": b"import sys\n\ndef total(xs):\n    return sum(xs)\n"},
        verify,
        "Write the total to /app/out.txt as `total N`.\n",
        {},
    )
    [f] = oracle_state_probe(ctx)
    assert f.severity == Severity.WARNING and "equivalent" in f.message
    assert f.evidence[1:] == [
        "/app/helper.py: empty -> verifier still passes (code: python; not an output the instruction names)"
    ]


@pytest.mark.parametrize(
    "path, data, kind",
    [
        ("/app/regex.txt", DATE_IN_IP_LINE.encode(), "regular expression"),
        ("/app/answer.txt", b"import json\nprint(json.dumps({'a': 1}))\n", "python"),
        ("/app/run", b"#!/bin/sh\necho hi\n", "script"),
        ("/app/main.rs", b"fn main() {}\n", "source by name"),
        ("/app/stats.txt", b"-4\n250\n304\n", None),
        ("/app/config.json", b'{"retries": 3, "hosts": ["a", "b"]}\n', None),
        ("/app/settings.env", b"RETRIES = 3\nNAME = 'x'\n", None),
        ("/app/notes.txt", b"The total is 42 (see [1]).\n", None),
        ("/app/prices.csv", b"item,price\napple,1.25\n", None),
    ],
)
def test_code_or_data_is_decided_by_content(path, data, kind):
    assert code_kind(path, data, False) == kind


def test_a_file_the_traced_verifier_runs_is_code_whatever_it_holds(tmp_path):
    """The trust tracer's strace of the verifier shows `bash /app/answer.txt` and an import of /app/rules.dat.py:
    both are code although their content alone would read as data; a file it only opened stays data."""
    trace = tmp_path / "probes" / "trust" / "strace-trust.txt"
    trace.parent.mkdir(parents=True)
    trace.write_text(
        '41 1700000000.000001 execve("/usr/bin/bash", ["bash", "/app/answer.txt"], 0x7ffd /* 9 vars */) = 0\n'
        '42 1700000000.000002 openat(AT_FDCWD, "/app/rules.dat.py", O_RDONLY|O_CLOEXEC) = 3\n'
        '42 1700000000.000003 openat(AT_FDCWD, "/app/out.txt", O_RDONLY) = 4\n'
    )
    traced = traced_code(str(tmp_path))
    assert code_kind("/app/answer.txt", b"echo 42\n", False, "", traced) == "run by the verifier"
    assert code_kind("/app/rules.dat.py", b"LIMIT = 3\n", False, "", traced) == "run by the verifier"
    assert code_kind("/app/out.txt", b"total 42\n", False, "", traced) is None
    assert traced_code(str(tmp_path / "no-trace")) == set()


def test_output_files_rank_before_the_cap_so_the_real_output_is_kept(tmp_path, qa_config):
    """A pip install in solve.sh changes many files that sort before /app: the cap of 2 keeps the stated output."""
    site = [f"/usr/local/lib/python3.11/site-packages/aaa/m{i}.py" for i in range(20)]
    ctx = _task(
        tmp_path,
        qa_config,
        {**dict.fromkeys(site, b"x = 1\n"), "/app/out.txt": b"total 42\n", "/app/a-log.txt": b"ran\n"},
        lambda call: True,
        "Write the total to /app/out.txt.\n",
        {},
    )
    seen: list[list[str]] = []

    def keep(sandbox, result):
        seen.append(output_files(sandbox, 2, ctx.env.instruction))
        seen.append(output_files(sandbox, 2, ctx.env.instruction))

    ctx.trial("oracle", purpose="calibration", keep=keep)
    assert seen[0] == seen[1] == ["/app/out.txt", "/app/a-log.txt"]


# --- a verifier whose names do not resolve: inconclusive, whatever cut the network -----------------------------


def _oracle_result(tmp_path: Path, output: str, outcome=Outcome.FAIL) -> TrialResult:
    trial_dir = tmp_path / "trial"
    (trial_dir / "verifier").mkdir(parents=True)
    (trial_dir / "verifier" / "test-stdout.txt").write_text(output)
    return TrialResult(
        trial_id="t-oracle-0",
        run_id="r",
        env_version="v",
        agent="oracle",
        outcome=outcome,
        reward=0.0,
        artifacts_dir=str(trial_dir),
    )


def _public(qa_config):
    return qa_config.model_copy(
        update={
            "sandbox": qa_config.sandbox.model_copy(update={"default_network": "public", "verifier_network": "task"})
        }
    )


PUBLIC_TASK = {"task.toml": 'version = "1.0"\n[verifier]\ntimeout_sec = 60.0\n[environment]\nallow_internet = true\n'}
PY_TEST = {"tests/test_api.py": "import requests\n\ndef test_api():\n    assert requests.get(URL).ok\n"}


@pytest.mark.parametrize(
    "output, host",
    [
        # public shape: test.sh installs uv with curl, and curl cannot resolve the installer's host
        ("curl: (6) Could not resolve host: astral.sh\n/tests/test.sh: line 5: uvx: command not found\n", "astral.sh"),
        # our wording: a Python test whose requests call fails in the resolver
        (
            "E   requests.exceptions.ConnectionError: HTTPSConnectionPool(host='api.example.org', port=443): Max retries "
            'exceeded (Caused by NameResolutionError("<urllib3.connection.HTTPSConnection>: Failed to resolve '
            "'api.example.org' ([Errno -3] Temporary failure in name resolution)\"))\n",
            "api.example.org",
        ),
    ],
)
def test_resolver_errors_with_a_public_network_are_inconclusive(tmp_path, qa_config, output, host):
    env = load_environment(write_env(tmp_path / "env", {**PUBLIC_TASK, **PY_TEST}))
    outcome = verifier_needs_network(env, _public(qa_config), [_oracle_result(tmp_path, output)])
    assert outcome is not None and outcome["outcome"] == "verifier-needs-network"
    assert outcome["network_cut_by"] == "machine" and "did not cut it" in outcome["message"]
    assert any(host in u for u in outcome["urls"])


def test_clean_look_alike_a_refused_local_connection_stays_the_tasks_failure(tmp_path, qa_config):
    """The oracle did not start its server: `connection refused` on localhost is the task's, not the network's."""
    env = load_environment(write_env(tmp_path / "env", {**PUBLIC_TASK, **PY_TEST}))
    output = "curl: (7) Failed to connect to localhost port 8080 after 0 ms: Connection refused\n"
    assert verifier_needs_network(env, _public(qa_config), [_oracle_result(tmp_path, output)]) is None


def test_a_task_that_declares_no_network_keeps_its_resolver_failure(tmp_path, qa_config):
    env = load_environment(write_env(tmp_path / "env", PY_TEST))  # BASE_FILES: allow_internet = false
    output = "curl: (6) Could not resolve host: astral.sh\n"
    assert verifier_needs_network(env, _public(qa_config), [_oracle_result(tmp_path, output)]) is None


# --- a build step that fails on any base image is the task's finding ----------------------------------------


def _build_error(tmp_path, dockerfile: str, step: str, message: str, files: dict[str, str] | None = None):
    env = load_environment(write_env(tmp_path / "env", {"environment/Dockerfile": dockerfile, **(files or {})}))
    return env, ImageBuildError(f"image build failed: {message}", f"Step 3/3 : {step}\n{message}")


@pytest.mark.parametrize(
    "dockerfile, step, message, why",
    [
        # public shape: the task copies its data from the task root, outside environment/
        (
            "FROM ubuntu:22.04\nWORKDIR /app\nCOPY ../data/input.csv /app/input.csv\n",
            "COPY ../data/input.csv /app/input.csv",
            "COPY failed: forbidden path outside the build context: ../data/input.csv ()",
            "outside the build context",
        ),
        # our wording: a requirements file the Dockerfile names but the task never shipped
        (
            "FROM python:3.12-slim\nWORKDIR /app\nCOPY --chown=1000 requirements.txt /app/\n",
            "COPY --chown=1000 requirements.txt /app/",
            "COPY failed: file not found in build context or excluded by .dockerignore: stat requirements.txt: file "
            "does not exist",
            "missing from the build context",
        ),
    ],
)
def test_a_copy_that_fails_on_any_base_is_a_finding_not_image_map_build_failed(
    tmp_path, qa_config, dockerfile, step, message, why
):
    env, error = _build_error(tmp_path, dockerfile, step, message)
    assert image_map_build_failed(env, qa_config, error) is None
    finding = Finding(
        rule="image-build-failed",
        label=Label.BRITTLENESS,
        severity=Severity.CRITICAL,
        message=f"the environment's image does not build: {error}",
        location="environment/Dockerfile",
    )
    update = build_failure_update(env, qa_config, error, finding)
    [f] = update["findings"]
    assert "inconclusive" not in update and f["rule"] == "image-build-failed"
    assert why in f["evidence"][0] and "does not depend on the base image" in f["message"]


def test_clean_look_alike_a_copy_that_exists_then_a_base_specific_step_stays_inconclusive(tmp_path, qa_config):
    env, error = _build_error(
        tmp_path,
        "FROM ubuntu:22.04\nCOPY setup.sh /app/\nRUN add-apt-repository -y ppa:x\n",
        "RUN add-apt-repository -y ppa:x",
        "The command '/bin/sh -c add-apt-repository -y ppa:x' returned a non-zero code: 127",
        {"environment/setup.sh": "#!/bin/sh\n"},
    )
    outcome = image_map_build_failed(env, qa_config, error)
    assert outcome is not None and outcome["outcome"] == "image-map-build-failed"
    env, error = _build_error(
        tmp_path / "b",
        "FROM ubuntu:22.04\nCOPY setup.sh /app/\n",
        "COPY setup.sh /app/",
        "some other failure",
        {"environment/setup.sh": "#!/bin/sh\n"},
    )
    assert image_map_build_failed(env, qa_config, error) is not None  # the source exists: maybe the base's doing
