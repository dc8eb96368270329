"""The collateral-damage probe: the verifier must notice state the task never asked to touch being damaged
(candidates, probe)."""
