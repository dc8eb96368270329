"""The fake provider's script file (JSON or YAML): scripted turns and injected faults per model.

    keys: [sk-test-good]            # optional: any other key gets 401
    models:
      "*":                          # a model name, or "*" for every model without its own entry
        turns:                      # reply i answers a request that already holds i assistant turns
          - text: "I'll write the script."
            tool_calls: [{name: bash, arguments: {command: "echo hi"}}]
            usage: {input: 120, output: 30}
            delay: 0.2              # seconds to wait before answering (a slow provider)
            finish_reason: length   # optional: as cut at max_tokens (Anthropic: stop_reason max_tokens)
            omit_usage: true        # optional: no `usage` in the reply, as some servers do
          - tool_calls: [{name: finish, arguments: {summary: done}}]
        branches:                   # optional: the first branch whose `when` text appears in the request's
          - when: "MARKER-1"        #   first user message answers with its own turns (one model, several
            turns: [...]            #   scripted conversations: e.g. an analyst judging different trials)
        faults:                     # answered first, in order, each `times` times (-1: forever)
          - {status: 429, retry_after: 7, times: 1}
          - {status: 500, after: 4}     # the model's 5th request fails once
          - {status: 429, retry_after: 3, times: -1, window_sec: 3}  # a storm: every request in the 3 s
                                        #   from the model's first request
        concurrency: 3              # optional: the provider's own limit; a request that arrives while 3 of
        concurrency_retry_after: 1  #   the model's are in progress gets 429 with this Retry-After

Choosing a turn by the number of assistant turns in the request makes replay stateless: concurrent
trials of one model each walk the same transcript. Faults are the only state (a counter per model).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from envqa.core.errors import InputError


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ScriptedCall(Strict):
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    raw_arguments: str | None = None  # sent verbatim to script malformed JSON (Anthropic: as `input`, a string)


class Usage(Strict):
    input: int | None = None
    output: int | None = None


class Turn(Strict):
    text: str = ""
    tool_calls: list[ScriptedCall] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    delay: float = Field(default=0.0, ge=0)
    # Real servers' rough edges (issue 26): a reply cut at max_tokens, a reply without a `usage` object.
    finish_reason: str | None = Field(default=None, description="e.g. length; None: stop / tool_calls")
    omit_usage: bool = False


class Fault(Strict):
    status: int | None = Field(default=None, description="HTTP status to answer; None: only delay")
    retry_after: float | None = None
    message: str | None = None
    delay: float = Field(default=0.0, ge=0)
    times: int = Field(default=1, description="-1 repeats forever")
    after: int = Field(default=0, ge=0, description="let this many of the model's requests through first")
    window_sec: float | None = Field(
        default=None,
        gt=0,
        description="only within this many seconds of the model's first request (a time-bound storm); None: any time",
    )


class Branch(Strict):
    when: str = Field(min_length=1, description="text the request's first user message must contain")
    turns: list[Turn] = Field(default_factory=list)


class ModelScript(Strict):
    turns: list[Turn] = Field(default_factory=list)
    branches: list[Branch] = Field(default_factory=list)
    faults: list[Fault] = Field(default_factory=list)
    concurrency: int | None = Field(default=None, ge=1, description="requests in progress at once; beyond: 429")
    concurrency_retry_after: float = Field(default=1.0, ge=0)

    def turns_for(self, first_user_text: str) -> list[Turn]:
        return next((b.turns for b in self.branches if b.when in first_user_text), self.turns)


class Script(Strict):
    keys: list[str] | None = None
    models: dict[str, ModelScript] = Field(default_factory=dict)

    def for_model(self, model: str) -> ModelScript:
        return self.models.get(model) or self.models.get("*") or ModelScript()


def load_script(path: str | Path) -> Script:
    p = Path(path)
    try:
        text = p.read_text()
        data = json.loads(text) if p.suffix == ".json" else yaml.safe_load(text)
        return Script.model_validate(data or {})
    except FileNotFoundError:
        raise InputError(str(p), "script file not found") from None
    except (yaml.YAMLError, json.JSONDecodeError) as e:
        raise InputError(str(p), f"not valid {'JSON' if p.suffix == '.json' else 'YAML'}: {e}") from None
    except ValidationError as e:
        err = e.errors()[0]
        raise InputError(str(p), err["msg"], ".".join(map(str, err["loc"]))) from None
