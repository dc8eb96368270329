"""Must-show (issue 24): trust tracing and the conftest exploit and fixer on Harbor's own template task
(tests/fixtures/harbor-template-pytest: harbor 0.26.0's `cli/template-task` with a test.sh we wrote that
copies the test file into /app and runs pytest on the copy, from the working directory).

Measured: the verifier trusts no image file (pytest and the stdlib are system files, the test file is
uploaded, greet.py is the agent's output); the workspace conftest plant earns reward (pytest's rootdir is
/app, where the agent planted conftest.py); the conftest fixer pins pytest to /tests, after which the
plant earns nothing and the reference solution still passes.
"""

from __future__ import annotations

import shutil

from envqa.agents.fixers import mechanical_fix
from envqa.core.environment import load_environment
from envqa.core.models import Outcome
from envqa.core.parsers.shell import parse_script
from envqa.probes.exploits.probe import exploits_probe
from envqa.probes.oracle_state import oracle_state_probe

from .conftest import REPO

TEMPLATE = REPO / "tests" / "fixtures" / "harbor-template-pytest" / "task"


def test_trust_tracing_and_the_conftest_fixer_on_harbors_template(probe_ctx, tmp_path):
    task = tmp_path / "task"
    shutil.copytree(TEMPLATE, task)
    ctx = probe_ctx(task, verifier_reruns=0, max_mutated_files=0, exploits=["exploit-workspace-conftest"])
    assert not [f for f in oracle_state_probe(ctx) if "trust" in f.rule]
    [cov] = [c for c in ctx.coverage if c["probe"] == "oracle_state/trust"]
    assert cov["status"] == "ran" and cov["reason"].startswith("0 image file"), cov

    [plant] = exploits_probe(ctx)
    assert plant.rule == "exploit-workspace-conftest", plant
    assert "planted /app/conftest.py" in "\n".join(plant.evidence)

    fix = mechanical_fix(task, [plant], workdir=tmp_path)
    assert "exploit-workspace-conftest" in fix.addressed, fix
    fixed = load_environment(fix.fixed_dir)
    commands = parse_script((fix.fixed_dir / "tests" / "test.sh").read_text())
    assert not [c for c in commands if c.name == "cp" and c.reachable], commands  # the copy into /app is gone
    after = probe_ctx(fixed.root, run_id="probe-test-fixed", exploits=["exploit-workspace-conftest"])
    assert exploits_probe(after) == []
    assert after.trial("oracle", purpose="hunt-oracle-runs").result.outcome == Outcome.PASS
