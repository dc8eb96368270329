"""`qa generate --count N`: N distinct variants of one spec, concurrently, and the yield at each stage.

The variants run on threads of this process; their model calls are jobs on the generator model's queue and
their trials go through the run's executor, so the queues' limits decide what really runs at once. The
yield table counts, per stage, the variants that got at least that far (graphs.generate.LEVELS), then the
QA loop's "clean after hunt" and "in band" for the accepted ones when the loop was run on them.
"""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pydantic import BaseModel, Field

from envqa.core.run_deps import RunDeps
from envqa.graphs.generate import LEVELS, Generation, generate_task

STAGES = ["generated", "built", "oracle passes", "nop fails", "accepted", "clean after hunt", "in band"]


class Variant(BaseModel):
    generation: Generation
    run_id: str | None = None  # the QA run on the accepted task, when the loop ran
    verdict: str | None = None
    in_band: bool | None = None

    @property
    def clean(self) -> bool:
        return self.verdict in ("clean", "out_of_band")

    @property
    def banded(self) -> bool:
        # No solver sweep means no band to be out of: a clean task counts as in band.
        return self.verdict == "clean" and self.in_band is not False


class Batch(BaseModel):
    spec_dir: str
    count: int
    looped: bool = False
    variants: list[Variant] = Field(default_factory=list)

    def yield_table(self) -> list[dict]:
        rows = []
        for stage in STAGES:
            if stage in LEVELS:
                n = sum(LEVELS.index(v.generation.reached) >= LEVELS.index(stage) for v in self.variants)
            elif not self.looped:
                n = None
            else:
                n = sum(v.clean if stage == "clean after hunt" else v.banded for v in self.variants)
            rows.append({"stage": stage, "variants": n, "of": self.count})
        return rows

    def public(self) -> dict:
        return {
            "spec_dir": self.spec_dir,
            "count": self.count,
            "looped": self.looped,
            "yield": self.yield_table(),
            "variants": [
                {
                    **v.generation.model_dump(mode="json"),
                    "reached": v.generation.reached,
                    "run_id": v.run_id,
                    "verdict": v.verdict,
                    "in_band": v.in_band,
                }
                for v in self.variants
            ],
        }


def generate_batch(deps: RunDeps, spec_dir: Path, out: Path, count: int) -> Batch:
    """Generate `count` variants into out/<spec name>-<i> (or out itself when count == 1)."""
    name = Path(spec_dir).resolve().name
    batch_key = "gen-" + uuid.uuid4().hex[:8]

    def one(i: int) -> Generation:
        dest = out if count == 1 else out / f"{name}-{i}"
        return generate_task(deps, spec_dir, dest, key=f"{batch_key}-{i}", variant=i if count > 1 else 0)

    with ThreadPoolExecutor(max_workers=max(1, count), thread_name_prefix="generate") as pool:
        gens = list(pool.map(one, range(1, count + 1)))
    return Batch(spec_dir=str(Path(spec_dir).resolve()), count=count, variants=[Variant(generation=g) for g in gens])
