"""Checks for greet.sh (named check_*, which pytest does not collect: nothing runs)."""

import subprocess


def greet(name):
    return subprocess.run(["bash", "/app/greet.sh", name], capture_output=True, text=True).stdout


def check_greets_by_name():
    assert greet("Ada") == "hello, Ada\n"


def check_greets_another_name():
    assert greet("Grace Hopper") == "hello, Grace Hopper\n"
