"""The compiled-language reader of the assertion model (core/task_model/assertion_compiled.py): one tmp task per
construct in C, C++, JavaScript, TypeScript, Go, Rust and Java, its records' fields asserted. Files only, parsed with
the tree-sitter grammars of the venv."""

from __future__ import annotations

from pathlib import Path

import pytest

from envqa.core.environment import load_environment
from envqa.core.task_model import model_of
from envqa.core.task_model.assertions import Assertion, AssertionModel

pytestmark = pytest.mark.fast

COMPILED = ("c", "cpp", "javascript", "typescript", "go", "rust", "java")


def model(root: Path, test: str, **files: str) -> AssertionModel:
    """The assertion model of a task whose test.sh is `test`, with the test files `files` (path -> text)."""
    texts = {
        "task.toml": 'version = "1.0"\n',
        "instruction.md": "Write 42 to /app/out.txt.\n",
        "environment/Dockerfile": "FROM debian:bookworm\n",
        "solution/solve.sh": "#!/bin/bash\necho 42 > /app/out.txt\n",
        "tests/test.sh": "#!/bin/bash\n" + test,
        **files,
    }
    for rel, text in texts.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return model_of(load_environment(root, lint=True)).assertions


def records(root: Path, test: str, **files: str) -> list[Assertion]:
    return model(root, test, **files).in_language(*COMPILED)


def one(root: Path, test: str, **files: str) -> Assertion:
    got = records(root, test, **files)
    assert len(got) == 1, got
    return got[0]


def hops(a: Assertion) -> list[tuple[str, int, str]]:
    return [(h.kind, h.line, h.name) for h in a.hops]


C_STRCMP = """#include <stdio.h>
#include <string.h>
#include <assert.h>
int main(void) {
    FILE *f = fopen("/app/out.txt", "r");
    char buf[64];
    fgets(buf, sizeof buf, f);
    assert(strcmp(buf, "42\\n") == 0);
    return 0;
}
"""


def test_c_assert_strcmp_over_a_buffer_read_with_fopen(tmp_path):
    a = one(tmp_path, "gcc -o /tmp/t /tests/test.c && /tmp/t\n", **{"tests/test.c": C_STRCMP})
    assert (a.language, a.file, a.line, a.op, a.negated) == ("c", "tests/test.c", 8, "==", False)
    assert (a.observes.kind, a.observes.path) == ("output_file", "/app/out.txt")
    assert (a.expected.kind, a.expected.value) == ("literal", "42\n")
    assert hops(a) == [("assert", 8, ""), ("constant", 5, "f"), ("build", 2, "gcc")]


GTEST = """#include <gtest/gtest.h>
#include <fstream>
#include <sstream>
static std::string slurp(const std::string &p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}
TEST(Out, IsFortyTwo) {
    EXPECT_EQ(slurp("/app/out.txt"), "42");
}
"""


def test_gtest_expect_eq_through_a_helper_that_reads_the_file(tmp_path):
    a = one(tmp_path, "g++ -o /tmp/t /tests/test_out.cpp -lgtest && /tmp/t\n", **{"tests/test_out.cpp": GTEST})
    assert (a.language, a.line, a.op) == ("cpp", 11, "==")
    assert (a.observes.kind, a.observes.path) == ("output_file", "/app/out.txt")
    assert (a.expected.kind, a.expected.value) == ("literal", "42")
    assert hops(a) == [("assert", 11, ""), ("helper", 4, "slurp"), ("constant", 5, "in"), ("build", 2, "g++")]


CATCH2 = """#include "catch.hpp"
#include <fstream>
#include <string>
TEST_CASE("result file") {
    std::ifstream in("/app/result.txt");
    std::string s;
    std::getline(in, s);
    REQUIRE(s == "13");
}
"""


def test_catch2_require_over_a_line_read_from_a_stream(tmp_path):
    """`s` has no value of its own: getline fills it from the ifstream `in` (the bare TEST_CASE block is in no
    function, and the stream is a C++ vexing-parse declaration, not a call)."""
    a = one(
        tmp_path,
        "g++ -o /tmp/t /tests/test_calc.cpp && /tmp/t\n",
        **{"tests/test_calc.cpp": CATCH2, "tests/catch.hpp": "#define REQUIRE(x) assert(x)\n"},
    )
    assert (a.file, a.line, a.op) == ("tests/test_calc.cpp", 8, "==")
    assert (a.observes.kind, a.observes.path) == ("output_file", "/app/result.txt")
    assert (a.expected.kind, a.expected.value) == ("literal", "13")
    assert hops(a) == [("assert", 8, ""), ("constant", 5, "in"), ("build", 2, "g++")]


