from pathlib import Path


def test_top_three_words():
    expected = Path("/app/expected_top.txt").read_text().split()
    assert Path("/app/top.txt").read_text().split() == expected
