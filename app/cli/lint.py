"""`qa lint`: an environment's files (and with --image its built image) checked without running any agent.

Exit 0 when nothing above info was found, 1 with findings, 2 on bad input.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer
from rich.console import Console

from envqa.app.cli.common import cli_config, fail
from envqa.core.errors import EnvQAError, InputError
from envqa.core.logs import configure_logging
from envqa.core.registry.lint_coverage import lint_coverage


def lint(
    env_dir: Path = typer.Argument(..., help="environment directory"),
    as_json: bool = typer.Option(False, "--json", help="print findings as JSON"),
    image: bool = typer.Option(
        False,
        "--image",
        help="also build the image and check what it contains (test literals, verifier code the agent can rewrite)",
    ),
    strict: bool = typer.Option(False, "--strict", help="add the opt-in rules: root agent, unpinned base image"),
    online: bool = typer.Option(
        False,
        "--online",
        help="also ask the apt archive and Python index the build uses whether each pinned version is still there "
        "([online] in qa.toml; without this flag nothing is asked of any network)",
    ),
    config: Path | None = typer.Option(None, "--config", "-c", help="qa.toml to read (default ./qa.toml)"),
    fmt: str = typer.Option("text", "--format", help="a folder of tasks: text, json or markdown"),
    assertions: bool = typer.Option(
        False,
        "--assertions",
        help="print the verifier's checks (what each observes and compares with) instead of findings",
    ),
) -> None:
    """Check an environment's files (and with --image its built image) without running any agent; a folder of
    tasks is linted task by task, as one dataset report."""
    configure_logging()
    from envqa.app.dataset import is_dataset_dir
    from envqa.core.environment import load_environment
    from envqa.probes.static.task_schema import lint_findings

    if is_dataset_dir(env_dir):
        _lint_dataset(env_dir, config, strict, image, "json" if as_json else fmt)

    try:
        cfg = cli_config(config, {})
        env = load_environment(env_dir, lint=True)  # lints what qa cannot run yet, and an empty instruction
    except InputError as e:
        if as_json:
            sys.stdout.write(
                json.dumps({"ok": False, "error": str(e), "exit_code": e.exit_code, "findings": []}) + "\n"
            )
        fail(e)
    if assertions:
        _print_assertions(env, as_json)
    s = cfg.probes
    # the image's proof replaces the files' suspicion of the same rule at the same line
    shown = _image_findings(env, cfg, as_json) if image else None
    findings = lint_findings(env, strict or s.lint_root_agent, strict or s.lint_unpinned_base, image=shown)
    if online:
        findings = _online_findings(env, cfg, findings)
    serious = [f for f in findings if f.severity != "info"]
    coverage = lint_coverage(image=image, strict=strict or s.lint_root_agent or s.lint_unpinned_base, online=online)
    if as_json:
        report = {
            "ok": not serious,
            "findings": [f.public() for f in findings],
            "coverage": coverage.public(bool(serious)),
        }
        sys.stdout.write(json.dumps(report) + "\n")
    else:
        from envqa.app.report import print_findings

        console = Console()
        print_findings([f.public() for f in findings], console, title=f"lint {env.root}")
        console.print(coverage.summary(found=bool(serious)), markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(1 if serious else 0)


def _print_assertions(env, as_json: bool) -> None:
    """--assertions: the assertion model (core/task_model/assertions.py), JSON or a table; exit 0."""
    from envqa.core.task_model import model_of

    model = model_of(env).assertions
    if as_json:
        sys.stdout.write(model.model_dump_json() + "\n")
    else:
        from envqa.app.assertions_view import print_assertions

        print_assertions(model, Console(), f"checks of {env.root}")
    raise typer.Exit(0)


def _online_findings(env, cfg, findings: list) -> list:
    """--online: the pins asked of the indexes the build uses (sandbox/indexes/, within [online] task_budget_sec);
    a pin found gone replaces apt-version-pinned's warning at its line."""
    from envqa.probes.static.online_pins import gone_over_pinned, online_pin_findings
    from envqa.sandbox.indexes import OnlineIndexes

    indexes = OnlineIndexes(cfg.online, cfg.home)
    return gone_over_pinned(env, findings, online_pin_findings(env, indexes, cfg.online.task_budget_sec))


def _lint_dataset(root: Path, config: Path | None, strict: bool, image: bool, fmt: str) -> None:
    """`qa lint DATASET_DIR` (app/lint_dataset.py): one DatasetReport, as `qa run DIR` prints one."""
    from envqa.app.lint_dataset import lint_dataset, print_lint_dataset

    if image or fmt not in ("text", "json", "markdown"):
        why = "--image takes one task" if image else f"--format {fmt!r}: text, json or markdown"
        fail(InputError(str(root), why), fmt == "json")
    try:
        s = cli_config(config, {}).probes
    except InputError as e:
        fail(e, fmt == "json")
    report = lint_dataset(root, strict or s.lint_root_agent, strict or s.lint_unpinned_base)
    if fmt == "json":
        sys.stdout.write(report.model_dump_json() + "\n")
    elif fmt == "markdown":
        from envqa.app.ci_output import render

        sys.stdout.write(render(report, "markdown"))
    else:
        print_lint_dataset(report, Console())
    raise typer.Exit(report.exit_code)


def _image_findings(env, cfg, as_json: bool) -> list:
    """--image: build the image and read what is in it; an image that does not build is itself the finding."""
    from envqa.app.runner import make_backend
    from envqa.core.sandbox import ImageBuildError
    from envqa.probes.static.image_checks import image_findings

    backend = make_backend(cfg)
    try:
        tag, _built = backend.ensure_image(env)
        return image_findings(env, backend, tag, cfg)
    except ImageBuildError as e:
        from envqa.core.models import Finding

        return [
            Finding.of(
                rule="image-build-failed",
                message=f"the environment's image does not build: {e}",
                evidence=[e.log_tail],
                location=env.dockerfile.relative_to(env.root).as_posix(),
            )
        ]
    except EnvQAError as e:
        fail(e, as_json)
        return []  # not reached: fail exits
