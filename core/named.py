"""A registry of things by name (sandbox backends, agents, probes): one small class instead of a dict and a
decorator per kind. Config and the store name what they want (`[sandbox] backend = "docker"`, an agent in a
trial spec, a probe in a job); the implementations register themselves as their module loads."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Named(Generic[T]):
    def __init__(self, kind: str):
        self.kind = kind
        self._items: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator: register the decorated object under `name` (a later registration replaces it)."""

        def deco(item: T) -> T:
            self._items[name] = item
            return item

        return deco

    def get(self, name: str) -> T:
        """The object registered under `name`; KeyError naming the known ones for any other."""
        if name not in self._items:
            raise KeyError(f"unknown {self.kind} {name!r}; known: {', '.join(self.names())}")
        return self._items[name]

    def names(self) -> list[str]:
        return sorted(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items
