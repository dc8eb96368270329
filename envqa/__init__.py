"""envqa: quality assurance for RL coding environments (`qa`).

The package is laid out as its layers (docs/development.md, "Architecture"), each a top-level folder of the repository:
app -> graphs -> probes -> agents -> core <- sandbox | store | scheduler | providers. probes sit above agents, not
beside them: a probe runs trials through the agents' trial runtime and scripted exploits; no agent needs a probe.

Installed, setuptools maps each folder to `envqa.<layer>` ([tool.setuptools] package-dir in pyproject.toml). In a
checkout, `envqa/<layer>` is a relative symlink to `../<layer>`, so `import envqa.core` works without installing
and every static tool (import-linter, mypy, an IDE) finds `envqa.core` where an importer would. At run time the
finder below imports a layer from its real folder, not through the link, so module paths in a checkout are the
same as under the editable install (`/repo/core/x.py`, not `/repo/envqa/core/x.py`).
"""

from __future__ import annotations

import importlib.util
import sys
from importlib.machinery import ModuleSpec
from pathlib import Path

_LAYERS = ("core", "agents", "probes", "graphs", "sandbox", "store", "scheduler", "providers", "app", "demo", "prompts")
_HERE = Path(__file__).resolve().parent


class _CheckoutLayers:
    """Meta path finder for `envqa.<layer>` in a checkout: the layer's real folder, found through its symlink.

    Only a link that resolves to the folder beside envqa/ counts, so an installed wheel (real subfolders) and a
    stray top-level `core` package elsewhere on sys.path are never picked up.
    """

    @staticmethod
    def find_spec(fullname: str, path: object = None, target: object = None) -> ModuleSpec | None:
        parent, _, layer = fullname.partition(".")
        if parent != __name__ or layer not in _LAYERS:
            return None
        folder = _HERE.parent / layer
        if (_HERE / layer).resolve() != folder or not (folder / "__init__.py").is_file():
            return None
        return importlib.util.spec_from_file_location(
            fullname, folder / "__init__.py", submodule_search_locations=[str(folder)]
        )


if (_HERE / "core").is_symlink() and not any(isinstance(f, _CheckoutLayers) for f in sys.meta_path):
    sys.meta_path.insert(0, _CheckoutLayers())
