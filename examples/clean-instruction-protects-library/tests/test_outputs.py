import hashlib
import subprocess
from pathlib import Path

LIBRARY_SHA256 = "4289d0c619dd574e3e050f88b8253ae1fcde55938ca8249e8a79808c47f14a51"


def test_report_total():
    out = subprocess.run(["python3", "/app/report.py", "/app/data/sales.csv"], capture_output=True, text=True,
                         timeout=30)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "total 17.40 EUR"


def test_shared_library_untouched():
    digest = hashlib.sha256(Path("/app/lib/currency.py").read_bytes()).hexdigest()
    assert digest == LIBRARY_SHA256
