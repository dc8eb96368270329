"""Metamorphic tests of `qa lint` (issue 51, part 5): every example x every rewrite of its verifier that applies.

    python benchmarks/metamorphic.py [--examples DIR] [--only NAME[,NAME...]] [--rewrite NAME[,NAME...]]

Each rewrite (benchmarks/metamorphic_rewrites/) keeps what the verifier checks and changes how it is written: its
asserts in a helper, a literal hoisted to a module constant, a fixture, `parametrize`, a one-case loop, `pathlib`
for `open`, a unittest class, in test.sh `[ ]`/`test` and `&&`/`if`, and in a C test file `if (…) return 1;` as
`assert(!(…))`, its literals hoisted to constants and the `if` moved into a helper that main calls
(benchmarks/metamorphic_rewrites/c_rewrites.py). For each case the original and the
rewrite are copied to a temporary folder outside the repository and linted in process (as `qa lint --json` lints,
ungrouped), and their findings at warning and above are compared as (rule, severity, file, line): a finding on a
rewritten file through the rewrite's line map (the statement's new line, or where it now shows: the helper's
call, the hoisted constant, the loop's header), a finding on any other file as it is. The baseline is the
original linted in the same run. A rewrite with nothing to rewrite in an example is "-" (not a case).

Prints the matrix (rich table, "ok" / "FAIL" / "-"), each failure with its diff, and a last JSON line
{"cases": N, "failures": M, "by_rewrite": {rewrite: {"cases", "failures"}}, "failing": ["example:rewrite"]};
exit 1 on any failure. tests/metamorphic/test_metamorphic.py runs the same cases in the fast tier.
"""

from __future__ import annotations

import argparse
import functools
import json
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the rewrites live next to this file
from metamorphic_rewrites import REWRITES, FileRewrite, LineMap, apply, plan

from envqa.core.environment import load_environment
from envqa.core.errors import InputError
from envqa.probes.static.task_schema import lint_findings

REPO = Path(__file__).resolve().parent.parent
RAISED = ("warning", "error", "critical")
Key = tuple[str, str, str, int | None]  # rule, severity, file, line


@dataclass
class Case:
    example: str
    rewrite: str
    missing: list[Key] = field(default_factory=list)  # in the original (mapped), not in the rewrite
    extra: list[Key] = field(default_factory=list)  # in the rewrite, not in the original

    @property
    def ok(self) -> bool:
        return not self.missing and not self.extra

    def diff(self) -> str:
        lines = [f"- {k[0]} ({k[1]}) {k[2]}:{k[3]}  only in the original (at its mapped line)" for k in self.missing]
        lines += [f"+ {k[0]} ({k[1]}) {k[2]}:{k[3]}  only in the rewrite" for k in self.extra]
        return "\n".join(lines)


def examples(root: Path) -> list[Path]:
    return sorted(
        p for p in root.iterdir() if p.is_dir() and ((p / "task.toml").exists() or (p / "task.yaml").exists())
    )


def _key(finding: dict) -> Key:
    loc = finding.get("location") or ""
    path, _, line = loc.rpartition(":")
    if path and line.isdigit():
        return finding["rule"], finding["severity"], path, int(line)
    return finding["rule"], finding["severity"], loc, None


def lint_keys(task_dir: Path) -> list[Key]:
    """qa lint's findings at warning and above, as keys (a task qa refuses to load is one `load-error` key)."""
    try:
        env = load_environment(task_dir, lint=True)
    except InputError as e:
        return [("load-error", "error", str(e).split(":")[0], None)]
    return sorted(_key(f.public()) for f in lint_findings(env, grouped=False) if f.severity in RAISED)


def _copy(example: Path, into: Path) -> Path:
    dest = into / example.name  # the same folder name: a rule may read it
    shutil.copytree(example, dest, symlinks=True)
    return dest


@functools.cache
def baseline(example: Path) -> tuple[Key, ...]:
    """The original's keys, linted once per process from a copy outside the repository."""
    with tempfile.TemporaryDirectory(prefix="qa-meta-") as tmp:
        return tuple(lint_keys(_copy(example, Path(tmp))))


