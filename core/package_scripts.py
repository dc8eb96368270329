"""The one loader for scripts that run inside sandboxes (exploit payloads, image scans).

Those scripts are real files shipped as package data beside the module that runs them (for instance
agents/exploit_scripts/, probes/scripts/), not strings in Python: shellcheck and py_compile see them, a test
can run them as scripts, and an installed wheel carries them (pyproject.toml package-data). They are read
through importlib.resources so a regular install, an editable one and a checkout behave the same; a file
that did not ship fails at import of the module that needs it, not in the middle of a run.
"""

from __future__ import annotations

from importlib.resources import files


def read_script(package: str, name: str) -> str:
    """The text of `name` (a path relative to `package`'s folder, e.g. "scripts/image_scan.py").

    Callers pass their own `__package__`, so a script is always looked up next to the code that runs it."""
    resource = files(package).joinpath(name)
    if not resource.is_file():
        raise FileNotFoundError(f"{package}: shipped script {name!r} is missing (pyproject.toml package-data?)")
    return resource.read_text(encoding="utf-8")
