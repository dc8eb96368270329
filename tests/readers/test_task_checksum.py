"""Harbor's task checksum across versions (issue 41): 0.6.x hashes every file of the task folder; 0.26 leaves out
`.harborignore` files and what they ignore in tests/ and solution/. A byte-identical task matches under either;
an edited one under neither. The reference below is dirhash's protocol written out by hand for this small tree."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from envqa.core.import_match import match_trials
from envqa.core.imported import ImportedTrial
from envqa.core.models import Outcome
from envqa.core.task_checksum import ALGORITHM_ALL_FILES, harbor_task_checksum, harbor_task_checksums

pytestmark = pytest.mark.fast


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _entry(name: str, kind: str, digest: str) -> str:
    return "\000".join(sorted([f"{kind}:{digest}", f"name:{name}"]))


def _dir(entries: list[str]) -> str:
    return _sha("\000\000".join(sorted(entries)).encode())


def _task(root: Path) -> Path:
    task = root / "port-config"
    (task / "tests").mkdir(parents=True)
    (task / "instruction.md").write_bytes(b"Set the port.\n")
    (task / "tests" / "test.sh").write_bytes(b"pytest\n")
    (task / "tests" / "scratch.log").write_bytes(b"noise\n")
    (task / "tests" / ".harborignore").write_bytes(b"*.log\n")
    return task


def test_each_harbor_versions_algorithm(tmp_path):
    task = _task(tmp_path)
    tests_all = _dir(
        [
            _entry("test.sh", "data", _sha(b"pytest\n")),
            _entry("scratch.log", "data", _sha(b"noise\n")),
            _entry(".harborignore", "data", _sha(b"*.log\n")),
        ]
    )
    v06 = _dir([_entry("instruction.md", "data", _sha(b"Set the port.\n")), _entry("tests", "dirhash", tests_all)])
    tests_filtered = _dir([_entry("test.sh", "data", _sha(b"pytest\n"))])
    v026 = _dir(
        [_entry("instruction.md", "data", _sha(b"Set the port.\n")), _entry("tests", "dirhash", tests_filtered)]
    )
    assert harbor_task_checksum(task, ALGORITHM_ALL_FILES) == v06
    assert harbor_task_checksum(task) == v026
    assert harbor_task_checksums(task) == {v06, v026}


def _trial(name: str, checksum: str) -> ImportedTrial:
    return ImportedTrial(
        source_format="harbor",
        path=f"/jobs/j/{name}",
        trial_name=name,
        task_name="port-config",
        task_checksum=checksum,
        agent="claude-code",
        outcome=Outcome.PASS,
    )


def test_a_harbor_06_trial_of_the_same_files_is_current_and_an_edited_task_is_stale(tmp_path):
    task = _task(tmp_path)
    old_harbor = harbor_task_checksum(task, ALGORITHM_ALL_FILES)
    edited = _task(tmp_path / "edited")
    (edited / "tests" / "test.sh").write_bytes(b"pytest -x\n")
    trials = [_trial("same", old_harbor), _trial("other", harbor_task_checksum(edited, ALGORITHM_ALL_FILES))]
    match = match_trials(trials, {"port-config": task}).tasks["port-config"]
    assert [t.trial_name for t in match.current] == ["same"]
    assert [t.trial_name for t in match.stale] == ["other"]