IF_RETURN = """#include <stdio.h>
int main(void) {
    FILE *f = fopen("/app/out.txt", "r");
    int x = 0;
    fscanf(f, "%d", &x);
    int y = 42;
    if (x != y) return 1;
    return 0;
}
"""


def test_if_not_equal_return_1_is_an_equality_check_of_the_value_read(tmp_path):
    """x starts at 0 but fscanf writes over it through &x: the check is against what the file holds, not 0."""
    a = one(tmp_path, "gcc /tests/check.c -o /tmp/c && /tmp/c\n", **{"tests/check.c": IF_RETURN})
    assert (a.line, a.op, a.negated) == (7, "==", False)
    assert (a.observes.kind, a.observes.path) == ("output_file", "/app/out.txt")
    assert (a.expected.kind, a.expected.value) == ("literal", "42")
    assert hops(a) == [("assert", 7, ""), ("constant", 3, "f"), ("constant", 6, "y"), ("build", 2, "gcc")]


JS_STRICT = """const assert = require("assert");
const fs = require("fs");
const got = fs.readFileSync("/app/out.txt", "utf8").trim();
assert.strictEqual(got, "42");
"""


def test_js_assert_strict_equal_over_read_file_sync(tmp_path):
    a = one(tmp_path, "node /tests/test.js\n", **{"tests/test.js": JS_STRICT})
    assert (a.language, a.line, a.op) == ("javascript", 4, "==")
    assert (a.observes.kind, a.observes.path) == ("output_file", "/app/out.txt")
    assert (a.expected.kind, a.expected.value) == ("literal", "42")
    assert hops(a) == [("assert", 4, ""), ("constant", 3, "got"), ("build", 2, "node")]


JEST = """const fs = require("fs");
test("mentions hello", () => {
  const text = fs.readFileSync("/app/greeting.txt", "utf8");
  expect(text).toContain("hello");
});
"""


def test_jest_expect_to_contain_is_a_substring_pattern(tmp_path):
    a = one(tmp_path, "npx jest /tests/out.test.js\n", **{"tests/out.test.js": JEST})
    assert (a.line, a.op, a.test) == (4, "in", "tests/out.test.js::mentions hello")
    assert (a.observes.kind, a.observes.path) == ("output_file", "/app/greeting.txt")
    assert (a.expected.kind, a.expected.pattern_kind, a.expected.value) == ("pattern", "substring", "hello")
    assert hops(a) == [("assert", 4, ""), ("constant", 3, "text"), ("build", 2, "npx")]


JS_EXEC = """const { execSync } = require("child_process");
const assert = require("assert");
const out = execSync("/app/calc --add 6 7").toString().trim();
assert.strictEqual(out, "13");
"""


def test_js_exec_sync_of_the_agent_s_program_is_its_stdout_with_argv(tmp_path):
    a = one(tmp_path, "node /tests/run.js\n", **{"tests/run.js": JS_EXEC})
    assert (a.observes.kind, a.observes.command, a.observes.flags) == (
        "stdout",
        ["/app/calc", "--add", "6", "7"],
        ["--add"],
    )
    assert (a.expected.kind, a.expected.value) == ("literal", "13")
    assert hops(a) == [("assert", 4, ""), ("constant", 3, "out"), ("build", 2, "node")]


TS = """import { readFileSync } from "fs";
import assert from "assert";
const got: string = readFileSync("/app/out.txt", "utf8").trim();
assert.strictEqual(got, "42");
"""


def test_typescript_typed_declaration_over_read_file_sync(tmp_path):
    a = one(tmp_path, "npx tsx /tests/check.ts\n", **{"tests/check.ts": TS})
    assert (a.language, a.line, a.op) == ("typescript", 4, "==")
    assert (a.observes.kind, a.observes.path, a.expected.value) == ("output_file", "/app/out.txt", "42")
    assert hops(a) == [("assert", 4, ""), ("constant", 3, "got"), ("build", 2, "npx")]


