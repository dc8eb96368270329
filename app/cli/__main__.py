"""`python -m envqa.app.cli ...` is `qa ...` (how embedded mode starts its `qa worker` processes)."""

from envqa.app.cli import main

main()
