"""The mutation probe: the tests must fail on a mutated solution (kinds, tolerances)."""
