"""Spelling noise on sound tasks (issue 42): an ordinary prose word the tests compare in another form is not a
spelling the instruction commits to. Each shape next to the flaw it must not hide (the instruction's own literal
or acronym, compared in another spelling). Files only."""

from __future__ import annotations

import pytest

from envqa.core.environment import load_environment
from envqa.probes.static.instruction_rules import instruction_findings

from .conftest import write_env

pytestmark = pytest.mark.fast

SPELLING = "instruction-spelling-differs-from-tests"


def spelling(tmp_path, instruction: str, test_py: str) -> list[str]:
    task = write_env(
        tmp_path / "t",
        {
            "instruction.md": instruction,
            "tests/test_x.py": test_py,
            "tests/test.sh": "#!/bin/bash\npython3 -m pytest /tests/test_x.py\n",
            "solution/solve.sh": "#!/bin/bash\ntrue\n",
        },
    )
    return [f.message for f in instruction_findings(load_environment(task, lint=True)) if f.rule == SPELLING]


@pytest.mark.parametrize(
    "instruction,test_py",
    [
        # PEM header words in capitals against the prose "private key", "certificate"
        (
            "Generate an RSA private key at /app/key.pem and a self-signed certificate at /app/cert.pem.\n",
            'from pathlib import Path\ndef test():\n    assert "-----BEGIN PRIVATE KEY-----" in Path("/app/key.pem").read_text()\n'
            '    assert "BEGIN CERTIFICATE" in Path("/app/cert.pem").read_text()\n',
        ),
        # a hyphenated quantity (an adjective) against a tool's "2048 bit"
        (
            "Generate a 2048-bit RSA key at /app/key.pem.\n",
            'import subprocess\ndef test():\n    out = subprocess.run(["openssl", "rsa", "-in", "/app/key.pem", "-text"],'
            ' capture_output=True, text=True).stdout\n    assert "2048 bit" in out\n',
        ),
        # a capitalised word opening a sentence, with its full stop
        (
            "Write a proof of the lemma to /app/proof.txt.\n",
            'from pathlib import Path\ndef test():\n    assert Path("/app/proof.txt").read_text().startswith("Proof.")\n',
        ),
        # a command-line option against the bare word
        (
            "Start QEMU in snapshot mode and write its pid to /app/pid.\n",
            'from pathlib import Path\ndef test():\n    cmd = Path("/proc/1/cmdline").read_text()\n'
            '    assert "snapshot=on" in cmd or "-snapshot" in cmd\n    assert Path("/app/pid").exists()\n',
        ),
    ],
)
def test_ordinary_words_are_not_spelling_differences(tmp_path, instruction, test_py):
    assert spelling(tmp_path, instruction, test_py) == []


@pytest.mark.parametrize(
    "instruction,test_py",
    [
        # the instruction's acronym in prose, compared in another spelling (tests-expect-other-spelling's shape)
        (
            "Record its SHA-256 fingerprint in /app/f.txt.\n",
            'from pathlib import Path\ndef test():\n    assert Path("/app/f.txt").read_text() == "sha256:" + "ab"\n',
        ),
        # the instruction's code span, compared in other capitals
        (
            "Print `Status: ok` to /app/out.txt.\n",
            'from pathlib import Path\ndef test():\n    assert Path("/app/out.txt").read_text().strip() == "STATUS: OK"\n',
        ),
    ],
)
def test_the_instructions_own_literals_still_count(tmp_path, instruction, test_py):
    assert spelling(tmp_path, instruction, test_py) != []
