from pathlib import Path


def test_summary_file_exists():
    summary_path = Path("/app/output/summary.txt")
    assert summary_path.exists(), f"File {summary_path} does not exist"


def test_summary_content():
    content = Path("/app/output/summary.txt").read_text().strip()
    assert content.splitlines() == ["api.log 3", "cron.log 5", "worker.log 1"]
