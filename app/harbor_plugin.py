"""A Harbor job plugin: when a `harbor run` job ends, qa triages its folder and writes the triage into it (issue 33).

    harbor run -p tasks/ -a claude-code -m anthropic/claude-opus-4-1 -k 5 \\
        --plugin envqa.app.harbor_plugin:QATriagePlugin --plugin-kwarg tasks=tasks/

or through the `harbor.plugins` entry point `qa-triage` (pyproject.toml). It duck-types Harbor 0.26's `JobPlugin`
protocol (harbor/models/job/plugin.py: `async on_job_start(job)`, `async on_job_end(job_result)`; Harbor builds it
with the `--plugin-kwarg` values as keyword arguments and checks the protocol with isinstance): envqa never
imports harbor, which needs Python 3.12. `on_job_start` remembers the job's folder (`job.job_dir`, which is
`config.jobs_dir / config.job_name`); `on_job_end` reads that folder as `qa analyze` does and writes
`qa-triage.json` and `qa-triage.html` into it. Harbor logs and swallows a plugin's exception at the end of a
job; this one also never raises there: a failure is written as `qa-triage.json` with `error`, so the job's
result stands either way.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import structlog

log = structlog.get_logger(__name__)
JSON_NAME = "qa-triage.json"
HTML_NAME = "qa-triage.html"


class QATriagePlugin:
    """Triage a finished Harbor job with qa's cross-trial rules; kwargs: tasks (the dataset folder, to match
    names, compare checksums and read instructions), config (a qa.toml, for the band), count_stale."""

    def __init__(
        self, tasks: str | None = None, config: str | None = None, count_stale: bool | str = False, **_: Any
    ) -> None:
        self.tasks = [Path(tasks)] if tasks else None
        self.config_path = Path(config) if config else None
        self.count_stale = str(count_stale).lower() in ("1", "true", "yes")
        self.job_dir: Path | None = None

    async def on_job_start(self, job: Any) -> None:
        self.job_dir = Path(job.job_dir)

    async def on_job_end(self, job_result: Any) -> None:
        if self.job_dir is None:
            log.warning("harbor_plugin.no_job", job_id=str(getattr(job_result, "id", "")))
            return
        await asyncio.to_thread(self.write_triage, self.job_dir)

    def write_triage(self, job_dir: Path) -> dict:
        """Analyse `job_dir` and write the triage into it; returns the document (with `error` on a failure)."""
        from envqa.app.analyze import analyze
        from envqa.app.report_html.analyze import write_analyze_html
        from envqa.core.config import load_config
        from envqa.core.layout import write_atomic

        try:
            config = load_config(self.config_path, {})
            doc = analyze([job_dir], config, tasks=self.tasks, count_stale=self.count_stale, store=False)
            write_analyze_html(doc, job_dir / HTML_NAME)
        except Exception as e:  # noqa: BLE001  (the job's result must stand: say what failed, in its folder)
            log.warning("harbor_plugin.failed", job_dir=str(job_dir), error=str(e)[:300])
            doc = {"error": f"{type(e).__name__}: {e}", "job_dir": str(job_dir)}
        write_atomic(job_dir / JSON_NAME, json.dumps(doc, indent=1))
        return doc
