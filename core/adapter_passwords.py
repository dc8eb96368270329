"""Published default passwords of benchmark adapters (data: adapter_passwords.toml, next to this module).

Why a data file: each password carries where it is published, so a finding that opens an encrypted solution
with one can say "the public default of TheAgentCompany (harbor-framework/harbor adapters/...)" instead of
"we guessed". Both the image check (probes/static/image_checks.py) and the leaked-answers exploit
(agents/exploits.py) read this one list; neither keeps its own copy.
"""

from __future__ import annotations

import hashlib
import tomllib
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, Field, model_validator

DATA = Path(__file__).with_name("adapter_passwords.toml")
GUESS = "an obvious guess"


# Passwords an adapter derives from the task instead of fixing one: name -> how (from the task's name).
DERIVATIONS = {"sha256-hex16-of-task-name": lambda task: hashlib.sha256(task.encode()).hexdigest()[:16]}


class AdapterPassword(BaseModel):
    value: str
    derive: str = ""  # a DERIVATIONS name: the value is computed from the task's name
    adapter: str = ""
    source: str = ""  # repository + path where the password is published
    schemes: list[str] = Field(default_factory=list)
    why: str = GUESS  # what to call it when nobody publishes it

    @property
    def origin(self) -> str:
        """How a finding names it: whose public default, and where that is written down."""
        return f"the public default of {self.adapter} ({self.source})" if self.source else self.why


class PasswordList(BaseModel):
    password: list[AdapterPassword] = Field(default_factory=list)
    guesses: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _derivations_known(self) -> PasswordList:
        for p in self.password:
            if p.derive and p.derive not in DERIVATIONS:
                raise ValueError(
                    f"{DATA}: password of {p.adapter!r}: unknown derive {p.derive!r} (known: {', '.join(DERIVATIONS)})"
                )
            if not p.derive and not p.value:
                raise ValueError(f"{DATA}: password of {p.adapter!r} has neither a value nor a derive")
        return self


@lru_cache(maxsize=1)
def _load() -> PasswordList:
    return PasswordList.model_validate(tomllib.loads(DATA.read_text()))


def known_passwords(task: str = "") -> list[AdapterPassword]:
    """Published defaults first, then the obvious guesses (and the task's name): the order they are tried in."""
    data = _load()
    fixed = [p for p in data.password if not p.derive]
    derived = [p.model_copy(update={"value": DERIVATIONS[p.derive](task)}) for p in data.password if p.derive and task]
    out = fixed + derived + [AdapterPassword(value=g) for g in data.guesses]
    if task:
        out.append(AdapterPassword(value=task, why="the task's name"))
    unique: dict[str, AdapterPassword] = {}  # the first of each value, in order
    for p in out:
        if p.value:
            unique.setdefault(p.value, p)
    return list(unique.values())


def keys_payload(task: str = "") -> list[dict]:
    """The list as the in-sandbox scripts take it (JSON): value and origin only."""
    return [{"value": p.value, "origin": p.origin} for p in known_passwords(task)]
