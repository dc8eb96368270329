"""The variation probe: the task still holds when reworded or varied (kinds)."""
