"""Grading helpers for the ranking task: read the agent's ranking and recompute the right one from the scores."""

import csv
from pathlib import Path


def read_ranking(path: str) -> list[str]:
    return [line.strip() for line in Path(path).read_text().splitlines() if line.strip()]


def expected_ranking(scores_path: str) -> list[str]:
    with open(scores_path, newline="") as fh:
        rows = [(name, int(score)) for name, score in csv.reader(fh)]
    return [name for name, _ in sorted(rows, key=lambda row: (-row[1], row[0]))]
