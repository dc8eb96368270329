"""The cross-trial probe: one verdict over all of a task's trials (steps, text, triage, report)."""
