"""Issue 41's calibrated cross-trial rules on trials built by hand, each flaw beside a look-alike that stays quiet:
a near-ceiling task, one agent on three models, a hard task's many wrong values, a score landing on a hidden bound
beside scores spread under it, a file the verifier wants beside failures that miss files at random; an installed
agent's transcript read into steps, and a copied multi-line expected value cited step by step."""

from __future__ import annotations

import pytest

from envqa.core.imported import ImportedTrial, TestOutcome
from envqa.core.models import Outcome
from envqa.core.readers.transcripts import transcript_steps
from envqa.probes.cross_trial.probe import TaskTrials, cross_trial_findings
from envqa.probes.cross_trial.triage import look_first, sibling_shortcuts, worst_first

pytestmark = pytest.mark.fast

TESTS = ("test_exists", "test_result")
AGENTS = [("claude-code", "opus"), ("codex", "gpt-5"), ("terminus-2", "gemini"), ("openhands", "sonnet")]


def trial(name, agent, model, outcome="fail", message="", verifier="", steps=None, tests=TESTS) -> ImportedTrial:
    failed = {tests[-1]: message} if outcome == "fail" else {}
    return ImportedTrial(
        source_format="terminal-bench",
        path=f"/runs/{name}",
        trial_name=name,
        task_name="report",
        agent=agent,
        model=model,
        outcome=Outcome(outcome),
        tests=[
            TestOutcome(name=t, status="failed" if t in failed else "passed", message=failed.get(t, "")) for t in tests
        ],
        verifier_output=verifier,
        steps=steps or [],
    )


def found(*trials: ImportedTrial, instruction: str = "") -> dict[str, str]:
    task = TaskTrials(task="report", trials={t.trial_name: t for t in trials}, instruction=instruction)
    return {f.rule: f.severity.value for f in cross_trial_findings(task)}


def _failing(n: int, message, agents=AGENTS, **kw) -> list[ImportedTrial]:
    return [trial(f"f{i}", *agents[i % len(agents)], message=message(i), **kw) for i in range(n)]


def test_fails_alone_without_converging_values_needs_nearly_every_failure():
    hard = _failing(10, lambda i: f"assert {i} == 99")
    assert found(*hard) == {"test-fails-alone": "warning"}
    spread = hard[:7] + [
        trial(f"s{i}", *AGENTS[i], message="x", tests=("test_exists", "test_other", "test_result")) for i in range(3)
    ]
    for t in spread[7:]:  # these fail two tests: the core test is now 7 of 10 failures, a hard task's share
        t.tests[1] = TestOutcome(name="test_other", status="failed", message="assert 1 == 2")
    assert "test-fails-alone" not in found(*spread)


def test_no_fails_alone_on_a_near_ceiling_task():
    failures = _failing(3, lambda i: f"assert {i} == 99")
    passes = [trial(f"p{i}", *AGENTS[i % 4], outcome="pass") for i in range(17)]
    assert found(*failures, *passes[:2]) == {"test-fails-alone": "warning"}
    assert found(*failures, *passes) == {}  # 17 of 20 pass


def test_one_agent_on_three_models_is_one_reading():
    same_agent = [("orchestrator", m) for m in ("opus", "sonnet", "qwen")]
    assert found(*_failing(6, lambda i: f"assert {i} == 99", agents=same_agent)) == {}


def test_converging_needs_a_majority_value_not_a_pair_among_many():
    wrong_spec = _failing(6, lambda i: "assert 'a,b' == 'a;b'")
    assert found(*wrong_spec)["converging-wrong-answers"] == "error"
    hard = _failing(8, lambda i: "assert 'x' == 'y'" if i < 3 else f"assert 'v{i}' == 'y'")
    assert "converging-wrong-answers" not in found(*hard)


def test_a_score_landing_exactly_on_a_hidden_bound_is_a_warning():
    at_bound = _failing(9, lambda i: "AssertionError: too few rows\nassert 6 > 6" if i < 4 else "assert 0 > 6")
    assert found(*at_bound)["converging-wrong-answers"] == "warning"
    below = _failing(9, lambda i: f"AssertionError: too few rows\nassert {i % 5} > 6")
    assert "converging-wrong-answers" not in found(*below)


def test_a_file_every_failure_misses_is_flagged_and_random_misses_are_not():
    missing = "python3: can't open file '/app/main.py.c': [Errno 2] No such file or directory"
    wants = _failing(9, lambda i: "assert '' == '42'", verifier=missing)
    assert found(*wants)["verifier-wants-missing-file"] == "warning"
    assert found(*wants, instruction="Write /app/main.c")["verifier-wants-missing-file"] == "error"
    assert found(*wants, instruction="Write the program to /app/main.py.c")["verifier-wants-missing-file"] == "warning"
    scattered = _failing(9, lambda i: "assert '' == '42'")
    for i, t in enumerate(scattered):
        t.verifier_output = f"cat: /app/out{i}.txt: No such file or directory"
    assert "verifier-wants-missing-file" not in found(*scattered)


