"""One setup's failure text against the instruction (issue 53): a hidden bound, a file named otherwise, a literal
the instruction words otherwise; each with a look-alike the instruction settles, which stays quiet."""

from envqa.core.imported import ImportedTrial, TestOutcome
from envqa.core.models import Outcome
from envqa.probes.cross_trial.probe import TaskTrials, cross_trial_findings


def _trial(i: int, agent: str, tests: list[TestOutcome], output: str = "", outcome=Outcome.FAIL) -> ImportedTrial:
    return ImportedTrial(
        source_format="terminal-bench",
        path=f"/r/{i}",
        trial_name=f"t.{i}",
        task_name="t",
        agent=agent,
        model=f"m{i}",
        outcome=outcome,
        tests=tests,
        verifier_output=output,
    )


def _rules(instruction: str, trials: list[ImportedTrial]) -> set[str]:
    task = TaskTrials(task="t", trials={t.trial_name: t for t in trials}, instruction=instruction)
    return {f.rule for f in cross_trial_findings(task) if f.severity != "info"}


BOUND = [_trial(1, "a", [TestOutcome(name="test_rows", status="failed", message="too few rows\nassert 5 > 6")])]


def test_a_bound_the_instruction_never_states_is_named_from_one_failure():
    assert "failures-on-unstated-bound" in _rules("Recover as many rows as possible into out.json.", BOUND)


def test_a_bound_the_instruction_states_in_words_or_units_stays_quiet():
    assert "failures-on-unstated-bound" not in _rules("Recover more than six rows into out.json.", BOUND)
    size = [_trial(1, "a", [TestOutcome(name="test_size", status="failed", message="assert 450223090 < 157286400")])]
    assert "failures-on-unstated-bound" not in _rules("The model must be less than 150MB.", size)


def test_an_http_status_is_not_a_bound():
    status = [
        _trial(
            1,
            "a",
            [
                TestOutcome(
                    name="test_neg", status="failed", message="assert 400 <= 200\n+  where 200 = <Response>.status_code"
                )
            ],
        )
    ]
    assert "failures-on-unstated-bound" not in _rules("Serve /fib on port 3000.", status)


MISSING = "python3: can't open file '/app/main.py.c': [Errno 2] No such file or directory"


def test_a_file_the_instruction_names_otherwise_is_named_from_one_setup():
    trials = [_trial(1, "a", [TestOutcome(name="test_run", status="failed", message="assert '' == '55'")], MISSING)]
    assert "verifier-wants-missing-file" in _rules("Write one file /app/main.c.py that runs in both.", trials)


def test_a_missing_file_the_instruction_never_names_at_all_needs_the_counts():
    out = "python3: can't open file '/data/out/processed.txt': [Errno 2] No such file or directory"
    trials = [_trial(1, "a", [TestOutcome(name="test_run", status="failed", message="assert '' == '55'")], out)]
    assert "verifier-wants-missing-file" not in _rules("Fix run_pipeline.sh so the pipeline runs.", trials)


def _worded(i: int, agent: str) -> ImportedTrial:
    return _trial(
        i,
        agent,
        [
            TestOutcome(name="test_key", status="passed"),
            TestOutcome(
                name="test_file",
                status="failed",
                message="AssertionError: no fingerprint\nassert 'sha256' in 'subject: cn = x\\nsha-256: ab:cd'",
            ),
        ],
    )


def test_a_literal_the_instruction_words_otherwise_is_named_from_one_setup():
    trials = [_worded(1, "a"), _worded(2, "a")]
    assert "test-fails-alone" in _rules("Write the certificate's SHA-256 fingerprint to check.txt.", trials)


def test_the_same_failures_under_an_instruction_spelling_it_as_the_test_stay_quiet():
    trials = [_worded(1, "a"), _worded(2, "a")]
    assert "test-fails-alone" not in _rules("Write the certificate's sha256 fingerprint to check.txt.", trials)
