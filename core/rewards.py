"""Reading a verifier's verdict. A missing or unreadable reward is a verifier error, never reward 0.

Harbor verifiers write a number to /logs/verifier/reward.txt or a flat JSON object to reward.json
(`{"reward": 1}` or several named scores). Terminal-Bench 1 verifiers print pytest's `-rA` summary.
"""

from __future__ import annotations

import json
import math
import re


class VerifierError(Exception):
    """The verifier ran but said nothing usable (no reward, garbage, or no test results)."""


def _number(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise VerifierError(f"{where}: expected a number, got {value!r}")
    if not math.isfinite(value):
        raise VerifierError(f"{where}: reward is not finite ({value!r})")
    return float(value)


def parse_reward_txt(text: str) -> float:
    s = text.strip()
    if not s:
        raise VerifierError("reward.txt is empty")
    try:
        value = float(s)
    except ValueError:
        raise VerifierError(f"reward.txt is not a number: {s[:80]!r}") from None
    return _number(value, "reward.txt")


def parse_reward_json(text: str) -> tuple[float, dict[str, float]]:
    """Return (reward, all named rewards). `reward` key wins; otherwise the mean of the values."""
    if not text.strip():
        raise VerifierError("reward.json is empty")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise VerifierError(f"reward.json is not JSON: {e}") from None
    except RecursionError:
        raise VerifierError("reward.json is nested deeper than the JSON parser allows") from None
    if not isinstance(data, dict) or not data:
        raise VerifierError("reward.json must be a non-empty flat JSON object of name -> number")
    rewards = {str(k): _number(v, f"reward.json[{k!r}]") for k, v in data.items()}
    if "reward" in rewards:
        return rewards["reward"], rewards
    return sum(rewards.values()) / len(rewards), rewards


def parse_reward_files(txt: str | None, js: str | None) -> tuple[float, dict[str, float]]:
    if txt is not None:
        value = parse_reward_txt(txt)
        return value, {"reward": value}
    if js is not None:
        return parse_reward_json(js)
    raise VerifierError("the verifier wrote no reward (/logs/verifier/reward.txt or reward.json)")


SUMMARY_LINE = re.compile(r"^(PASSED|FAILED|ERROR|XPASS|XFAIL|SKIPPED)\s+(\S+)", re.MULTILINE)
FINAL_COUNTS = re.compile(r"=+ (.*?(?:passed|failed|error|errors|no tests ran).*?) in [\d.]+s")


def parse_pytest(output: str) -> tuple[float, dict[str, float]]:
    """Terminal-Bench 1: reward 1 iff at least one test ran and none failed or errored."""
    per_test = {
        name: (1.0 if status in ("PASSED", "XFAIL") else 0.0)
        for status, name in SUMMARY_LINE.findall(output)
        if status != "SKIPPED"
    }
    if per_test:
        return (1.0 if all(v == 1.0 for v in per_test.values()) else 0.0), per_test
    m = FINAL_COUNTS.search(output)
    if not m:
        raise VerifierError("no pytest results found in the verifier output")
    counts = {word: int(n) for n, word in re.findall(r"(\d+) (\w+)", m.group(1))}
    passed = counts.get("passed", 0)
    bad = counts.get("failed", 0) + counts.get("error", 0) + counts.get("errors", 0)
    if passed + bad == 0:
        raise VerifierError("pytest ran no tests")
    return (1.0 if bad == 0 else 0.0), {"passed": float(passed), "failed": float(bad)}
