"""The probes: what qa runs against a task to find its flaws. Where a probe lives:

- top level: the framework every probe uses (`base` ProbeContext and `@register_probe`, `catalog`, `coverage`,
  `dispatch`, `validation`, `replay_units`, `inconclusive`, `trust`) and the one-module dynamic probes
  (`flakiness`, `oracle_state`, `solver_passes`, `verifier_writes`);
- a subpackage per family, its probe, rules and kinds side by side: `static/` (file-only rules over the task
  model: `findings.static_findings`, which qa lint, the hunt and the gate call, and each `*_rules` module),
  `cross_trial/` (one verdict over all of a task's trials), `mutation/` and `variation/` (a probe and its
  `kinds`), `collateral/` (damage beside the outputs the verifier must notice: `candidates` and `probe`, run on
  the oracle-state probe's end state), `nop/` (why a do-nothing agent passes), `exploits/` (scripted attacks and
  their regressions), `network/` (egress, the network by phase, strace's rules), `analyst/` (the trace analyst);
- `scripts/`: files that run inside a sandbox (read with core/package_scripts.read_script).

A family's tests are in tests/probes/ and tests/cross_trial/, named after the module.
"""
