"""The bottom layer: domain models, config, errors, the task model, parsers, stats, rewards, the registries
and the protocols (Executor, Sandbox, ModelClient, the store interface) that the layers above depend on.

Nothing here imports a role (agents/, probes/), the loop (graphs/), the app, or an implementation
(sandbox/, store/, scheduler/); import-linter holds that (pyproject.toml, [tool.importlinter]).
"""
