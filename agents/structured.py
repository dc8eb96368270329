"""Structured output on every provider: a forced tool call whose arguments must validate as a pydantic model.

Why a tool and not a provider-specific JSON mode: forced tool calls exist on Anthropic, OpenAI and the
OpenAI-compatible servers alike, so one code path (and one fake server) covers all of them. A reply
that fails validation is sent back with the validation error and retried; after the last retry the
caller gets MalformedOutput (a typed, non-transient provider error), never a crash.
"""

from __future__ import annotations

import json
from typing import TypeVar

import structlog
from pydantic import BaseModel, Field, ValidationError

from envqa.core.config import QAConfig
from envqa.core.defaults import STRUCTURED_RETRIES
from envqa.core.errors import MalformedOutput
from envqa.core.model_client import Message, ModelClient, ToolDef, client_for
from envqa.core.pricing import Spend
from envqa.prompts.render import render

log = structlog.get_logger(__name__)

M = TypeVar("M", bound=BaseModel)
ANSWER_TOOL = "submit_answer"


class StructuredResult(BaseModel):
    value: dict
    attempts: int
    spend: Spend
    # The conversation up to and including the accepted answer: a caller that finds a problem the schema
    # cannot express (e.g. a citation that does not check out) continues it with a tool message.
    transcript: list[Message] = Field(default_factory=list)
    call_id: str | None = None


def structured_call(
    client: ModelClient,
    system: str,
    prompt: str,
    schema: type[M],
    *,
    retries: int = STRUCTURED_RETRIES,
    max_tokens: int = 4096,
    prior: list[Message] | None = None,
) -> tuple[M, StructuredResult]:
    """Ask for one `schema` object; returns (validated object, attempts and spend). With `prior` (an earlier
    transcript ending in a tool message), the conversation continues instead of starting from `prompt`."""
    tool = ToolDef(
        name=ANSWER_TOOL,
        description=f"Submit the answer as a {schema.__name__} object.",
        parameters=schema.model_json_schema(),
    )
    messages = list(prior) if prior else [Message(role="user", content=prompt)]
    spend = Spend()
    last_problem, last_raw = "", ""
    attempts = retries + 1
    for attempt in range(1, attempts + 1):
        reply = client.complete(system, messages, [tool], tool_choice=ANSWER_TOOL, max_tokens=max_tokens)
        spend.add_call(reply.usage, reply.cost_usd, True)
        call = next((c for c in reply.tool_calls if c.name == ANSWER_TOOL), None)
        if call is None:
            last_problem, last_raw = f"no {ANSWER_TOOL} tool call in the reply", reply.text[:2000]
            log.info("structured.invalid", model=client.spec, schema=schema.__name__, attempt=attempt, kind="no_call")
            messages += [
                reply.as_message(),
                Message(role="user", content=_repair("no_call", last_problem, reply.text, schema, attempt, attempts)),
            ]
            continue
        last_raw = json.dumps(call.arguments)[:2000]
        if call.arguments_error:
            kind, last_problem = "not_json", call.arguments_error
        else:
            try:
                value = schema.model_validate(call.arguments)
                return value, StructuredResult(
                    value=value.model_dump(mode="json"),
                    attempts=attempt,
                    spend=spend,
                    transcript=[*messages, reply.as_message()],
                    call_id=call.id,
                )
            except ValidationError as e:
                kind, last_problem = "schema", _short(e)
        log.info("structured.invalid", model=client.spec, schema=schema.__name__, attempt=attempt, kind=kind)
        messages += [
            reply.as_message(),
            Message(
                role="tool", tool_call_id=call.id, content=_repair(kind, last_problem, "", schema, attempt, attempts)
            ),
        ]
    raise MalformedOutput(
        f"{client.spec}: no valid {schema.__name__} after {attempts} attempts: {last_problem}", client.spec, last_raw
    )


def _repair(kind: str, problem: str, text: str, schema: type[BaseModel], attempt: int, attempts: int) -> str:
    """The repair message (prompts/structured_repair.j2): says what was wrong with this reply."""
    excerpt = " ".join(text.split())[:200]
    return render(
        "structured_repair.j2",
        kind=kind,
        problem=problem,
        excerpt=repr(excerpt) if excerpt else "",
        tool=ANSWER_TOOL,
        schema=schema.__name__,
        attempt=attempt,
        attempts=attempts,
    )


def _short(e: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, err['loc'])) or '(root)'}: {err['msg']}" for err in e.errors()[:5])


def structured_job(args: dict, system: str, schema: type[M], max_tokens_of) -> dict:
    """The body of a structured call run as a queue job (reviser, generator): args carry the config as JSON,
    the model, the prompt and an optional prior transcript; provider errors propagate to the worker's policy.
    `max_tokens_of(config)` picks the caller's own output cap."""
    config = QAConfig.model_validate(args["config"])
    client = client_for(args["model"], config)
    prior = [Message.model_validate(m) for m in args.get("prior") or []]
    answer, meta = structured_call(
        client,
        system,
        args["prompt"],
        schema,
        retries=config.solver.structured_retries,
        max_tokens=max_tokens_of(config),
        prior=prior or None,
    )
    return {"answer": answer.model_dump(mode="json"), "spend": meta.spend.model_dump(mode="json")}


def is_invalid_answer(exc: BaseException) -> bool:
    """A call that ended because the model never gave a valid answer: MalformedOutput in this process, or
    the InfraError a queue's `run_call` raises carrying its error class (the call ran on a worker)."""
    return getattr(exc, "error_class", None) == "malformed_output"
