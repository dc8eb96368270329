"""Shapes read on real tasks (issue 42, the TB2 dev split's unchanged tasks), each with its flaw and a look-alike:
the verifier's own outputs and the instruction's name templates are not outputs the instruction omits; a junior's
estimate of weeks is plausible; an unpinned pip install in the build of a prebuilt image is info. Files only."""

from __future__ import annotations

import pytest

from envqa.core.consistency.verifier_writes import templated, verifier_writes
from envqa.core.environment import load_environment
from envqa.probes.static.fetch_rules import unpinned_python_findings as pin_rules
from envqa.probes.static.instruction_rules import instruction_findings
from envqa.probes.static.metadata_rules import estimate_rules

from .conftest import write_env

pytestmark = pytest.mark.fast

OMITS = "instruction-omits-tested-requirement"
INSTRUCTION = "Write a compressor /app/compress.c; the data is in /app/data.txt.\n"
SOLVE = "#!/bin/bash\ncp /tmp/c.c /app/compress.c\n"


def omitted(tmp_path, test_py: str, instruction: str = INSTRUCTION) -> list[str]:
    env_dir = write_env(
        tmp_path,
        {
            "tests/test_outputs.py": test_py,
            "tests/test.sh": "#!/bin/bash\npytest /tests/test_outputs.py\n",
            "instruction.md": instruction,
            "solution/solve.sh": SOLVE,
        },
    )
    env = load_environment(env_dir, lint=True)
    return [f.message for f in instruction_findings(env) if f.rule == OMITS]


# The verifier makes these itself before it reads them: never the agent's outputs.
OWN_OUTPUTS = {
    "compiled, absolute": 'import subprocess\nfrom pathlib import Path\n\ndef test_x():\n    subprocess.run(["gcc", '
    '"-o", "/app/new.o", "/app/compress.c"])\n    assert Path("/app/new.o").exists()\n',
    "compiled, relative": 'import subprocess\nfrom pathlib import Path\n\ndef test_x():\n    subprocess.run(["cc", '
    '"-o", "dec2", "compress.c"], check=True)\n    assert Path("/app/dec2").exists()\n',
    "an editor script in a string": 'import subprocess\nfrom pathlib import Path\nSCRIPT = ["let n = 3",\n    '
    "\"call writefile([printf('n=%d', n)],\"\n    \"'/app/counts.out', 'w')\"]\n\ndef test_x():\n    "
    'Path("/tmp/s.vim").write_text("\\n".join(SCRIPT))\n    subprocess.run(["vim", "-Es", "-S", "/tmp/s.vim"])\n'
    '    assert Path("/app/counts.out").exists()\n',
    "a shell line's redirection": "import subprocess\nfrom pathlib import Path\n\ndef test_x():\n    subprocess.run("
    '"/app/compress < /app/data.txt > /app/data.z", shell=True)\n    assert Path("/app/data.z").exists()\n',
}


@pytest.mark.parametrize("case", sorted(OWN_OUTPUTS))
def test_an_output_the_verifier_makes_itself_is_not_omitted(tmp_path, case):
    assert not [m for m in omitted(tmp_path, OWN_OUTPUTS[case]) if "/app/compress.c" not in m]


def test_an_output_nobody_but_the_agent_makes_is_still_omitted(tmp_path):
    # the look-alike: the same reads, with no command of the verifier's writing the file
    test_py = 'from pathlib import Path\n\ndef test_x():\n    assert Path("/app/new.o").exists()\n'
    (message,) = omitted(tmp_path, test_py)
    assert "/app/new.o" in message
    # compiling something else, or writing another file, does not excuse it
    test_py = (
        'import subprocess\nfrom pathlib import Path\n\ndef test_x():\n    subprocess.run(["gcc", "-o", "/app/other", '
        '"/app/compress.c"])\n    assert Path("/app/new.o").exists()\n'
    )
    (message,) = omitted(tmp_path / "b", test_py)
    assert "/app/new.o" in message


def test_what_the_verifier_writes():
    writes = verifier_writes(
        'subprocess.run(["gcc", "-o", "decomp2", "decomp.c"])\nmake | tee tests.txt\nx > /dev/null'
    )
    assert writes.covers("/app/decomp2") and writes.covers("/app/ocaml/tests.txt")
    assert not writes.covers("/dev/null") and not writes.covers("/app/decomp.c")
    assert not verifier_writes('grep -o "x" /app/log\ncurl -O https://e.org/a').covers("/app/log")


