import subprocess

import pytest

PROGRAMS = [
    ("1 + 2 * 3", "7"),
    ("(1 + 2) * 3", "9"),
    ("-7 / 2", "-3"),
    ("-7 % 3", "-1"),
    ("100 / 7 + 100 % 7", "16"),
]


@pytest.mark.parametrize("expr,expected", PROGRAMS)
def test_compiles_and_runs(tmp_path, expr, expected):
    src = tmp_path / "prog.c"
    src.write_text('#include <stdio.h>\nint main(void) {\n    printf("%d\\n", ' + expr + ');\n    return 0;\n}\n')
    exe = tmp_path / "prog"
    build = subprocess.run(["/app/minicc", str(src), "-o", str(exe)], capture_output=True, text=True, timeout=30)
    assert build.returncode == 0, build.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=10)
    assert run.stdout.strip() == expected
