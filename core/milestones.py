"""Milestone tasks: a Harbor-format task whose work comes in numbered parts, each with its own instruction,
solution and verifier, written without [[steps]].

Harbor 0.26.0 knows no milestones (its wheel never names them: `grep -ri milestone harbor/` finds nothing); the
producers that write them put a count in free-form metadata (`[metadata] number_of_milestones`) and the files
beside the usual ones. qa reads two layouts, our own reading (no schema to follow):
- `milestone_<n>.md` at the task's root, with its scripts in the task's solution/ and tests/ named after the
  milestone (`solve_<n>.sh` / `solve<n>.sh` / `solve_milestone_<n>.sh` / `milestone_<n>.sh`, likewise `test_…`);
- `steps/milestone_<n>/instruction.md` with `solution/` and `tests/` inside it (the [[steps]] folder layout
  without a [[steps]] table).
A milestone without its own script falls back to the task's solution/solve.sh and tests/test.sh, as a Harbor
step does. Each milestone is one `StepFiles`, so `qa lint` checks each as one verifier (`Environment.for_step`);
`qa run` refuses milestone tasks (`Environment.not_yet_run`): how one milestone's verdict gates the next is the
producer's harness, not a format qa can follow yet.
"""

from __future__ import annotations

import re
from pathlib import Path

from envqa.core.errors import InputError
from envqa.core.task_layout import StepFiles, discover_script

_ROOT_DOC = re.compile(r"^milestone_(\d+)\.md$", re.IGNORECASE)
_STEP_DIR = re.compile(r"^milestone_(\d+)$", re.IGNORECASE)
# a milestone's own script in the task's solution/ or tests/: {kind} is solve or test, {n} its number
_OWN_SCRIPT = ("{kind}_{n}.sh", "{kind}{n}.sh", "{kind}_milestone_{n}.sh", "milestone_{n}.sh")


def _numbered(root: Path) -> dict[int, Path]:
    """milestone number -> its instruction, from both layouts (the root file wins over the step folder)."""
    found: dict[int, Path] = {}
    steps = root / "steps"
    if steps.is_dir():
        for d in steps.iterdir():
            m = _STEP_DIR.match(d.name)
            if m and (d / "instruction.md").is_file():
                found[int(m.group(1))] = d / "instruction.md"
    for p in root.iterdir():
        m = _ROOT_DOC.match(p.name)
        if m and p.is_file():
            found[int(m.group(1))] = p
    return found


def _script(root: Path, own: Path | None, folder: str, kind: str, n: int) -> Path | None:
    """The milestone's script: its step folder's `<kind>.sh` or numbered one, else the task's numbered one,
    else the task's `<kind>.sh` (the fallback a Harbor step has)."""
    places = [own / folder] if own else []
    for directory in [*places, root / folder]:
        for pattern in _OWN_SCRIPT:
            p = directory / pattern.format(kind=kind, n=n)
            if p.is_file():
                return p
        if directory in places and (found := discover_script(directory, kind)):
            return found
    return discover_script(root / folder, kind)


def _milestone(root: Path, n: int, instruction: Path) -> StepFiles:
    own = instruction.parent if instruction.name == "instruction.md" else None  # steps/milestone_<n>/
    solve = _script(root, own, "solution", "solve", n)
    script = _script(root, own, "tests", "test", n)
    if script is None:
        raise InputError(
            str(root / "tests" / f"test_{n}.sh"),
            f"missing: milestone {n} has no test script (tests/test_{n}.sh, steps/milestone_{n}/tests/test.sh, "
            "or the task's tests/test.sh)",
        )
    return StepFiles(
        name=f"milestone_{n}",
        dir=own or root,
        instruction=instruction,
        solution=solve,
        # its own folder, or the task's tests/ when it runs the task's test.sh; a numbered script in the task's
        # tests/ alone: the other milestones' scripts there are not this verifier's
        tests=None if script.parent == root / "tests" and script.stem != "test" else script.parent,
        script=script,
    )


def find_milestones(root: Path) -> list[StepFiles]:
    """Every milestone's files, in number order; [] for a task without milestones. A milestone without any
    test script is an InputError naming the script it expected."""
    return [_milestone(root, n, doc) for n, doc in sorted(_numbered(root).items())]
