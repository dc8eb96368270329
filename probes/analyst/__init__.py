"""The trace analyst, in one place: what each trial means (a label), and which labels are the task's.

- rules.py: the deterministic labels, final before any model looks (infra error classes, strace-proven
  shortcuts, time-limit kills, our own agents' trials);
- model.py: the one model call per trial the rules leave open, with citations code checks and one repair;
- taxonomy.py: which labels and subtypes the model may give for an outcome (from the label registry);
- trace_view.py: a trajectory as the model sees it, compressed with its step ids kept;
- rollup.py: a label counts as the task's only when trials and models agree.

It sits in probes/ because its rules read trials the way the probes do (strace events, the `HuntTrial` view)
and probes are the layer above agents (docs/development.md, "Architecture"); the model call uses the agents'
trajectory model and structured output from below. The graph nodes that schedule it stay in graphs/
(analyze.py, analyst_dispatch.py: calls through the Executor), and the job body that runs one call is
envqa.app.jobs.label_job.
"""