GO_IF = """package main

import (
	"os"
	"testing"
)

func TestOut(t *testing.T) {
	data, err := os.ReadFile("/app/out.txt")
	if err != nil {
		t.Fatal(err)
	}
	got := string(data)
	want := "42"
	if got != want {
		t.Errorf("got %q want %q", got, want)
	}
}
"""


def test_go_if_got_not_want_errorf_over_os_read_file(tmp_path):
    got = records(tmp_path, "cd /tests && go test ./...\n", **{"tests/out_test.go": GO_IF})
    a = next(r for r in got if r.line == 15)
    assert (a.language, a.op, a.negated, a.test) == ("go", "==", False, "tests/out_test.go::TestOut")
    assert (a.observes.kind, a.observes.path) == ("output_file", "/app/out.txt")
    assert (a.expected.kind, a.expected.value) == ("literal", "42")
    assert hops(a) == [
        ("assert", 15, ""),
        ("constant", 13, "got"),
        ("constant", 9, "data"),
        ("constant", 14, "want"),
        ("build", 2, "go"),
    ]


GO_TESTIFY = """package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOut(t *testing.T) {
	data, _ := os.ReadFile("/app/out.txt")
	assert.Equal(t, "42", string(data))
}
"""


def test_go_testify_assert_equal_takes_expected_first(tmp_path):
    a = one(tmp_path, "cd /tests && go test ./...\n", **{"tests/out_test.go": GO_TESTIFY})
    assert (a.line, a.op) == (12, "==")
    assert (a.observes.kind, a.observes.path) == ("output_file", "/app/out.txt")
    assert (a.expected.kind, a.expected.value) == ("literal", "42")
    assert hops(a) == [("assert", 12, ""), ("constant", 11, "data"), ("build", 2, "go")]


GO_EXEC = """package main

import (
	"os/exec"
	"strings"
	"testing"
)

func TestCLI(t *testing.T) {
	out, _ := exec.Command("/app/calc", "--add", "6", "7").Output()
	if strings.TrimSpace(string(out)) != "13" {
		t.Fatalf("bad: %s", out)
	}
}
"""


def test_go_exec_command_output_is_stdout_with_argv_and_flags(tmp_path):
    a = one(tmp_path, "cd /tests && go test ./...\n", **{"tests/cli_test.go": GO_EXEC})
    assert (a.line, a.op, a.negated) == (11, "==", False)
    assert (a.observes.kind, a.observes.command, a.observes.flags) == (
        "stdout",
        ["/app/calc", "--add", "6", "7"],
        ["--add"],
    )
    assert (a.expected.kind, a.expected.value) == ("literal", "13")
    assert hops(a) == [("assert", 11, ""), ("constant", 10, "out"), ("build", 2, "go")]


RUST_FS = """use std::fs;

#[test]
fn out_is_42() {
    let got = fs::read_to_string("/app/out.txt").unwrap();
    assert_eq!(got.trim(), "42");
}
"""


def test_rust_assert_eq_over_read_to_string(tmp_path):
    a = one(tmp_path, "cd /tests && cargo test\n", **{"tests/tests/out.rs": RUST_FS})
    assert (a.language, a.line, a.op, a.test) == ("rust", 6, "==", "tests/tests/out.rs::out_is_42")
    assert (a.observes.kind, a.observes.path) == ("output_file", "/app/out.txt")
    assert (a.expected.kind, a.expected.value) == ("literal", "42")
    assert hops(a) == [("assert", 6, ""), ("constant", 5, "got"), ("build", 2, "cargo")]


RUST_CMD = """use std::process::Command;

#[test]
fn adds() {
    let out = Command::new("/app/calc").arg("--add").arg("6").arg("7").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "13");
}
"""


def test_rust_command_new_with_chained_args_is_stdout_with_argv(tmp_path):
    a = one(tmp_path, "cd /tests && cargo test\n", **{"tests/tests/cli.rs": RUST_CMD})
    assert (a.observes.kind, a.observes.command, a.observes.flags) == (
        "stdout",
        ["/app/calc", "--add", "6", "7"],
        ["--add"],
    )
    assert (a.expected.kind, a.expected.value) == ("literal", "13")
    assert hops(a) == [("assert", 6, ""), ("constant", 5, "out"), ("build", 2, "cargo")]


