import subprocess


def greet(name):
    return subprocess.run(["bash", "/app/greet.sh", name], capture_output=True, text=True).stdout


def test_greets_by_name()
    assert greet("Ada") == "hello, Ada\n"


def test_greets_another_name():
    assert greet("Grace Hopper") == "hello, Grace Hopper\n"
