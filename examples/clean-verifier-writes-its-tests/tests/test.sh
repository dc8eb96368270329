#!/bin/bash
# Look-alike of verifier-broken-files: the test file it runs is written here, before pytest runs; the tests are
# collected from the folder (a unittest class, a parametrised test), and tests/data/not_python.py is an input,
# not Python, which no command runs.
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
source /tests/unit/names.sh
cat > /tests/unit/test_generated.py <<PY
import subprocess


def test_generated_name():
    out = subprocess.run(["bash", "/app/greet.sh", "$FIRST_NAME"], capture_output=True, text=True)
    assert out.stdout == "hello, $FIRST_NAME\n"
PY
python3 -m pytest -q /tests/unit -p no:cacheprovider && echo 1 > /logs/verifier/reward.txt
exit 0
