"""The solver: a minimal tool-use loop over any configured model, acting through a bash tool in the sandbox.

In the spirit of mini-swe-agent: the model sees only the instruction and what its commands print; each
command is a fresh `bash -c` in the trial's container with a per-command timeout and a truncated
observation; the loop ends on the `finish` tool or a limit (steps, wall time from task.toml, tokens).
Every step is appended to an ATIF trajectory as it happens, so an interrupted trial keeps its prefix.

Two action protocols (`[solver] actions`, per model `[solver.model_actions]`, `qa run --actions`): `tools`,
native tool calls (bash, finish); `text`, one fenced bash block per reply and a submit command
(agents/actions.py), for served checkpoints without a tool-call parser. Both write the same trajectory.

Provider errors propagate as envqa.core.errors types (the trial becomes infra with that error class, and the
scheduler parks or retries); the trajectory is finished first, in `finally`.
"""

from __future__ import annotations

import time

import structlog

from envqa.agents.actions import SUBMIT, TRUNCATED, parse_text_action
from envqa.agents.base import AgentContext, AgentRun, register_agent
from envqa.agents.trajectory import (
    AgentInfo,
    AtifToolCall,
    FinalMetrics,
    Observation,
    ObservationResult,
    Redactor,
    StepMetrics,
    TrajectoryWriter,
)
from envqa.core.config import QAConfig
from envqa.core.defaults import SOLVER_PWD_SEC
from envqa.core.errors import ProviderError
from envqa.core.model_client import Message, ModelClient, ToolDef, client_for, secret_values
from envqa.core.pricing import Spend, price_for
from envqa.prompts.render import render

log = structlog.get_logger(__name__)
VERSION = "0.1"
TOOLS = [
    ToolDef(
        name="bash",
        description="Run one shell command in the container; returns exit code and output.",
        parameters={
            "type": "object",
            "properties": {"command": {"type": "string", "description": "the command to run"}},
            "required": ["command"],
        },
    ),
    ToolDef(
        name="finish",
        description="Declare the task complete. Call once, after verifying your work.",
        parameters={"type": "object", "properties": {"summary": {"type": "string", "description": "what you did"}}},
    ),
]


# An assistant turn may not be empty on the wire (OpenAI wants content or tool calls, Anthropic non-empty text).
EMPTY_REPLY = "(empty reply)"


class Finished(Exception):
    """The loop's normal end: carries the exit status stored in AgentRun.summary."""

    def __init__(self, status: str):
        self.status = status
        super().__init__(status)