def test_a_name_template_in_the_instruction_states_the_files_it_matches(tmp_path):
    instruction = "Generate the Python code (protobuf writes two files: {class name}_pb2.py and " + (
        "{class name}_pb2_grpc.py) and place them in /app.\n"
    )
    test_py = 'from pathlib import Path\n\ndef test_x():\n    assert Path("/app/kv_pb2.py").exists()\n'
    assert omitted(tmp_path, test_py, instruction) == []
    # the look-alike: a template of another suffix states nothing about this file
    other = "Write one file `<record id>.json` per record into /app.\n"
    assert len(omitted(tmp_path / "b", test_py, other)) == 1


def test_templates():
    assert templated("one file `<id>.json` per record", "/app/out/17.json")
    assert templated("write /srv/out_{n}.txt for each n", "/srv/out_3.txt")
    assert not templated("write /srv/out_{n}.txt for each n", "/app/out_3.txt")  # an absolute template: whole path
    assert not templated("edit the <script> tags and the {name} field", "/app/anything.py")  # no literal part


ESTIMATE_TOML = (
    'version = "1.0"\n[metadata]\ndifficulty = "hard"\nexpert_time_estimate_min = {expert}\n'
    "junior_time_estimate_min = {junior}\n[agent]\ntimeout_sec = 1800.0\n"
)


@pytest.mark.parametrize(
    "expert,junior,flagged",
    [
        (480, 19200, False),  # a junior's 13 days on a hard cryptanalysis task: honest
        (1440, 14400, False),
        (480, 200000, True),  # a junior's 139 days: seconds written as minutes
        (12000, 19200, True),  # an expert's 8 days: still past the expert's week
    ],
)
def test_a_junior_estimate_of_weeks_is_plausible_a_quarter_is_not(tmp_path, expert, junior, flagged):
    env_dir = write_env(tmp_path, task_toml=ESTIMATE_TOML.format(expert=expert, junior=junior))
    found = [f for f in estimate_rules(load_environment(env_dir, lint=True)) if f.severity.value == "warning"]
    assert bool(found) is flagged


PREBUILT = 'version = "1.0"\n[environment]\ndocker_image = "someone/task:20250101"\n'


def test_an_unpinned_install_in_a_prebuilt_image_is_info_in_test_sh_a_warning(tmp_path):
    dockerfile = "FROM python:3.12-slim\nRUN pip install chess\n"
    test_sh = "#!/bin/bash\npip install pytest\npytest /tests\n"
    env_dir = write_env(tmp_path, environment__Dockerfile=dockerfile, tests__test_sh=test_sh, task_toml=PREBUILT)
    found = {(f.location, f.severity.value) for f in pin_rules(load_environment(env_dir, lint=True))}
    assert found == {("environment/Dockerfile:2", "info"), ("tests/test.sh:2", "warning")}
    # without a prebuilt image too: the image is built once and then frozen, so the Dockerfile's is info (issue 52:
    # aws-bench's sound tasks), and the message says it bites at a rebuild
    env_dir = write_env(tmp_path / "b", environment__Dockerfile=dockerfile)
    (finding,) = pin_rules(load_environment(env_dir, lint=True))
    assert finding.severity.value == "info" and "rebuild" in finding.message


# The instruction read against the tests: a strict threshold, an exact listing, a signature, a scratch path.
from envqa.probes.static.instruction_signatures import signature_findings  # noqa: E402
from envqa.probes.static.instruction_test_bounds import bound_findings  # noqa: E402


def bounds_of(tmp_path, instruction: str, test_py: str) -> list[tuple[str, list[str]]]:
    env_dir = write_env(tmp_path, {"tests/test_outputs.py": test_py, "instruction.md": instruction})
    return [(f.rule, f.evidence) for f in bound_findings(load_environment(env_dir, lint=True))]


