"""envqa: quality assurance for RL coding environments (`qa`).

The package is laid out as its layers (README "Architecture"), each a top-level folder of the repository:
app -> graphs -> agents | probes -> core <- sandbox | store | scheduler.
"""
