"""Seed inputs for the bad-input fuzzer (issue 44), written by us: a Harbor task, a Terminal-Bench 1 task, a
qa.toml, and (through envqa.demo.imported_runs) a Harbor job and `tb run` folders. Small on purpose: a mutated
copy is made per case, and `qa lint` / `qa analyze` read it in-process in well under a second."""

from __future__ import annotations

from pathlib import Path

from envqa.demo.imported_runs import write_fixture_runs
from qa_testkit import write_files

HARBOR_TASK = {
    "task.toml": """version = "1.0"

[metadata]
author_name = "envqa"
difficulty = "easy"
category = "programming"
tags = ["text", "fuzz-seed"]

[agent]
timeout_sec = 120.0

[verifier]
timeout_sec = 60.0

[environment]
build_timeout_sec = 120.0
cpus = 1
memory_mb = 512
allow_internet = false
""",
    "instruction.md": "Write /app/count.py: it prints how many lines its input file has.\n",
    "environment/Dockerfile": "FROM debian:bookworm\nWORKDIR /app\nCOPY requirements.txt /tmp/\n",
    "environment/requirements.txt": "pytest==8.4.1\n",
    "solution/solve.sh": "#!/bin/bash\nprintf 'import sys\\nprint(len(open(sys.argv[1]).read().splitlines()))\\n' > /app/count.py\n",
    "tests/test.sh": """#!/bin/bash
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
python3 -m pytest -q /tests/test_count.py && echo 1 > /logs/verifier/reward.txt
exit 0
""",
    "tests/test_count.py": """import subprocess


def test_counts_lines(tmp_path):
    p = tmp_path / "in.txt"
    p.write_text("a\\nb\\nc\\n")
    out = subprocess.run(["python3", "/app/count.py", str(p)], capture_output=True, text=True)
    assert out.stdout.strip() == "3"
""",
    "tests/data.json": '{"cases": [{"lines": 3, "text": "a\\\\nb\\\\nc"}], "meta": {"v": 1}}\n',
}

TB1_TASK = {
    "task.yaml": """instruction: |-
  Write the numbers 1 to 5 to /app/out.txt, one per line.
author_name: envqa
difficulty: easy
category: example
tags:
  - fuzz-seed
parser_name: pytest
max_agent_timeout_sec: 60
max_test_timeout_sec: 30
""",
    "Dockerfile": "FROM debian:bookworm\nWORKDIR /app\n",
    "solution.sh": "#!/bin/bash\nseq 1 5 > /app/out.txt\n",
    "run-tests.sh": '#!/bin/bash\ncd "${TEST_DIR:-/tests}"\npython3 -m pytest -rA test_outputs.py\n',
    "tests/test_outputs.py": """from pathlib import Path


def test_numbers():
    assert Path("/app/out.txt").read_text().split() == [str(i) for i in range(1, 6)]
""",
}

QA_TOML = """[probes]
enabled = ["static"]
lint_root_agent = false

[sweep]
band_low = 0.1
band_high = 0.9
"""


def write_seeds(root: Path) -> dict[str, Path]:
    """Every seed under `root`: {"harbor": task, "tb1": task, "qa.toml": file, "harbor_job": job, "tb_runs": runs}."""
    runs = write_fixture_runs(root / "runs")
    qa_toml = root / "qa.toml"
    qa_toml.write_text(QA_TOML)
    return {
        "harbor": write_files(root / "harbor-task", HARBOR_TASK),
        "tb1": write_files(root / "tb1-task", TB1_TASK),
        "qa.toml": qa_toml,
        "harbor_job": runs.harbor_job,
        "tb_runs": runs.tb_runs,
    }