@pytest.mark.parametrize(
    "instruction,test_py",
    [
        ("Train a model that gets at least 0.62 accuracy.\n", "T = 0.62\n\ndef test_a():\n    assert acc() > T\n"),
        ("Keep the archive at most 150 MB; recall must be at least 90%.\n", "def test_a():\n    assert 0.9 < r()\n"),
        ("Use no more than 10 requests.\n", "def test_a():\n    assert n() < 10\n"),
    ],
)
def test_a_strict_test_of_an_inclusive_bound_is_named_with_both_lines(tmp_path, instruction, test_py):
    ((rule, evidence),) = bounds_of(tmp_path, instruction, test_py)
    assert rule == "test-threshold-stricter-than-instruction"
    assert evidence[0].startswith("test: tests/test_outputs.py:") and evidence[1].startswith("instruction: ")


@pytest.mark.parametrize(
    "instruction,test_py",
    [
        ("Train a model that gets at least 0.62 accuracy.\n", "def test_a():\n    assert acc() >= 0.62\n"),
        ("Train a model with more than 0.62 accuracy.\n", "def test_a():\n    assert acc() > 0.62\n"),
        ("Train a model that gets at least 0.62 accuracy.\n", "def test_a():\n    assert acc() > 0.5\n"),
    ],
)
def test_an_inclusive_test_or_a_strict_instruction_stays_quiet(tmp_path, instruction, test_py):
    assert bounds_of(tmp_path, instruction, test_py) == []


LISTING_TEST = (
    'import os\n\ndef test_only_the_source():\n    files = sorted(os.listdir("/app/poly"))\n'
    '    assert files == ["main.rs"]\n'
)


def test_an_exact_listing_the_instructions_own_command_breaks(tmp_path):
    instruction = "Write /app/poly/main.rs; I build it with `g++ -x c++ /app/poly/main.rs -o /app/poly/cmain`.\n"
    ((rule, evidence),) = bounds_of(tmp_path, instruction, LISTING_TEST)
    assert rule == "tests-require-listing-instruction-breaks" and "/app/poly/cmain" in evidence[1]
    # the look-alike: the build writes elsewhere, so the listing holds
    quiet = "Write /app/poly/main.rs; I build it with `g++ -x c++ /app/poly/main.rs -o /tmp/cmain`.\n"
    assert bounds_of(tmp_path / "b", quiet, LISTING_TEST) == []


SIGNATURE_TEST = (
    "import subprocess\n\ndef test_sampler():\n    code = \"source('/app/ars.R'); s <- ars(dnorm, c(-5, 5), n = 100)\"\n"
    '    assert subprocess.run(["Rscript", "-e", code]).returncode == 0\n'
)
SIGNATURE_SOLVE = "#!/bin/bash\ncat > /app/ars.R <<'R'\nars <- function(f, bounds, n) { f(bounds) }\nR\n"


def signature_of(tmp_path, instruction: str, solve: str = SIGNATURE_SOLVE) -> list[str]:
    env_dir = write_env(
        tmp_path,
        {"tests/test_outputs.py": SIGNATURE_TEST, "instruction.md": instruction, "solution/solve.sh": solve},
    )
    return [f.message for f in signature_findings(load_environment(env_dir, lint=True))]


def test_a_function_the_tests_call_with_an_unstated_keyword_is_named(tmp_path):
    (message,) = signature_of(tmp_path, 'Save it in /app/ars.R with a primary function named "ars".\n')
    assert "ars(...)" in message and "keyword n" in message


@pytest.mark.parametrize(
    "instruction,solve",
    [
        # the instruction gives the call form
        ('Save it in /app/ars.R with a function named "ars": `ars(density, domain, n = count)`.\n', SIGNATURE_SOLVE),
        # a library function the instruction quotes (the oracle never defines it): not the agent's to write
        ('Densities such as the "dnorm" function are inputs; write "ars".\n', "#!/bin/bash\ncp /x /app/ars.R\n"),
    ],
)
def test_a_stated_signature_or_a_library_function_stays_quiet(tmp_path, instruction, solve):
    assert signature_of(tmp_path, instruction, solve) == []


SOCKET_TEST = (
    'import subprocess\nimport pytest\n\n@pytest.fixture\ndef monitor():\n    return "/tmp/vm-monitor.sock"\n\n'
    'def test_keys(monitor):\n    assert subprocess.run(["socat", "-", f"UNIX-CONNECT:{monitor}"]).returncode == 0\n'
)