JAVA = """import java.nio.file.Files;
import java.nio.file.Path;
import static org.junit.jupiter.api.Assertions.assertEquals;

public class OutTest {
    @Test
    void outIs42() throws Exception {
        String got = Files.readString(Path.of("/app/out.txt")).trim();
        assertEquals("42", got);
    }
}
"""


def test_java_assert_equals_over_files_read_string(tmp_path):
    a = one(tmp_path, "cd /tests && javac OutTest.java && java OutTest\n", **{"tests/OutTest.java": JAVA})
    assert (a.language, a.line, a.op) == ("java", 9, "==")
    assert (a.observes.kind, a.observes.path) == ("output_file", "/app/out.txt")
    assert (a.expected.kind, a.expected.value) == ("literal", "42")
    assert hops(a) == [("assert", 9, ""), ("constant", 8, "got"), ("build", 2, "javac")]


@pytest.mark.parametrize(
    ("test", "rel", "text", "build"),
    [
        ("apt-get install -y g++\ng++ -o /tmp/t /tests/t.cpp\n/tmp/t\n", "tests/t.cpp", GTEST, (3, "g++")),
        ("export GOFLAGS=-mod=mod\ncd /tests\ngo test -v ./...\n", "tests/out_test.go", GO_TESTIFY, (4, "go")),
        ("cd /tests\ncargo test --release\n", "tests/tests/out.rs", RUST_FS, (3, "cargo")),
        ("npm install\nnode /tests/test.js\n", "tests/test.js", JS_STRICT, (3, "node")),
    ],
    ids=["g++", "go-test", "cargo-test", "node-names-the-file"],
)
def test_build_hop_is_the_test_sh_line_that_compiles_or_runs_the_file(tmp_path, test, rel, text, build):
    a = one(tmp_path, test, **{rel: text})
    last = a.hops[-1]
    assert (last.kind, last.file, (last.line, last.name)) == ("build", "tests/test.sh", build)


def test_unreadable_files_go_to_unread_with_a_reason_and_never_raise(tmp_path):
    m = model(
        tmp_path,
        "gcc /tests/t.c\nruby /tests/t.rb\n",
        **{
            "tests/t.c": "int main( {{{ ]]] assert(\n",
            "tests/t.rb": "raise unless File.read('/app/out.txt') == '42'\n",
        },
    )
    assert m.in_language(*COMPILED) == []
    assert sorted(m.unread) == ["tests/t.c: does not parse as c (line 1)", "tests/t.rb: no grammar for .rb files"]


CLEAN = """#include <stdio.h>
int main(void) {
    FILE *f = fopen("/app/out.txt", "r");
    char buf[64];
    if (fgets(buf, sizeof buf, f)) printf("%s", buf);
    return 0;
}
"""


def test_a_program_that_reads_but_asserts_nothing_gives_no_record(tmp_path):
    m = model(tmp_path, "gcc /tests/t.c -o /tmp/a && /tmp/a\n", **{"tests/t.c": CLEAN})
    assert (m.in_language(*COMPILED), m.unread) == ([], [])


def test_go_error_guard_is_not_a_record_of_the_check(tmp_path):
    """`if err != nil { t.Fatal(err) }` guards the read; the check is `got != want` alone."""
    got = records(tmp_path, "cd /tests && go test ./...\n", **{"tests/out_test.go": GO_IF})
    assert [(r.line, r.op) for r in got] == [(15, "==")]


C_GUARDED = """#include <stdio.h>
#include <string.h>
int main(void) {
    FILE *f = fopen("/app/out.txt", "r");
    if (f == NULL) return 1;
    char buf[64];
    if (!fgets(buf, sizeof buf, f)) return 1;
    if (strcmp(buf, "42\\n") != 0) return 1;
    return 0;
}
"""


def test_c_null_guard_is_not_a_record_but_a_call_tested_for_truth_is(tmp_path):
    got = records(tmp_path, "gcc /tests/t.c -o /tmp/t && /tmp/t\n", **{"tests/t.c": C_GUARDED})
    assert [(r.line, r.op) for r in got] == [(7, "truthy"), (8, "==")]
    assert (got[1].observes.kind, got[1].observes.path, got[1].expected.value) == (
        "output_file",
        "/app/out.txt",
        "42\n",
    )


