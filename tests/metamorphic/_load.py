"""benchmarks/metamorphic.py and its rewrites, loaded from the checkout (benchmarks/ is not a package): the fast
tier runs exactly the cases the benchmark runs."""

from __future__ import annotations

import importlib.util
import sys

from qa_testkit import REPO

BENCHMARKS = REPO / "benchmarks"
if str(BENCHMARKS) not in sys.path:
    sys.path.insert(0, str(BENCHMARKS))

NAME = "benchmark_metamorphic"  # not "metamorphic": pytest imports this test package under that name


def _load():
    if NAME in sys.modules:
        return sys.modules[NAME]
    spec = importlib.util.spec_from_file_location(NAME, BENCHMARKS / "metamorphic.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[NAME] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


meta = _load()
