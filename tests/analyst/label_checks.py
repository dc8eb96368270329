"""The label contract of the report (issue 11), checked on any `qa run --json` report.

Every trial object has a `label` object with label, subtype, confidence, explanation, evidence and
verified; `unlabeled` says why in its explanation; every scripted exploit that earned reward on a flawed
example is `shortcut` with at least one strace line as evidence.
"""

from __future__ import annotations

LABELS = {"capability", "ambiguity", "brittleness", "shortcut", "legitimate", "infra", "unlabeled"}
KEYS = {"label", "subtype", "confidence", "explanation", "evidence", "verified"}


def check_trial_labels(report: dict, flawed: bool) -> None:
    for t in report["trials"]:
        label = t.get("label")
        assert isinstance(label, dict) and set(label) >= KEYS, f"trial {t['trial_id']} has no label object: {t}"
        assert label["label"] in LABELS, label
        if label["label"] == "unlabeled":
            assert label["explanation"], f"unlabeled without a reason: {t}"
        for e in label["evidence"]:
            assert set(e) >= {"step_id", "quote"} and e["quote"], label
        if flawed and t["agent"].startswith("exploit-") and t["outcome"] == "pass":
            assert label["label"] == "shortcut", f"{t['agent']} earned reward but is labelled {label}"
            assert any(
                e["quote"].startswith(("strace", "existing tool ran", "agent phase")) and "strace" in e["quote"]
                for e in label["evidence"]
            ), f"no strace evidence: {label}"
