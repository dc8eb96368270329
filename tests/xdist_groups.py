"""The one adapter on pytest-xdist's internals: a scheduler that keeps each group of tests (tests/conftest.py
`xdist_group_of`) on one worker.

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


class GroupScheduling(LoadScopeScheduling):
    """Whole groups to a worker (a module, or a directory that shares session runs); an ungrouped test is a
    group of its own, so it may go to any worker."""

    def __init__(self, config, log=None, group_of: Callable[[str], str | None] = lambda nodeid: None) -> None:
        super().__init__(config, log)
        self.group_of = group_of

    def _split_scope(self, nodeid: str) -> str:
        return self.group_of(nodeid) or nodeid