@register_agent("solver")
class SolverAgent:
    name = "solver"
    # The prompts: a subclass with another role (the shortcut hunter) changes these and nothing else.
    system_template = "solver_system.j2"
    instance_template = "solver_instance.j2"

    def __init__(
        self, model: str | None = None, config: QAConfig | None = None, client: ModelClient | None = None, **_ignored
    ):
        if not model and client is None:
            raise ValueError("the solver needs a model, e.g. -m anthropic/claude-sonnet-4-5")
        self.config = config or QAConfig()
        self.settings = self.config.solver
        self.client = client or client_for(model, self.config)
        self.actions = self.settings.actions_for(model or self.client.spec)

    def _system_prompt(self, **variables) -> str:
        """The role's prompt; in text mode the solver's own text prompt, or the role's plus the text protocol."""
        if self.actions != "text":
            return render(self.system_template, **variables)
        if self.system_template == SolverAgent.system_template:
            return render("solver_text_system.j2", **variables)
        return render(self.system_template, **variables) + "\n\n" + render("text_actions_override.j2", **variables)

    def run(self, ctx: AgentContext) -> AgentRun:
        s = self.settings
        deadline = time.monotonic() + ctx.timeout_sec
        redactor = Redactor(secret_values(self.config))
        writer = TrajectoryWriter(
            ctx.logs_dir / "trajectory.json",
            session_id=ctx.logs_dir.parent.name,
            agent=AgentInfo(name=self.name, version=VERSION, model_name=self.client.spec),
            redactor=redactor,
        )
        pwd = ctx.sandbox.exec(["pwd"], timeout=SOLVER_PWD_SEC)
        system = self._system_prompt(
            workdir=pwd.stdout.strip() or "/",
            command_timeout_sec=f"{s.command_timeout_sec:g}",
            observation_chars=s.observation_chars,
            max_steps=s.max_steps,
        )
        instance = render(self.instance_template, instruction=ctx.instruction)
        writer.add("system", system)
        writer.add("user", instance)
        messages = [Message(role="user", content=instance)]
        spend, steps, status, error = Spend(), 0, "max_steps", None
        try:
            for steps in range(1, s.max_steps + 1):
                if time.monotonic() >= deadline:
                    raise Finished("timeout")
                if spend.tokens >= s.max_tokens_per_trial:
                    raise Finished("max_tokens")
                reply = self.client.complete(
                    system,
                    messages,
                    TOOLS if self.actions == "tools" else None,
                    max_tokens=s.max_output_tokens,
                    temperature=s.temperature,
                )
                spend.add_call(reply.usage, reply.cost_usd, self._priced())
                metrics = StepMetrics(
                    prompt_tokens=reply.usage.input_tokens,
                    completion_tokens=reply.usage.output_tokens,
                    cached_tokens=reply.usage.cached_input_tokens,
                    cost_usd=round(reply.cost_usd, 8),
                )
                extra = {"stop_reason": reply.stop_reason} if reply.stop_reason in TRUNCATED else None
                if self.actions == "text":
                    if self._text_step(ctx, reply, steps, messages, writer, metrics, extra, deadline):
                        raise Finished("finished")
                    continue
                messages.append(
                    reply.as_message()
                    if reply.tool_calls or reply.text.strip()
                    else Message(role="assistant", content=EMPTY_REPLY)
                )
                results = [self._act(ctx, call, deadline) for call in reply.tool_calls]
                writer.add(
                    "agent",
                    reply.text,
                    model_name=self.client.spec,
                    tool_calls=[
                        AtifToolCall(tool_call_id=c.id, function_name=c.name, arguments=c.arguments)
                        for c in reply.tool_calls
                    ]
                    or None,
                    observation=Observation(
                        results=[
                            ObservationResult(source_call_id=c.id, content=out)
                            for c, (out, _) in zip(reply.tool_calls, results)
                        ]
                    )
                    if results
                    else None,
                    metrics=metrics,
                    extra=extra,
                )
                if not reply.tool_calls:
                    messages.append(Message(role="user", content=render("solver_format_error.j2")))
                    continue
                for call, (out, _) in zip(reply.tool_calls, results):
                    messages.append(Message(role="tool", tool_call_id=call.id, content=out))
                if any(done for _, done in results):
                    raise Finished("finished")
        except Finished as f:
            status = f.status
        except ProviderError as e:
            status, error = f"provider_error:{e.error_class}", str(e)
            raise
        except Exception as e:  # the sandbox failed (container gone, daemon down): infra, recorded by run_trial
            status, error = f"error:{getattr(e, 'error_class', type(e).__name__)}", str(e)
            raise
        finally:
            writer.finish(
                FinalMetrics(
                    total_prompt_tokens=spend.input_tokens,
                    total_completion_tokens=spend.output_tokens,
                    total_cached_tokens=spend.cached_input_tokens,
                    total_cost_usd=round(spend.cost_usd, 8),
                    extra={"calls": spend.calls, "priced": spend.priced},
                ),
                notes=status,
                exit_status=status,
                error=error,
                actions=self.actions,
            )
            log.info(
                "solver.done",
                model=self.client.spec,
                status=status,
                steps=steps,
                tokens=spend.tokens,
                cost_usd=round(spend.cost_usd, 6),
            )
        return AgentRun(
            exit_code=0 if status == "finished" else 1, timed_out=status == "timeout", steps=steps, summary=status
        )

    def _text_step(
        self,
        ctx: AgentContext,
        reply,
        step: int,
        messages: list[Message],
        writer: TrajectoryWriter,
        metrics: StepMetrics,
        extra: dict | None,
        deadline: float,
    ) -> bool:
        """One plain-text reply: run its single bash block, or answer a format error; True when it submits.

        The trajectory gets the same shape as a tool call (function `bash` or `finish`, an observation tied
        to the call id), so reports, the analyst and the trace view read both protocols alike."""
        messages.append(Message(role="assistant", content=reply.text if reply.text.strip() else EMPTY_REPLY))
        action = parse_text_action(reply.text)
        call_id = f"text-{step}"
        if not action.ok:
            out = render(
                "solver_text_format_error.j2",
                blocks=action.blocks,
                truncated=reply.stop_reason in TRUNCATED,
                max_tokens=self.settings.max_output_tokens,
            )
            writer.add(
                "agent",
                reply.text,
                model_name=self.client.spec,
                metrics=metrics,
                extra=extra,
                observation=Observation(results=[ObservationResult(content=out)]),
            )
            messages.append(Message(role="user", content=out))
            return False
        if action.submit:
            writer.add(
                "agent",
                reply.text,
                model_name=self.client.spec,
                metrics=metrics,
                extra=extra,
                tool_calls=[AtifToolCall(tool_call_id=call_id, function_name="finish")],
                observation=Observation(results=[ObservationResult(source_call_id=call_id, content="finished")]),
            )
            return True
        out = (
            self._run_command(ctx, action.command, deadline)
            if action.command.strip()
            else f"error: the code block is empty; put one command in it, or `echo {SUBMIT}` to submit"
        )
        writer.add(
            "agent",
            reply.text,
            model_name=self.client.spec,
            metrics=metrics,
            extra=extra,
            tool_calls=[
                AtifToolCall(tool_call_id=call_id, function_name="bash", arguments={"command": action.command})
            ],
            observation=Observation(results=[ObservationResult(source_call_id=call_id, content=out)]),
        )
        messages.append(Message(role="user", content=out))
        return False

    def _priced(self) -> bool:
        return price_for(self.client.spec, self.config) is not None

    def _act(self, ctx: AgentContext, call, deadline: float) -> tuple[str, bool]:
        """Run one tool call; returns (observation text, whether the agent finished)."""
        if call.arguments_error:
            return f"error: {call.arguments_error}; send the arguments as a JSON object", False
        if call.name == "finish":
            return "finished", True
        if call.name != "bash":
            return f"error: unknown tool {call.name!r}; the tools are bash and finish", False
        command = call.arguments.get("command")
        if not isinstance(command, str) or not command.strip():
            return "error: bash needs a non-empty string argument `command`", False
        return self._run_command(ctx, command, deadline), False

    def _run_command(self, ctx: AgentContext, command: str, deadline: float) -> str:
        """One fresh `bash -c` in the sandbox, as the task's agent user; the rendered observation."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return "error: the task's time limit is over"
        timeout = min(self.settings.command_timeout_sec, remaining)
        user = ctx.env.config.agent.user  # task.toml [agent].user; no environment beyond the image's own
        res = ctx.sandbox.exec(["bash", "-c", command], timeout=timeout, user=str(user) if user is not None else None)
        limit = self.settings.observation_chars
        return render(
            "solver_observation.j2",
            timed_out=res.timed_out,
            timeout_sec=f"{timeout:.0f}",
            exit_code=res.exit_code,
            stdout=_clip(res.stdout, limit * 2 // 3),
            stderr=_clip(res.stderr, limit // 3),
        )


def _clip(text: str, limit: int) -> str:
    """Keep head and tail: errors tend to be at the end, context at the start."""
    if len(text) <= limit:
        return text.rstrip("\n")
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters truncated ...]\n{text[-half:]}"
