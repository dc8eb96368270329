"""File-only rules over the task model: qa lint, the hunt's static probe and the gate call them."""
