"""The instruction held against the tests, from files alone (issue 34): what the instruction commits to
(claims.py), what the tests require (requirements.py for Python through `ast`, shell_requirements.py for
test.sh through core/parsers/shell.py), what is not the agent's to produce (guards.py), and the comparison
that names contradictions, unstated requirements and format variants (compare.py).

It lives in core because two roles read it the same way: the static rules (probes/static/instruction_rules.py)
report the mismatches and the instruction fixer (agents/fixers/instruction.py) writes the sentences that
close them, so a rule and its fix never disagree about what a line means.
"""
