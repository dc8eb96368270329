"""The top layer: what a person or a service talks to (the `qa` CLI, the runner that wires a graph to an
executor, a store and a sandbox backend, approvals, `qa serve`, Slack, the HTML report)."""

# The app's notifiers join envqa.core.notify here, so every process that runs a graph through the app (`qa run`,
# a worker running a control job, `qa serve` resuming one) posts to Slack when `[slack] channel` is set.
from envqa.app import slack as _slack  # noqa: F401

# The model SDK adapters (envqa.providers) join core's ModelClient seam here: roles and graphs ask
# envqa.core.model_client.client_for(spec, config) and never import an adapter (import-linter holds it).
from envqa.core.job_bodies import register_job_loader as _register_job_loader
from envqa.core.model_client import use_model_clients as _use_model_clients
from envqa.providers import create_client as _create_client

_use_model_clients(_create_client)

# The job bodies (envqa.app.jobs, envqa.app.detach) join core's job registry on first need: core names a job by
# its kind (envqa.core.job_bodies) and a worker, which runs as `python -m envqa.app.cli`, has imported this.


def load_job_bodies() -> None:
    """Register the app's job bodies (also named by the `envqa.job_bodies` entry point in pyproject.toml)."""
    from envqa.app import detach, jobs  # noqa: F401 - each registers its bodies at import


_register_job_loader(load_job_bodies)
