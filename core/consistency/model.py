"""A requirement the tests make: one literal, its role, and where (file:line) the tests make it."""

from __future__ import annotations

import re
from dataclasses import dataclass

URLISH = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*)://\S+$")
URL_IN = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>`]+")


@dataclass(frozen=True)
class Requirement:
    """One thing a test needs. kind: path | url | port | name | compared | command."""

    kind: str
    value: str
    role: str
    file: str
    line: int
    text: str

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    def evidence(self) -> str:
        return f"{self.file}:{self.line}: {self.text}"
