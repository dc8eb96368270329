"""The error-class registry: every `error_class` a trial or job can end with, and what it means for retries,
for labels and for pass rates.

`transient`: a trial or job that ended with this class (all we have is its name: a recorded trial, an
InfraError) is worth another try; the scheduler's policy and the probes' trial retries read it. A live
provider exception carries its own `transient` (core/errors.py), which the policy asks first.
`infra`: the machinery failed; False means the class says something about the environment (a verifier
that writes no reward, an image that does not build) and the trial is labelled brittleness.
`counts_in_pass_rate`: every error class ends a trial as outcome `infra`, which no pass rate counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal


@dataclass(frozen=True)
class ErrorClass:
    name: str
    source: Literal["sandbox", "build", "verifier", "agent", "provider", "scheduler", "store"]
    transient: bool
    infra: bool
    description: str
    counts_in_pass_rate: bool = False


ERROR_CLASSES: tuple[ErrorClass, ...] = (
    ErrorClass("sandbox_start", "sandbox", True, True,
               "a sandbox (or the fake internet, the egress proxy) did not start"),
    ErrorClass("sandbox_error", "sandbox", True, True, "the sandbox backend failed"),
    ErrorClass("sandbox_gone", "sandbox", True, True, "the sandbox disappeared under the trial"),
    ErrorClass("docker_unavailable", "sandbox", True, True, "the Docker engine cannot be reached"),
    ErrorClass("infra", "scheduler", True, True, "the machinery failed, without a more precise class"),
    ErrorClass("timeout", "scheduler", True, True, "a call did not finish within its deadline"),
    ErrorClass("job_timeout", "scheduler", True, True, "a job ran past its timeout"),
    ErrorClass("job_error", "scheduler", False, True, "a job raised an unexpected error (a bug: retrying cannot help)"),
    ErrorClass("agent_error", "agent", False, True, "an agent (or our code) crashed; the traceback is kept"),
    ErrorClass("provider_error", "provider", True, True, "a model provider failed"),
    # The provider's own classes: the live exception (core/errors.py) says whether to retry; by name alone
    # (a recorded trial) only `provider_error` is retried, as before the registry.
    ErrorClass("provider_timeout", "provider", False, True, "the provider did not answer in time"),
    ErrorClass("provider_unreachable", "provider", False, True, "the provider cannot be reached"),
    ErrorClass("provider_5xx", "provider", False, True, "the provider answered with a server error"),
    ErrorClass("rate_limited", "provider", False, True, "429: the model's queue parks until the provider's time"),
    ErrorClass("overloaded", "provider", False, True, "529: the model's queue parks"),
    ErrorClass("auth", "provider", False, True, "the provider rejected the API key"),
    ErrorClass("context_too_long", "provider", False, True, "the conversation no longer fits the model's context"),
    ErrorClass("invalid_request", "provider", False, True, "the provider rejected the request itself"),
    ErrorClass("redis_unavailable", "scheduler", False, True, "redis-server is missing or did not start"),
    ErrorClass("workers_down", "scheduler", False, True, "an embedded worker process exited; its log tail is kept"),
    ErrorClass("stalled", "scheduler", False, True, "a queue held jobs with no live worker claiming them"),
    ErrorClass("postgres_unavailable", "store", False, True, "PostgreSQL is missing or did not start"),
    ErrorClass("verifier_error", "verifier", False, False, "the verifier ended without a usable reward"),
    ErrorClass("verifier_timeout", "verifier", False, False, "the verifier ran past [verifier].timeout_sec"),
    ErrorClass("image_build_failed", "build", False, False, "the environment's image does not build"),
    ErrorClass("image_build_timeout", "build", False, False, "the environment's image build ran past its limit"),
)
ERROR_CLASS_INFO = MappingProxyType({c.name: c for c in ERROR_CLASSES})

# Infra error classes worth another try: the machinery hiccuped (core/policy.py, probes, trial jobs).
TRANSIENT_INFRA: frozenset[str] = frozenset(c.name for c in ERROR_CLASSES if c.transient)
# Error classes that say something about the environment rather than about our machinery.
ENVIRONMENT_ERRORS: frozenset[str] = frozenset(c.name for c in ERROR_CLASSES if not c.infra)
VERIFIER_ERRORS: tuple[str, ...] = tuple(c.name for c in ERROR_CLASSES if c.source == "verifier")
BUILD_ERRORS: tuple[str, ...] = tuple(c.name for c in ERROR_CLASSES if c.source == "build")