TRANSCRIPT = """System prompt: answer in ```bash blocks```.
```bash
echo example-not-a-step
```
Task: map the maze into /app/map.txt

agent (step 1, $0.01):
THOUGHT: look around
```bash
cat tests/test_outputs.py
```
User:
<returncode>0</returncode>
<output>
def test_map(): assert read() == truth()
</output>

agent (step 2, $0.02):
THOUGHT: run them
```bash
python3 -m pytest tests/test_outputs.py
```
<output>
E       AssertionError: map differs
E         Expected:
E         #####
E         # #S#
E         #E# #
E         #####
E
E         Got:
E         #
</output>

agent (step 3, $0.03):
THOUGHT: Now I can see it:
```
#####
# #S#
```
```bash
cat <<'EOF' > /app/map.txt
#####
# #S#
#E# #
#####
EOF
```
"""


def test_an_installed_agents_transcript_becomes_its_own_numbered_steps():
    steps = transcript_steps(TRANSCRIPT)
    assert [s.step_id for s in steps] == [0, 1, 2, 3]
    assert steps[0].source == "user" and "map the maze" in steps[0].message
    assert steps[1].commands == ["cat tests/test_outputs.py"] and "def test_map" in steps[1].observation
    assert steps[3].commands[0].startswith("cat <<'EOF' > /app/map.txt")
    assert transcript_steps("no step headers here\n```bash\nls\n```\n") == []


def test_a_copied_expected_block_is_a_shortcut_cited_step_by_step_and_its_look_alike_is_quiet():
    copied = trial("p1", *AGENTS[0], outcome="pass", steps=transcript_steps(TRANSCRIPT))
    others = [trial(f"f{i}", *AGENTS[i + 1], message="assert 1 == 2") for i in range(2)]
    task = TaskTrials(task="report", trials={t.trial_name: t for t in [copied, *others]})
    finding = next(f for f in cross_trial_findings(task) if f.rule == "copied-verifier-values")
    assert finding.severity.value == "critical" and finding.trial_ids == ["p1"]
    story = finding.evidence[0]
    assert story.startswith("trial p1 step 1: read the tests") and "step 2: ran the tests itself" in story
    assert "step 3: wrote the 4-line block" in story and "verifier output of step 2" in story
    # Look-alike: it ran the tests and wrote a map of its own (not the expected block): quiet.
    own = TRANSCRIPT.replace("#E# #\n#####\nEOF", "# # #\n#####\nEOF")
    honest = trial("p1", *AGENTS[0], outcome="pass", steps=transcript_steps(own))
    task = TaskTrials(task="report", trials={t.trial_name: t for t in [honest, *others]})
    assert "copied-verifier-values" not in {f.rule for f in cross_trial_findings(task)}


def _triage(task: str, tests: list[str], findings: list[dict]) -> dict:
    return {
        "task": task,
        "tests": [{"test": t} for t in tests],
        "findings": findings,
        "verdict": "findings" if findings else "clean",
    }


def test_a_proven_leak_warns_its_siblings_and_not_a_stranger():
    proven = {
        "rule": "copied-verifier-values",
        "severity": "critical",
        "message": "copied",
        "evidence": ["trial p1 step 3"],
    }
    source = _triage("maze-explorer-5x5", ["test_map_contents"], [proven])
    sibling = _triage("maze-explorer-algorithm.hard", ["test_map_contents[3]"], [])
    same_name_other_tests = _triage("maze-explorer-speed", ["test_speed"], [])
    stranger = _triage("fix-git", ["test_map_contents"], [])
    triages = [stranger, same_name_other_tests, sibling, source]
    sibling_shortcuts(triages)
    assert [f["severity"] for f in sibling["findings"]] == ["warning"] and sibling["verdict"] == "findings"
    assert same_name_other_tests["findings"] == [] and stranger["findings"] == []
    ordered = worst_first(triages)
    assert [t["task"] for t in ordered][:2] == ["maze-explorer-5x5", "maze-explorer-algorithm.hard"]
    first = look_first(ordered)
    assert [(x["task"], x["severity"], x["trials"]) for x in first] == [
        ("maze-explorer-5x5", "critical", ["p1"]),
        ("maze-explorer-algorithm.hard", "warning", ["p1"]),
    ]
    assert first[1]["evidence"].startswith("as its sibling maze-explorer-5x5:")
