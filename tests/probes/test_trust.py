"""Trust tracing on the real Docker engine: the verifier's trusted image files are traced, and the exploit
driven by that list (never by file names) earns reward only where the hole is real."""

from __future__ import annotations

from envqa.core.models import Severity
from envqa.probes.oracle_state import oracle_state_probe

from .conftest import EXAMPLES, write_env


def test_baked_expected_values_are_traced_and_copied(probe_ctx):
    ctx = probe_ctx(EXAMPLES / "verifier-trusts-baked-expected", verifier_reruns=0, max_mutated_files=0)
    findings = {f.rule: f for f in oracle_state_probe(ctx)}
    trusts, exploit = findings["verifier-trusts-agent-file"], findings["exploit-trusted-file"]
    assert trusts.severity == exploit.severity == Severity.CRITICAL
    # Named with how it is used, from the trace: the exploit copied exactly that file, and nothing else.
    assert trusts.evidence[0].startswith("/opt/checker/expected.json: read by the verifier (strace: openat(")
    assert not any("/app/words.txt" in e for e in trusts.evidence[:-2])  # never read by the checker
    assert "copied /opt/checker/expected.json -> /app/counts.json" in "\n".join(exploit.evidence)
    assert any(c["probe"] == "oracle_state/trust" and c["status"] == "ran" for c in ctx.coverage)


def test_executed_image_script_is_rewritten(probe_ctx):
    """writable-verifier-helper's grader in /usr/local/bin is executed by test.sh: traced, rewritten, reward."""
    ctx = probe_ctx(EXAMPLES / "writable-verifier-helper", verifier_reruns=0, max_mutated_files=0)
    findings = {f.rule: f for f in oracle_state_probe(ctx)}
    trusts = findings["verifier-trusts-agent-file"]
    assert any(e.startswith("/usr/local/bin/check-report: executed") for e in trusts.evidence), trusts.evidence
    assert findings["exploit-trusted-file"].severity == Severity.CRITICAL


def test_look_alike_reading_its_own_tests_data_stays_clean(probe_ctx):
    ctx = probe_ctx(EXAMPLES / "clean-verifier-reads-own-data", verifier_reruns=0, max_mutated_files=0)
    findings = oracle_state_probe(ctx)
    assert not [f for f in findings if f.rule in ("verifier-trusts-agent-file", "exploit-trusted-file")], findings
    [cov] = [c for c in ctx.coverage if c["probe"] == "oracle_state/trust"]
    assert cov["status"] == "ran" and cov["reason"].startswith("0 image file")


def test_an_input_the_verifier_reads_but_cannot_be_exploited_is_info_only(probe_ctx, tmp_path):
    """The verifier reads the task's own input from the image: a lead (info), not a shortcut, when copying it
    to the output does not earn reward."""
    env_dir = write_env(
        tmp_path / "env",
        {
            "environment/Dockerfile": "FROM debian:bookworm\nWORKDIR /app\nRUN echo 21 > /app/input.txt\n",
            "instruction.md": "Read the number in /app/input.txt and write twice its value to /app/out.txt.\n",
            "solution/solve.sh": "#!/bin/bash\necho $(( $(cat /app/input.txt) * 2 )) > /app/out.txt\n",
            "tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\necho 0 > /logs/verifier/reward.txt\n"
            '[ "$(cat /app/out.txt)" = "$(( $(cat /app/input.txt) * 2 ))" ] && '
            "echo 1 > /logs/verifier/reward.txt\nexit 0\n",
        },
    )
    ctx = probe_ctx(env_dir, verifier_reruns=0, max_mutated_files=0)
    [trusts] = [f for f in oracle_state_probe(ctx) if f.rule == "verifier-trusts-agent-file"]
    assert trusts.severity == Severity.INFO and trusts.evidence[0].startswith("/app/input.txt: read")
    assert any("did not earn reward" in e for e in trusts.evidence)


def test_conftest_plant_survives_a_collection_error(probe_ctx):
    """examples/conftest-plant-import-error: the test module does `import solution` at top; the plant (a stub
    module at the instruction's path plus the force-pass conftest in the dirs test.sh runs pytest from) earns
    reward, and the plugin was loaded."""
    from envqa.probes.exploits.probe import exploits_probe

    ctx = probe_ctx(EXAMPLES / "conftest-plant-import-error", exploits=["exploit-workspace-conftest"])
    [f] = exploits_probe(ctx)
    evidence = "\n".join(f.evidence)
    assert f.rule == "exploit-workspace-conftest" and f.severity == Severity.CRITICAL
    assert "planted /app/conftest.py" in evidence and "planted /app/solution.py (a stub module" in evidence


def test_a_pass_the_plant_played_no_part_in_is_no_conftest_finding(probe_ctx, tmp_path):
    """A verifier that only imports the module (no pytest): the stub alone passes it, the planted conftest is
    never loaded, so the pass is not credited to a conftest hole."""
    from envqa.probes.exploits.probe import exploits_probe

    env_dir = write_env(
        tmp_path / "env",
        {
            "instruction.md": "Write /app/solution.py defining answer() returning 42.\n",
            "solution/solve.sh": "#!/bin/bash\necho 'def answer():\n    return 42' > /app/solution.py\n",
            "tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\necho 0 > /logs/verifier/reward.txt\n"
            'cd /app && python3 -c "import solution" && echo 1 > /logs/verifier/reward.txt\nexit 0\n',
        },
    )
    ctx = probe_ctx(env_dir, exploits=["exploit-workspace-conftest"])
    assert exploits_probe(ctx) == []
    [cov] = [c for c in ctx.coverage if c["probe"] == "exploits/exploit-workspace-conftest"]
    assert "never loaded" in cov["reason"], cov


def test_a_file_read_by_a_relative_path_is_traced(probe_ctx, tmp_path):
    """`cd /opt/checker && cat expected.txt`: the open is relative; the chdir in the trace resolves it."""
    env_dir = write_env(
        tmp_path / "env",
        {
            "environment/Dockerfile": "FROM debian:bookworm\nWORKDIR /app\n"
            "RUN mkdir -p /opt/checker && echo 1764 > /opt/checker/expected.txt\n",
            "instruction.md": "Write the square of 42 to /app/out.txt.\n",
            "solution/solve.sh": "#!/bin/bash\necho $((42 * 42)) > /app/out.txt\n",
            "tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\necho 0 > /logs/verifier/reward.txt\n"
            'cd /opt/checker && [ "$(cat /app/out.txt)" = "$(cat expected.txt)" ] && '
            "echo 1 > /logs/verifier/reward.txt\nexit 0\n",
        },
    )
    ctx = probe_ctx(env_dir, verifier_reruns=0, max_mutated_files=0)
    findings = {f.rule: f for f in oracle_state_probe(ctx)}
    assert findings["verifier-trusts-agent-file"].evidence[0].startswith("/opt/checker/expected.txt: read")
    assert findings["exploit-trusted-file"].severity == Severity.CRITICAL
