"""The top layer: what a person or a service talks to (the `qa` CLI, the runner that wires a graph to an
executor, a store and a sandbox backend, approvals, `qa serve`, Slack, the HTML report)."""

# The app's notifiers join envqa.core.notify here, so every process that runs a graph through the app (`qa run`,
# a worker running a control job, `qa serve` resuming one) posts to Slack when `[slack] channel` is set.
from envqa.app import slack as _slack  # noqa: F401
