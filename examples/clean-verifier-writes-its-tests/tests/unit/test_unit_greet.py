import subprocess
import unittest


def greet(name):
    return subprocess.run(["bash", "/app/greet.sh", name], capture_output=True, text=True).stdout


class GreetChecks(unittest.TestCase):
    def test_two_words(self):
        self.assertEqual(greet("Grace Hopper"), "hello, Grace Hopper\n")
