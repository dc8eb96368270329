"""The variation probe's pure logic (probes/variation/kinds.py): which variations an output gets, what an
instruction forbids, which build commands it shows, and which lines of a verifier's output name the failure.

Instructions here are shaped like published ones: Terminal-Bench 2's polyglot-c-py and polyglot-rust-c (a
single file, the instruction's own compile command writing beside it), Harbor's template-style `/app` tasks,
and this repository's examples.
"""

from __future__ import annotations

import json

import pytest

from envqa.core.config import ProbeSettings, QAConfig
from envqa.core.models import Finding, Label, Severity
from envqa.core.registry import RULE_INFO
from envqa.graphs.decide import revision_request
from envqa.graphs.gate_rules import probe_for
from envqa.probes.variation.kinds import (
    build_commands,
    failing_lines,
    forbidden,
    json_variant,
    line_sentence,
    newline_variant,
)

pytestmark = pytest.mark.fast

RULE = "verifier-rejects-allowed-variation"
POLYGLOT_C_PY = """Write me a single file in /app/polyglot/main.py.c which is a polyglot, that is, I can run

`python3 main.py.c N`
or
`gcc main.py.c -o /app/polyglot/cmain && /app/polyglot/cmain N`.

Both of these should print to stdout the kth Fibonacci number, f(0) = 0, f(1) = 1, etc.
"""
POLYGLOT_RUST_C = """Write me a single file in /app/polyglot/main.rs which is a polyglot, that is, I can run

`rustc /app/polyglot/main.rs && /app/polyglot/main N`
or
`g++ -x c++ /app/polyglot/main.rs -o /app/polyglot/cmain && /app/polyglot/cmain N`.

I'm using rustc 1.75.0 and g++ 13.2.0.
"""


# --- newline ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data,varied",
    [
        (b"42\n", b"42"),  # one line: the trailing newline removed
        (b"42", b"42\n"),  # none: one added
        (b"a\nb", b"a\nb\n"),  # several lines without one: added
    ],
)
def test_a_trailing_newline_is_toggled(data, varied):
    out, what = newline_variant(data)
    assert out == varied and "trailing newline" in what


@pytest.mark.parametrize(
    "data,why",
    [
        (b"a\nb\n", "unterminated"),  # several lines ending with one: wc -l would count one fewer
        (b"a\r\nb\r\n", "carriage returns"),  # line endings are left alone
        (b"x\r", "carriage returns"),
        (b"", "empty"),
        (b"\n\n", "empty"),
        (b"a\n\n", "blank line"),
        (b"\x7fELF\0\0\x01", "not text"),
        (b"\xff\xfe bad utf-8", "not text"),
    ],
)
def test_no_newline_variant(data, why):
    out = newline_variant(data)
    assert isinstance(out, str) and why in out, out


def test_an_output_the_instruction_calls_a_line_keeps_its_newline():
    greeting = "Write `/app/greeting.txt` containing the line `hello, world`."  # clean-pip-or-true's instruction
    line = line_sentence("/app/greeting.txt", greeting)
    assert line == greeting
    assert newline_variant(b"hello, world\n", line).startswith("the instruction calls it a line")
    assert newline_variant(b"hello, world", line) == (b"hello, world\n", "trailing newline added")
    digest = "Compute the SHA-256 digest of `/app/message.txt` and write it to `/app/digest.txt` as 64 lowercase\nhex."
    assert line_sentence("/app/digest.txt", digest) == ""  # no line named: removing the newline is allowed
    fib = "Write the first 10 Fibonacci numbers (starting 0, 1) to /app/fib.txt, one per line."  # tb1-clean
    assert line_sentence("/app/fib.txt", fib) == fib and line_sentence("/app/other.txt", fib) == ""


# --- JSON ---------------------------------------------------------------------------------------------------


def test_json_keys_are_reversed_in_the_files_own_style():
    compact = b'{"count":5,"min":3,"nested":{"a":1,"b":2}}'
    out, what = json_variant(compact)
    assert out == b'{"nested":{"b":2,"a":1},"min":3,"count":5}' and "whitespace" not in what
    assert json.loads(out) == json.loads(compact)

    dumped = json.dumps({"count": 5, "min": 3}).encode() + b"\n"  # json.dump's default separators, a newline
    out, what = json_variant(dumped)
    assert out == b'{"min": 3, "count": 5}\n' and "whitespace" not in what

    pretty = json.dumps({"a": [1, {"x": 1, "y": 2}], "b": "\u00e9t\u00e9"}, indent=2, ensure_ascii=False).encode()
    out, what = json_variant(pretty)
    assert out == json.dumps({"b": "\u00e9t\u00e9", "a": [1, {"y": 2, "x": 1}]}, indent=2, ensure_ascii=False).encode()
    assert "whitespace" not in what


def test_json_lines_are_reordered_line_by_line():
    out, what = json_variant(b'{"id": 1, "ok": true}\n{"id": 2, "ok": false}\n')
    assert out == b'{"ok": true, "id": 1}\n{"ok": false, "id": 2}\n' and "JSON Lines" in what


@pytest.mark.parametrize(
    "data", [b'{"only": 1}', b"[1, 2, 3]", b"42\n", b"{not json", b"hello", b"", b'{"a": 1}\n{"b": 2}\n']
)
def test_no_json_variant_without_an_object_of_two_keys(data):
    assert isinstance(json_variant(data), str)


# --- what the instruction forbids ------------------------------------------------------------------------------


