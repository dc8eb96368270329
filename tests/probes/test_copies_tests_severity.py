"""dockerfile-copies-tests calibrated (issue 42): critical when the image receives the verifier's checks or an
expected output, a warning when the instruction points the agent to the copied checks, info when the copied files
are the task's inputs kept under a tests/ folder of the build context. Files only."""

from __future__ import annotations

import pytest

from envqa.core.environment import load_environment
from envqa.probes.static.lint import lint_structure

from .conftest import write_env

pytestmark = pytest.mark.fast


def severities(tmp_path, dockerfile: str, files: dict[str, str], instruction: str | None = None) -> list[str]:
    extra = {f"environment/{k}": v for k, v in files.items()}
    if instruction is not None:
        extra["instruction.md"] = instruction
    task = write_env(tmp_path / "t", {"environment/Dockerfile": dockerfile, **extra})
    return [
        f.severity.value
        for f in lint_structure(load_environment(task, lint=True))
        if f.rule == "dockerfile-copies-tests"
    ]


@pytest.mark.parametrize(
    "dockerfile,files",
    [
        ("FROM debian:bookworm\nCOPY tests/ /tests/\n", {"tests/test_outputs.py": "def test(): pass\n"}),
        ("FROM debian:bookworm\nCOPY tests /opt/t\n", {}),  # the verifier's folder, even when not there
        ("FROM debian:bookworm\nCOPY tests/test_outputs.py /app/\n", {"tests/test_outputs.py": "x = 1\n"}),
        ("FROM debian:bookworm\nCOPY tests/expected_output.txt /app/\n", {"tests/expected_output.txt": "42\n"}),
        (
            "FROM debian:bookworm\nCOPY tests/data /app/data\n",
            {"tests/data/reference.png": "png", "tests/data/in.txt": "x"},
        ),
    ],
)
def test_the_verifiers_checks_or_answers_in_the_image_stay_critical(tmp_path, dockerfile, files):
    assert severities(tmp_path, dockerfile, files) == ["critical"]


def test_checks_the_instruction_points_to_are_a_warning(tmp_path):
    got = severities(
        tmp_path,
        "FROM debian:bookworm\nCOPY tests/test_outputs.py /app\n",
        {"tests/test_outputs.py": "def test(): pass\n"},
        "Make /app/out.html pass the filter. You can run /app/test_outputs.py to verify.\n",
    )
    assert got == ["warning"]


@pytest.mark.parametrize(
    "dockerfile,files",
    [
        ("FROM debian:bookworm\nCOPY tests/sim.c /app\n", {"tests/sim.c": "int main(){}\n"}),
        ("FROM debian:bookworm\nCOPY tests/words.txt /app/words.txt\n", {"tests/words.txt": "a\nb\n"}),
        ("FROM debian:bookworm\nCOPY tests/programs /app/programs\n", {"tests/programs/01.scm": "(+ 1 2)\n"}),
    ],
)
def test_task_inputs_kept_under_tests_are_info(tmp_path, dockerfile, files):
    assert severities(tmp_path, dockerfile, files) == ["info"]
