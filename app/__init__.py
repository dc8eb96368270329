"""The top layer: what a person or a service talks to (the `qa` CLI, the runner that wires a graph to an
executor, a store and a sandbox backend, approvals, `qa serve`, Slack, the HTML report)."""