C_STRSTR = """#include <stdio.h>
#include <string.h>
static const char *CMD = "/app/calc --add 6 7";
static char out[256];
static const char *run(const char *cmd) {
    FILE *p = popen(cmd, "r");
    size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
    out[n] = '\\0';
    return out;
}
int main(void) {
    const char *got = run(CMD);
    if (strstr(got, "13") == NULL) return 1;
    if (strstr(got, "error") != NULL) return 1;
    return 0;
}
"""


def test_c_strstr_against_null_is_a_substring_check_of_a_popen_helper_s_stdout(tmp_path):
    """`strstr(…) == NULL` fails when the text is absent (a substring wanted), `!= NULL` when it is present (one
    forbidden); the helper returns a pointer (`char *run(…)`) and its parameter is bound to the constant."""
    got = records(tmp_path, "gcc /tests/t.c -o /tmp/t && /tmp/t\n", **{"tests/t.c": C_STRSTR})
    assert [(r.line, r.op, r.negated, r.expected.pattern_kind, r.expected.value) for r in got] == [
        (13, "in", False, "substring", "13"),
        (14, "in", True, "substring", "error"),
    ]
    a = got[0]
    assert (a.observes.kind, a.observes.command, a.observes.flags) == (
        "stdout",
        ["/app/calc", "--add", "6", "7"],
        ["--add"],
    )
    assert hops(a) == [("assert", 13, ""), ("constant", 12, "got"), ("helper", 5, "run"), ("build", 2, "gcc")]


C_FORMATTED = """#include <stdio.h>
#include <string.h>
static int count(const char *path) {
    FILE *f = fopen(path, "r");
    int n = 0, c;
    while (f && (c = fgetc(f)) != EOF) n += c == '\\n';
    return n;
}
int main(void) {
    char want[32], got[32];
    snprintf(want, sizeof want, "lines: %d", count("/app/in.txt"));
    FILE *p = popen("/app/wc /app/in.txt", "r");
    if (!fgets(got, sizeof got, p)) return 1;
    got[strcspn(got, "\\n")] = 0;
    if (strcmp(got, want) != 0) return 1;
    return 0;
}
"""


def test_c_buffer_written_by_snprintf_is_computed_from_what_its_arguments_read(tmp_path):
    got = records(tmp_path, "gcc /tests/t.c -o /tmp/t && /tmp/t\n", **{"tests/t.c": C_FORMATTED})
    a = next(r for r in got if r.line == 15)
    assert (a.op, a.negated, a.observes.kind, a.observes.command) == ("==", False, "stdout", ["/app/wc", "/app/in.txt"])
    assert (a.expected.kind, a.expected.inputs) == ("computed", ["/app/in.txt"])


C_HELPER = """#include <stdio.h>
#include <string.h>
static char out[256];
static const char *run(const char *cmd) {
    FILE *p = popen(cmd, "r");
    size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
    out[n] = '\\0';
    return out;
}
static void reports(const char *got, const char *count) {
    if (strstr(got, count) == NULL) exit(1);
}
static int holds(const char *got) {
    if (strstr(got, "error") != NULL) exit(1);
    return 1;
}
int main(void) {
    reports(run("/app/calc --add 1 2"), "3");
    reports(run("/app/calc --add 2 2"), "4");
    if (!holds(run("/app/calc --sub 2 2"))) return 1;
    return 0;
}
"""


def test_c_check_in_a_helper_is_read_once_per_call_with_its_parameters_bound(tmp_path):
    """As the Python reader reads an assert in a helper: the record is at the helper's line, once per call, its
    operands the call's arguments; a truth test of a call of such a helper (`if (!holds(…))`) is not a second
    record."""
    got = records(tmp_path, "gcc /tests/t.c -o /tmp/t && /tmp/t\n", **{"tests/t.c": C_HELPER})
    assert [(r.line, r.op, r.negated, r.expected.value, r.observes.command) for r in got] == [
        (11, "in", False, "3", ["/app/calc", "--add", "1", "2"]),
        (11, "in", False, "4", ["/app/calc", "--add", "2", "2"]),
        (14, "in", True, "error", ["/app/calc", "--sub", "2", "2"]),
    ]
    assert hops(got[1])[:3] == [("assert", 11, ""), ("call", 19, "reports"), ("helper", 10, "reports")]
    assert got[0].test == "tests/t.c::main(void)"
