from pathlib import Path

from totals import expected_total


def test_total_matches_the_tests_truth():
    expected = Path("/tests/expected_total.txt").read_text().strip()
    assert Path("/app/total.txt").read_text().strip() == expected


def test_total_is_the_sum_of_the_input():
    assert int(Path("/app/total.txt").read_text()) == expected_total("/app/numbers.txt")


def test_total_matches_the_sum_recomputed_at_verify_time():
    expected = Path("/app/expected_sum.txt").read_text().strip()
    assert Path("/app/total.txt").read_text().strip() == expected
