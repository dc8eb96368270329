from pathlib import Path


def test_file_exists():
    assert Path("/app/fib.txt").is_file()


def test_values():
    lines = Path("/app/fib.txt").read_text().split()
    assert [int(x) for x in lines] == [0, 1, 1, 2, 3, 5, 8, 13, 21, 34]
