"""Terminal-Bench 1's task.yaml keys, and what qa says of a key outside them.

Follows terminal-bench 0.2.18 `terminal_bench/handlers/trial_handler.py` `Task` (a pydantic model with the
default `extra="ignore"`): a key it does not know is dropped without a word, so a task an adapter wrote with
its own keys (`author`, `env_name`, `language`) runs there. qa loads it too and names the keys in a warning
(`Environment.warnings`, the info finding `task-config-unknown-key` in `qa lint`), as it does for task.toml
(core/task_config_keys.py): ignoring silently would hide a typo (`max_agent_timeout` leaves the default).
"""

from __future__ import annotations

import difflib

from envqa.core.task_config_keys import ConfigWarning

# trial_handler.py Task's fields, in its order
TB1_TASK_FIELDS = (
    "instruction",
    "author_name",
    "author_email",
    "difficulty",
    "category",
    "tags",
    "parser_name",
    "max_agent_timeout_sec",
    "max_test_timeout_sec",
    "run_tests_in_same_shell",
    "disable_asciinema",
    "estimated_duration_sec",
    "expert_time_estimate_min",
    "junior_time_estimate_min",
)
# Older task.yaml spellings qa still reads: `descriptions` (a list of {key, description}; the first is the
# instruction when `instruction` is absent) and `test_scripts` (the scripts copied beside run-tests.sh).
TB1_LEGACY_KEYS = ("descriptions", "test_scripts")
TB1_KEYS = frozenset(TB1_TASK_FIELDS + TB1_LEGACY_KEYS)


def tb1_unknown_keys(raw: dict, file: str = "task.yaml") -> list[ConfigWarning]:
    """Every top-level task.yaml key outside the schema, sorted, with the near spelling of a known one."""
    known = sorted(TB1_KEYS)
    out = []
    for key in sorted(str(k) for k in raw if str(k) not in TB1_KEYS):
        near = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
        out.append(
            ConfigWarning(
                file=file, key=key, table="top level", suggestion=near[0] if near else None, ignored_by="Terminal-Bench"
            )
        )
    return out
