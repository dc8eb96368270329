"""The verifier's helper: the expected total, recomputed from the input the agent was given."""

from pathlib import Path


def expected_total(numbers_path: str) -> int:
    return sum(int(line) for line in Path(numbers_path).read_text().split())
