import re
import sys


def evaluate(expr):
    tokens = re.findall(r"\d+|[-+*/()]", expr)
    value = int(tokens[0])
    for op, num in zip(tokens[1::2], tokens[2::2]):  # left to right: the bug
        value = {"+": value + int(num), "-": value - int(num), "*": value * int(num)}[op]
    return value


def self_test():
    ok = evaluate("2+3*4") == 14 and evaluate("10-4-3") == 3
    print("PASSED" if ok else "FAILED")


if __name__ == "__main__":
    self_test() if sys.argv[1] == "--self-test" else print(evaluate(sys.argv[1]))
