"""Above the band -> a "make it harder" revision by the (scripted) reviser model -> approved -> in band.

The fixture task's tests only try odd-length inputs, so a naive median (`xs[n // 2]`) passes. Five scripted
solver models: one writes a correct median, four a naive one, each with its own mistake in the even case (four
models ending on the same wrong value would be the cross-trial sign of an instruction that admits another answer,
issue 33, which this test is not about); all five pass version 1 (pass@1 = 1.0, above 10-30%). The reviser
model, scripted through the same fake provider server (real SDK over HTTP),
answers the too_easy request with stronger hidden tests (even-length inputs). After approval the SAME
transcripts run against version 2: the naive programs really fail the new tests, the correct one passes,
1/5 = 0.2, inside the band.
"""

from __future__ import annotations

import shutil

from providers.conftest import GOOD_KEY

from .conftest import FIXTURES, qa_json

CORRECT = """#!/usr/bin/env python3
import sys
xs = sorted(int(line) for line in sys.stdin if line.strip())
n = len(xs)
m = xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2
print(int(m) if m == int(m) else m)
"""
NAIVE_HEAD = """#!/usr/bin/env python3
import sys
xs = sorted(int(line) for line in sys.stdin if line.strip())
n = len(xs)
"""
# Each right on odd lengths, each wrong on the even tests in its own way (1 2 3 4 -> 2.5, 1 3 -> 2 are wanted).
NAIVE_PROGRAMS = {
    "naive-a": NAIVE_HEAD + "print(xs[n // 2])\n",  # the upper middle value: 3 and 3
    "naive-b": NAIVE_HEAD + "print(xs[(n - 1) // 2])\n",  # the lower middle value: 2 and 1
    "naive-c": NAIVE_HEAD + "print(xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2)\n",  # 2.5, but 2.0
    "naive-d": NAIVE_HEAD + "print(xs[n // 2] if n % 2 else xs[n // 2 - 1] + xs[n // 2])\n",  # no halving: 5 and 4
}
# Version 1's tests plus the even-length cases the naive median gets wrong (the reviser's whole-file edit).
HARDER_TESTS = (
    (FIXTURES / "median-too-easy" / "tests" / "test_median.py")
    .read_text()
    .replace(
        "Too easy on purpose: only odd-length inputs, so a solution that ignores the even case passes.",
        "Odd and even lengths: the even case needs the mean of the two middle values.",
    )
    + """

def test_even_count_is_the_mean_of_the_middle_two():
    assert median("4\\n1\\n3\\n2\\n") == "2.5"


def test_even_count_with_a_whole_mean():
    assert median("1\\n3\\n") == "2"
"""
)
NAIVE_MODELS = sorted(NAIVE_PROGRAMS)


def solver(program: str) -> dict:
    write = f"cat > /app/median <<'PY'\n{program}PY\nchmod +x /app/median"
    return {
        "turns": [
            {
                "text": "Writing /app/median.",
                "tool_calls": [{"name": "bash", "arguments": {"command": write}}],
                "usage": {"input": 800, "output": 120},
            },
            {
                "tool_calls": [{"name": "bash", "arguments": {"command": "printf '3\\n1\\n2\\n' | /app/median"}}],
                "usage": {"input": 900, "output": 30},
            },
            {
                "text": "Done.",
                "tool_calls": [{"name": "finish", "arguments": {"summary": "wrote /app/median"}}],
                "usage": {"input": 1000, "output": 20},
            },
        ]
    }


def reviser() -> dict:
    answer = {
        "edits": [{"path": "tests/test_median.py", "content": HARDER_TESTS}],
        "addresses": [],
        "rationale": "every model passed: the hidden tests never tried an even-length input",
        "expected_effect": ["pass rate drops", "oracle still passes", "nop still fails"],
    }
    return {
        "turns": [
            {"tool_calls": [{"name": "submit_answer", "arguments": answer}], "usage": {"input": 3000, "output": 600}}
        ]
    }


def test_too_easy_task_gets_harder_tests_and_lands_in_band(fake_provider, qa_env, tmp_path):
    task = tmp_path / "median-too-easy"
    shutil.copytree(FIXTURES / "median-too-easy", task)
    srv = fake_provider(
        {
            "keys": [GOOD_KEY],
            "models": {
                "strong": solver(CORRECT),
                **{m: solver(NAIVE_PROGRAMS[m]) for m in NAIVE_MODELS},
                "reviser": reviser(),
            },
        }
    )
    env = dict(qa_env, ANTHROPIC_API_KEY=GOOD_KEY, ANTHROPIC_BASE_URL=srv.url)
    (tmp_path / "qa.toml").write_text(
        "[probes]\nenabled = []\n"  # the shortcut hunt is not under test; the band is
        "[validate]\noracle_runs = 1\n"
        # The gate's regrade is on (its default): for a too-easy request it must not replay the naive passes
        # that the harder tests exist to fail.
        '[reviser]\nmodel = "anthropic/reviser"\ngate_oracle_runs = 1\n'
    )
    models = [a for m in ["strong", *NAIVE_MODELS] for a in ("-m", f"anthropic/{m}")]
    waiting = qa_json(
        ["run", str(task), *models, "-n", "1", "--approval", "wait", "--run-id", "too-easy"], env, tmp_path, code=4
    )
    assert waiting["sweep"]["overall"]["pass_at_1"] == 1.0 and waiting["in_band"] is False
    pending = waiting["awaiting_approval"]
    assert pending["request"]["kind"] == "too_easy"
    assert pending["proposal"]["author"] == "model:anthropic/reviser" and "test_even_count" in pending["diff"]
    assert pending["gate"]["passed"] is True
    regrade = next(c for c in pending["gate"]["checks"] if c["name"] == "regrade")
    assert regrade["passed"] and not regrade["trial_ids"] and "too-easy" in regrade["detail"]

    report = qa_json(["approve", "too-easy"], env, tmp_path, code=0)
    assert report["verdict"] == "clean" and report["in_band"] is True
    assert report["stop_reason"] == "in_band_and_clean"
    v1, v2 = report["versions"]
    assert v2["parent"] == v1["version"] and v2["approval"]["action"] == "approve"
    assert v1["sweep"]["overall"]["pass_at_1"] == 1.0 and v1["band"]["call"] == "above"
    assert v2["sweep"]["overall"]["pass_at_1"] == 0.2 and v2["band"]["call"] == "inside"
    outcomes = {t["model"]: t["outcome"] for t in v2["trials"] if t["agent"] == "solver"}
    assert outcomes == {"anthropic/strong": "pass", **{f"anthropic/{m}": "fail" for m in NAIVE_MODELS}}
    # the same transcripts both times: every solver model was asked exactly the same three turns per version
    solver_calls = [r for r in srv.requests if r["model"] in ["strong", *NAIVE_MODELS] and r["status"] == 200]
    assert len(solver_calls) == 2 * 5 * 3
