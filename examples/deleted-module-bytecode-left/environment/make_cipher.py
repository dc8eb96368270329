"""Builds the puzzle: a fixed sentence under a Caesar shift. Deleted after the build (its bytecode is not)."""

PLAIN = "the quick brown fox jumps over the lazy dog at noon"
SHIFT = 11


def shifted(text: str, by: int) -> str:
    return "".join(chr((ord(c) - 97 + by) % 26 + 97) if c.isalpha() else c for c in text)


def write_puzzle(path: str) -> None:
    with open(path, "w") as fh:
        fh.write(shifted(PLAIN, SHIFT) + "\n")
