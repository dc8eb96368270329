"""Dataset runs (issue 25): task folders built from the examples, and a fake backend that plays several of them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from envqa.sandbox.fake import FakeBackend
from qa_testkit import EXAMPLES
from tests.fake_tasks import always_pass_verifier, script_probe_commands, solve_by_heredoc, wordfreq_verifier

BAD_TOML = 'version = "1.0"\n[verifier]\ntimeout_sec = "soon"\n'  # a malformed task: timeout_sec is not a number


def dataset_backend() -> FakeBackend:
    """One fake for a mixed dataset: each sandbox's tests/test.sh is played by its own example's verifier."""
    backend = FakeBackend()
    backend.on(r"bash /solution/solve\.sh")(solve_by_heredoc)

    def verifier(call):
        if call.sandbox.fs.node("/tests/test_wordfreq.py") is not None:
            return wordfreq_verifier(call)
        return always_pass_verifier(call)

    backend.on(r"bash /tests/test\.sh")(verifier)
    script_probe_commands(backend)
    return backend


def make_dataset(root: Path, names: dict[str, str], malformed: tuple[str, ...] = ()) -> Path:
    """root/<task> for each task -> example; each malformed name a folder whose task.toml does not validate."""
    root.mkdir(parents=True, exist_ok=True)
    for task, example in names.items():
        shutil.copytree(EXAMPLES / example, root / task, ignore=shutil.ignore_patterns("qa-expected.json"))
    for task in malformed:
        shutil.copytree(EXAMPLES / "clean-wordfreq", root / task)
        (root / task / "task.toml").write_text(BAD_TOML)
    return root


@pytest.fixture
def dataset_dir(tmp_path) -> Path:
    return make_dataset(
        tmp_path / "tasks",
        {"clean-wordfreq": "clean-wordfreq", "always-pass": "always-pass"},
        malformed=("broken-toml",),
    )
