"""Starter code for the agent: the same file name as the verifier's helper, not its bytes (a look-alike)."""


def expected_total(numbers_path: str) -> int:
    raise NotImplementedError("read the numbers and add them up")
