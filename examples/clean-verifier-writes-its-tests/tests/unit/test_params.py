import subprocess

import pytest


def pytest_generate_tests(metafunc):
    if "extra" in metafunc.fixturenames:
        metafunc.parametrize("extra", ["Lin", "Noor"])


@pytest.mark.parametrize("name", ["Ada", "Alan"])
def test_names(name):
    out = subprocess.run(["bash", "/app/greet.sh", name], capture_output=True, text=True)
    assert out.stdout == f"hello, {name}\n"


def test_generated(extra):
    out = subprocess.run(["bash", "/app/greet.sh", extra], capture_output=True, text=True)
    assert out.stdout == f"hello, {extra}\n"
