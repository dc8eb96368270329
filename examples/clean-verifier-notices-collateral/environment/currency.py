"""The shop's money formatting, shared by its scripts."""


def fmt(amount: float) -> str:
    return f"{amount:.2f}"
