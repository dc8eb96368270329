"""Shell scripts and Dockerfiles read through kept parsers (bashlex, dockerfile-parse), not regexes.

A lower layer than agents/ and probes/: the static rules (probes/static/findings.py, probes/static/image_checks.py) read
what a task runs with them, and the mechanical fixers (agents/fixers/) find the instructions and commands
they rewrite with the same reading, so a rule and its fix never disagree about what a line means.
"""
