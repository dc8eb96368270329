# The checks read the archive itself, whatever made it: its compression and the logs it holds.
import tarfile
from pathlib import Path

import pytest

ARCHIVE = Path("/app/logs.tar.gz")
LOGS = Path("/app/logs")


@pytest.fixture
def members():
    with tarfile.open(ARCHIVE, "r:gz") as archive:
        return {Path(m.name).name: archive.extractfile(m).read() for m in archive.getmembers() if m.isfile()}


def assert_holds(members, log):
    assert members.get(log.name) == log.read_bytes(), log.name


def test_archive_holds_each_log(members):
    for log in sorted(LOGS.glob("*.log")):
        assert_holds(members, log)
