"""Every backend this package provides, registered by name: import this module, then `create_backend(config)`.

The registry itself is in the core (core/sandbox.py: `register_backend`, `create_backend`); each backend
module registers its own factory when imported, and this module imports them all, so the app and the
workers name one module whatever `[sandbox] backend` says.
"""

from __future__ import annotations

from envqa.core.sandbox import backend_names, create_backend  # noqa: F401  (re-exported)
from envqa.sandbox import docker_backend, fake  # noqa: F401  (each registers its backend: "docker", "fake")