@functools.cache
def planned(example: Path, rewrite: str) -> dict[str, FileRewrite]:
    return plan(rewrite, example)


def compare(original: list[Key], rewritten: list[Key], maps: dict[str, LineMap]) -> tuple[list[Key], list[Key]]:
    """(missing, extra): each original key matched to a rewritten one with the same rule, severity and file, at
    one of the lines its line maps to."""
    left = list(rewritten)
    missing = []
    for rule, sev, path, line in original:
        lines = maps[path].get(line, (line,)) if path in maps and line is not None else (line,)
        hit = next((k for k in left if k[:3] == (rule, sev, path) and k[3] in lines), None)
        if hit is None:
            missing.append((rule, sev, path, lines[0]))
        else:
            left.remove(hit)
    return missing, left


def run_case(example: Path, rewrite: str) -> Case:
    """One example x one rewrite (which applies: `planned` is non-empty), compared with the original's lint."""
    done = planned(example, rewrite)
    with tempfile.TemporaryDirectory(prefix="qa-meta-") as tmp:
        copy = _copy(example, Path(tmp))
        apply(rewrite, copy, done)
        keys = lint_keys(copy)
    missing, extra = compare(list(baseline(example)), keys, {rel: d.line_map for rel, d in done.items()})
    return Case(example.name, rewrite, missing, extra)


def cases(root: Path, only: list[str] | None = None, rewrites: list[str] | None = None) -> list[tuple[Path, str]]:
    """Every (example, rewrite) where the rewrite applies."""
    out = []
    for example in examples(root):
        if only and example.name not in only:
            continue
        out += [(example, name) for name in (rewrites or REWRITES) if planned(example, name)]
    return out


def summary(results: list[Case]) -> dict:
    by: dict[str, dict[str, int]] = {name: {"cases": 0, "failures": 0} for name in REWRITES}
    for c in results:
        by[c.rewrite]["cases"] += 1
        by[c.rewrite]["failures"] += not c.ok
    by = {k: v for k, v in by.items() if v["cases"]}
    failing = [f"{c.example}:{c.rewrite}" for c in results if not c.ok]
    return {"cases": len(results), "failures": len(failing), "by_rewrite": by, "failing": failing}


def show(console: Console, results: list[Case], names: list[str], rewrites: list[str]) -> None:
    table = Table(title="qa lint under semantics-preserving rewrites of the verifier")
    table.add_column("example")
    for r in rewrites:
        table.add_column(r, justify="center")
    got = {(c.example, c.rewrite): c for c in results}
    for name in names:
        cells = []
        for r in rewrites:
            c = got.get((name, r))
            cells.append("-" if c is None else "ok" if c.ok else "[red]FAIL[/red]")
        table.add_row(name, *cells)
    console.print(table)
    for c in results:
        if not c.ok:
            console.print(f"\n[bold]FAIL {c.example} x {c.rewrite}[/bold]", highlight=False)
            console.print(c.diff(), markup=False, highlight=False)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--examples", type=Path, default=REPO / "examples")
    ap.add_argument("--only", help="comma-separated example names")
    ap.add_argument("--rewrite", help="comma-separated rewrite names (default: all)")
    args = ap.parse_args(argv)
    only = args.only.split(",") if args.only else None
    rewrites = args.rewrite.split(",") if args.rewrite else list(REWRITES)
    unknown = [r for r in rewrites if r not in REWRITES]
    if unknown:
        ap.error(f"unknown rewrite(s) {unknown}; known: {', '.join(REWRITES)}")
    started = time.monotonic()
    todo = cases(args.examples.resolve(), only, rewrites)
    results = [run_case(example, rewrite) for example, rewrite in todo]
    console = Console(width=200)
    names = [e.name for e in examples(args.examples.resolve()) if not only or e.name in only]
    show(console, results, names, rewrites)
    out = summary(results)
    console.print(
        f"\n{out['cases']} cases, {out['failures']} failing, {time.monotonic() - started:.1f} s", highlight=False
    )
    print(json.dumps(out))
    return 1 if out["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
