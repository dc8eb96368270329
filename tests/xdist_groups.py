"""The one adapter on pytest-xdist's internals: a scheduler that keeps each group of tests (`xdist_group_of`,
below) on one worker.

Why not `--dist loadgroup` with `xdist_group` marks: with pytest 9 the marks are silently ignored. xdist's worker
appends `@group` to `item._nodeid`, and pytest 9's `Node.nodeid` no longer reads that field, so a module's tests
spread over the workers (pytest-dev/pytest-xdist#1386, open; measured here: a module's two tests ran on gw0 and
gw1, and two workers ran tests/loop/test_approval_cli.py's fixed-run-id approval runs at once, each removing the
other's containers). The group is a function of the node id, so the controller can compute it itself:
LoadScopeScheduling's scope hook, `_split_scope` (private: this file is the only place that relies on it, and
tests/test_xdist_groups.py checks it), returns the group instead of parsing a suffix.
"""

from __future__ import annotations

from collections.abc import Callable

from xdist.scheduler import LoadScopeScheduling

# Under pytest-xdist (`make test` runs two workers) every test of a module goes to one worker, so a module-scoped
# fixture runs once; a directory whose modules share session-scoped runs is one group; a module of independent
# tests that share only cross-worker-safe state (the example reports, tests/qa_testkit.py) is spread test by test.
XDIST_SHARED_DIRS = ("tests/report/",)  # sweep_run, loop_run, waiting_run: session-scoped `qa run`s its modules read
XDIST_FREE_MODULES = ("tests/probes/test_detection.py", "tests/metamorphic/test_metamorphic.py")


def xdist_group_of(nodeid: str) -> str | None:
    module = nodeid.split("::", 1)[0]
    if module in XDIST_FREE_MODULES:
        return None
    return next((d for d in XDIST_SHARED_DIRS if module.startswith(d)), module)


class GroupScheduling(LoadScopeScheduling):
    """Whole groups to a worker (a module, or a directory that shares session runs); an ungrouped test is a
    group of its own, so it may go to any worker."""

    def __init__(self, config, log=None, group_of: Callable[[str], str | None] = lambda nodeid: None) -> None:
        super().__init__(config, log)
        self.group_of = group_of

    def _split_scope(self, nodeid: str) -> str:
        return self.group_of(nodeid) or nodeid
