"""Template: copy to /app/solution.py and fill in."""


def encode(text: str) -> str:
    raise NotImplementedError


def decode(text: str) -> str:
    raise NotImplementedError
