from pathlib import Path


def test_total_matches_the_tests_truth():
    expected = Path("/tests/expected_total.txt").read_text().strip()
    assert Path("/app/total.txt").read_text().strip() == expected
