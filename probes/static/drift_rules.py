"""Infrastructure: what breaks a task when it runs under its own limits (the drift rules, what breaks when the
world moves on, are queries over the task model's fetches: probes/static/fetch_rules.py).

parallel-build-over-cpu-limit  (brittleness, warning) make / ninja / cmake --build with more jobs than task.toml's
                               `cpus`, in solve.sh or test.sh (which run under the task's limits): `-j$(nproc)`
                               counts the host's cores, not the container's CPU quota (Terminal-Bench 2.1 ships an
                               nproc wrapper in caffe-cifar-10 "to avoid OOM when using make -j$(nproc)"), a bare
                               `-j` has no bound, and `-j4` under `cpus = 1` runs four compilers in one CPU's
                               memory. Quiet in a Dockerfile (image builds are not under the task's limits) and
                               when the image replaces nproc with a fixed count no larger than `cpus`.
"""

from __future__ import annotations

import re

from envqa.core.environment import Environment
from envqa.core.models import Finding
from envqa.core.parsers.shell import Command
from envqa.core.task_model import model_of

BUILD_TOOLS = {"make", "gmake", "ninja", "cmake"}
NPROC = re.compile(r"\$\(\s*nproc\s*\)|`\s*nproc\s*`|\$\(\s*getconf\s+_NPROCESSORS_ONLN\s*\)")
NPROC_WRAPPER = re.compile(r"echo\s+(\d+)[^>]*>\s*(/usr/local/bin|/usr/bin|/bin)/nproc\b")


def _commands(env: Environment) -> list[tuple[str, list[Command]]]:
    """(file as findings name it, its reachable commands) of the scripts that run in the container under the task's
    limits: solve.sh (solve time) and the verifier's entry script (verify time), from the task model
    (core/task_model/solution.py, core/task_model/files.py). Image builds are not under the task's limits."""
    model = model_of(env)
    out = [(s.rel, [c for c in s.commands if c.reachable]) for s in model.solution]
    script = model.tests.script
    if script is not None:
        out.append((script.rel, [c for c in script.commands if c.reachable]))
    return out


def _jobs(cmd: Command) -> str | None:
    """The parallel job count a build command asks for: a number, 'nproc', 'unbounded', or None (serial)."""
    if cmd.name not in BUILD_TOOLS or (cmd.name == "cmake" and "--build" not in cmd.words):
        return None
    words = cmd.words[1:]
    for i, w in enumerate(words):
        value = None
        if w in ("-j", "--jobs", "--parallel"):
            nxt = words[i + 1] if i + 1 < len(words) else ""
            value = nxt if re.fullmatch(r"\d+|.*nproc.*", nxt) else "unbounded"
        elif m := re.fullmatch(r"(?:-j|--jobs=|--parallel=)(.+)", w):
            value = m.group(1)
        if value is not None:
            if value == "unbounded":
                return value
            return "nproc" if "nproc" in value or "NPROCESSORS" in value else (value if value.isdigit() else None)
    return None


def _nproc_cap(env: Environment) -> int | None:
    """The count an nproc wrapper the Dockerfile installs reports (None: no wrapper)."""
    if not env.dockerfile.is_file():
        return None
    m = NPROC_WRAPPER.search(env.dockerfile.read_text(errors="replace"))
    return int(m.group(1)) if m else None


def parallel_build_findings(env: Environment) -> list[Finding]:
    cpus = env.config.environment.cpus
    memory = env.config.environment.memory_mb
    cap = _nproc_cap(env)
    out = []
    for where, cmds in _commands(env):
        for cmd in cmds:
            jobs = _jobs(cmd)
            if jobs is None:
                continue
            if jobs == "nproc" and (cap is not None and cap <= cpus):
                continue
            if jobs not in ("nproc", "unbounded") and int(jobs) <= cpus:
                continue
            asked = {
                "nproc": "as many jobs as the host has cores (nproc does not see the CPU quota)",
                "unbounded": "an unbounded number of jobs",
            }.get(jobs, f"{jobs} jobs")
            out.append(
                Finding.of(
                    "parallel-build-over-cpu-limit",
                    remedy_fields={"jobs": str(max(int(cpus), 1))},
                    message=f"{where} builds with {asked} under the task's {cpus:g} CPU / {memory} MB limit: the "
                    "compilers share that memory and CPU, so the build can be killed for memory or run out of time",
                    evidence=[cmd.evidence(where), f"task.toml: cpus = {cpus:g}, memory_mb = {memory}"],
                    location=f"{where}:{cmd.line}",
                )
            )
    return out


def drift_findings(env: Environment) -> list[Finding]:
    """The infrastructure rule above; static_findings (probes/static/findings.py) calls it."""
    return parallel_build_findings(env)