@pytest.mark.parametrize(
    "instruction,solve,omitted_too",
    [
        (
            "Start the VM and make it accept keyboard input.\n",
            "#!/bin/bash\nqemu -monitor unix:/tmp/vm-monitor.sock\n",
            1,
        ),
        (
            "Start the VM with its monitor on /tmp/vm-monitor.sock.\n",
            "#!/bin/bash\nqemu -monitor unix:/tmp/vm-monitor.sock\n",
            0,
        ),
        # the tests' own scratch file, which the oracle never touches
        ("Start the VM and make it accept keyboard input.\n", "#!/bin/bash\nqemu -monitor stdio\n", 0),
    ],
)
def test_a_scratch_path_the_oracle_chose_and_the_instruction_never_names(tmp_path, instruction, solve, omitted_too):
    env_dir = write_env(
        tmp_path,
        {
            "tests/test_outputs.py": SOCKET_TEST,
            "tests/test.sh": "#!/bin/bash\npytest /tests/test_outputs.py\n",
            "instruction.md": instruction,
            "solution/solve.sh": solve,
        },
    )
    found = [f for f in instruction_findings(load_environment(env_dir, lint=True)) if f.rule == OMITS]
    assert len(found) == omitted_too
    assert all("/tmp/vm-monitor.sock" in f.message and len(f.evidence) == 2 for f in found)


from envqa.probes.static.instruction_preserve import preserve_findings  # noqa: E402

NORMALISING_TEST = (
    "from pathlib import Path\nfrom bs4 import BeautifulSoup\n\ndef test_clean_page_unchanged():\n"
    '    original = Path("/tests/page.html").read_text()\n    out = Path("/app/page.html").read_text()\n'
    '    expected = str(BeautifulSoup(original, "html.parser"))\n    assert out.replace(" ", "") == expected.replace(" ", "")\n'
)
JSON_TEST = (
    "import json\nfrom pathlib import Path\n\ndef test_config_kept():\n"
    '    assert Path("/app/c.json").read_text() == json.dumps(json.loads(Path("/tests/c.json").read_text()), indent=2)\n'
)
RAW_TEST = (
    "from pathlib import Path\n\ndef test_clean_page_unchanged():\n"
    '    assert Path("/app/page.html").read_text() == Path("/tests/page.html").read_text()\n'
)


def preserve_of(tmp_path, instruction: str, test_py: str) -> list[list[str]]:
    env_dir = write_env(tmp_path, {"tests/test_outputs.py": test_py, "instruction.md": instruction})
    return [f.evidence for f in preserve_findings(load_environment(env_dir, lint=True))]


@pytest.mark.parametrize(
    "instruction,test_py",
    [
        (
            "Strip the scripts from /app/page.html. Do not alter the formatting of the page in any way.\n",
            NORMALISING_TEST,
        ),
        ("Update the port in /app/c.json; keep everything else verbatim.\n", JSON_TEST),
    ],
)
def test_an_instruction_that_forbids_what_the_test_normalises(tmp_path, instruction, test_py):
    ((test_side, instruction_side),) = preserve_of(tmp_path, instruction, test_py)
    assert test_side.startswith("test: tests/test_outputs.py:") and instruction_side.startswith("instruction: ")


@pytest.mark.parametrize(
    "instruction,test_py",
    [
        # the instruction allows the parser's normalisation
        (
            "Strip the scripts. Do not alter the formatting in any way (except for normalization by an HTML parser).\n",
            NORMALISING_TEST,
        ),
        # the test compares raw with raw: the instruction's letter is what it checks
        ("Strip the scripts. Do not alter the formatting of the page in any way.\n", RAW_TEST),
        # no such promise in the instruction
        ("Strip the scripts from /app/page.html.\n", NORMALISING_TEST),
    ],
)
def test_an_allowed_normalisation_or_a_raw_comparison_stays_quiet(tmp_path, instruction, test_py):
    assert preserve_of(tmp_path, instruction, test_py) == []


from envqa.core.task_model.thresholds import thresholds_in  # noqa: E402


def test_a_set_intersection_score_is_a_threshold_over_records():
    assert thresholds_in("def test():\n    score = len(set(want) & set(got))\n    assert score > 6\n", "t") == [
        "t:3: score > 6"
    ]
    assert thresholds_in("def test():\n    assert len(set(a).intersection(b)) >= 7\n", "t")
    # look-alikes: a non-empty overlap, and a union, are no tolerance
    assert thresholds_in("def test():\n    assert len(set(a) & set(b)) >= 1\n", "t") == []
    assert thresholds_in("def test():\n    assert len(a | b) > 6\n", "t") == []