def test_a_directory_named_in_a_forbidding_sentence_is_the_scope():
    f = forbidden("Write the program in /app/src/main.go. When you are done, leave only main.go in /app/src.")
    assert f.extra_in("/app/src") and f.extra_in("/app/src/pkg") and not f.extra_in("/app")
    assert not f.newline and not f.key_order


@pytest.mark.parametrize(
    "text",
    [
        "Do not leave build artifacts behind.",
        "There must be no other files when you finish.",
        "The output directory must contain only the generated reports.",
    ],
)
def test_a_forbidding_sentence_without_a_path_forbids_everywhere(text):
    assert forbidden(text).extra_in("/anything")


@pytest.mark.parametrize(
    "text",
    [
        POLYGLOT_C_PY,
        POLYGLOT_RUST_C,  # "a single file" is the program's form
        "Write /app/total.txt containing only the integer and nothing else.",  # a file's content, not a directory's
        "Write `/app/stats.txt` with three lines: the minimum,\nthe maximum and the sum of those integers.",
        "Write `/app/report.json`: a JSON object mapping each region to the sum of its amounts. Only the JSON "
        "object, no other text.",
    ],
)
def test_instructions_that_forbid_nothing(text):
    f = forbidden(text)
    assert not f.extra_dirs and not f.newline and not f.key_order, f


@pytest.mark.parametrize(
    "text,kind",
    [
        ("Write the digest to /app/digest.txt, terminated with a newline.", "newline"),
        ("End the file with a single trailing newline.", "newline"),
        ("The output must match the expected file byte-for-byte.", "newline"),
        ("Print the hash with no newline.", "newline"),
        ("Write /app/out.json with the keys in this order: id, name, size.", "key_order"),
        ("Keep the original key order.", "key_order"),
        ("Serialize it with sort_keys so the output is stable.", "key_order"),
    ],
)
def test_sentences_that_fix_newlines_or_key_order(text, kind):
    assert getattr(forbidden(text), kind) == text


# --- build commands ------------------------------------------------------------------------------------------


def test_the_polyglot_tasks_build_commands():
    [gcc] = build_commands(POLYGLOT_C_PY, ["/app/polyglot/main.py.c"])
    assert gcc.command == "gcc main.py.c -o /app/polyglot/cmain" and gcc.cwd == "/app/polyglot"  # the output's dir
    rust = build_commands(POLYGLOT_RUST_C, ["/app/polyglot/main.rs"])
    assert [c.command for c in rust] == [
        "rustc /app/polyglot/main.rs",
        "g++ -x c++ /app/polyglot/main.rs -o /app/polyglot/cmain",
    ]


@pytest.mark.parametrize(
    "text,commands",
    [
        (
            "The tests build it with `gcc -O2 -o collatz /app/collatz.c`, so it must be valid C99.",
            [("gcc -O2 -o collatz /app/collatz.c", None)],
        ),
        (
            "We build with:\n\n```bash\ncd /app/server && go build -o server .\n$ make -C /app/lib\n```\n",
            [("go build -o server .", "/app/server"), ("make -C /app/lib", None)],
        ),
        ("Check it compiles: `python3 -m py_compile /app/tool.py`.", [("python3 -m py_compile /app/tool.py", None)]),
        ("Run it as `python3 /app/tool.py input.txt` or `go run ./cmd` or `cargo test`.", []),  # runs, not builds
        ("Compile with `gcc -o <name> <file>.c` or `make ${TARGET}` or `gcc ... -o x`.", []),  # placeholders
        ("Use `CC=clang make` to build.", [("CC=clang make", None)]),
    ],
)
def test_build_commands_in_instructions(text, commands):
    assert [(c.command, c.cwd) for c in build_commands(text, [])] == commands


# --- the failing line --------------------------------------------------------------------------------------------


def test_the_failing_test_line_from_pytest_and_from_a_shell_verifier():
    pytest_out = """F                                                                        [100%]
=================================== FAILURES ===================================
    def test_digest():
>       assert Path("/app/digest.txt").read_text() == EXPECTED + "\\n"
E       AssertionError: assert 'ab' == 'ab\\n'
E         - ab
/tests/test_digest.py:9: AssertionError
=========================== short test summary info ============================
FAILED ../tests/test_digest.py::test_digest - AssertionError: assert 'ab' == 'ab\\n'
1 failed in 0.05s
"""
    lines = failing_lines(pytest_out)
    assert lines[0].startswith("FAILED ../tests/test_digest.py::test_digest")
    assert "/tests/test_digest.py:9: AssertionError" in lines
    assert "E       AssertionError: assert 'ab' == 'ab\\n'" in lines
    assert failing_lines("checking\nmismatch in /app/out.txt\n\n") == ["checking", "mismatch in /app/out.txt"]


# --- the registry, config and loop see the rule -------------------------------------------------------------------


def test_the_rule_is_registered_rechecked_by_its_probe_and_open_for_decide():
    rule = RULE_INFO[RULE]
    assert (rule.label, rule.subtype, rule.probe) == ("brittleness", "rigid-tests", "oracle_state")
    assert probe_for(RULE) == "oracle_state"  # the gate re-runs the oracle end state probe on a revision
    finding = Finding(rule=RULE, label=Label.BRITTLENESS, severity=Severity.ERROR, message="m", evidence=["e"])
    request = revision_request([finding], {"measured": False, "in_band": None}, {})
    assert request is not None and request.kind == "fix_findings" and RULE in request.detail
    field = ProbeSettings.model_fields["max_variants"]
    assert field.description and QAConfig().probes.max_variants == field.default > 0
