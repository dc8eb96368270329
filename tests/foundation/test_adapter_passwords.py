"""The published adapter passwords are data with a source each, and the in-image opener tells them apart."""

from __future__ import annotations

import base64
import hashlib
import hmac
import shutil
import subprocess

import pytest

from envqa.core.adapter_passwords import DATA, keys_payload, known_passwords

pytestmark = pytest.mark.fast  # the fast tier (make test-fast): no Docker, Redis or Postgres

FIND_ARCHIVES = DATA.parent.parent / "probes" / "scripts" / "image_scan.py"


def test_every_published_password_names_the_repository_and_path_it_comes_from():
    published = [p for p in known_passwords() if p.source]
    assert {p.adapter for p in published} >= {"TheAgentCompany", "BrowseComp-Plus"}
    for p in published:
        assert "/" in p.source and p.origin.startswith(f"the public default of {p.adapter} (")
    assert keys_payload("my-task")[-1] == {"value": "my-task", "origin": "the task's name"}
    values = [k["value"] for k in keys_payload("password")]
    assert len(values) == len(set(values)) and "" not in values


@pytest.mark.skipif(shutil.which("openssl") is None, reason="the Fernet body is checked with openssl")
def test_the_opener_accepts_the_right_key_only(tmp_path):
    """Run image_scan.py's opener on the host: a Fernet token with the TheAgentCompany key opens with it,
    not with another published password, and a BrowseComp-style XOR file opens with the canary."""
    ns: dict = {}
    src = FIND_ARCHIVES.read_text()
    exec(compile(src, str(FIND_ARCHIVES), "exec"), ns)  # the functions: the scan itself runs only as __main__
    by_adapter = {p.adapter: p.value for p in known_passwords() if p.source}
    tac, canary = by_adapter["TheAgentCompany"], by_adapter["BrowseComp-Plus"]
    key = tac.encode().ljust(32, b"\0")
    iv = b"\1" * 16
    ct = subprocess.run(
        ["openssl", "enc", "-aes-128-cbc", "-K", key[16:].hex(), "-iv", iv.hex()],
        input=b"echo answer\n",
        capture_output=True,
        check=True,
    ).stdout
    body = b"\x80" + b"\0" * 8 + iv + ct
    token = base64.urlsafe_b64encode(body + hmac.new(key[:16], body, hashlib.sha256).digest())
    (tmp_path / "solution.enc").write_bytes(token)
    assert ns["opens"](str(tmp_path / "solution.enc"), "fernet-encrypted", tac)
    assert not ns["opens"](str(tmp_path / "solution.enc"), "fernet-encrypted", canary)
    pad = hashlib.sha256(canary.encode()).digest()
    xored = base64.b64encode(bytes(b ^ pad[i % 32] for i, b in enumerate(b"the answer is 42\n")))
    (tmp_path / "answers.enc").write_bytes(xored)
    assert ns["opens"](str(tmp_path / "answers.enc"), "encrypted (by its name)", canary)
    assert not ns["opens"](str(tmp_path / "answers.enc"), "encrypted (by its name)", tac)
