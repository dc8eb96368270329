"""The provider registry: which adapter speaks to an endpoint of each `kind` (`[providers.x] kind = ...`), and
which SDK package it drives. One registration per kind, beside the adapter (`@register_provider`), the way
sandbox backends register with `@register_backend`; `create_client` asks it instead of an if/else, and the
retry wrapper and the error mapping take their list of SDK packages from it instead of a copy.

A factory is called as `factory(spec=, model=, endpoint=, api_key=, base_url=, price=)` and returns a
`ModelClient`. It imports its SDK inside, so a process that never calls a model never pays for the import.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from envqa.core.model_client import ModelClient
from envqa.core.named import Named

ClientFactory = Callable[..., ModelClient]
TRANSPORT = "httpx"  # what both SDKs send with: its errors reach the retry wrapper unwrapped at times


@dataclass(frozen=True)
class Provider:
    kind: str
    sdk: str  # the SDK's top-level package: the module prefix of its exceptions
    factory: ClientFactory


PROVIDERS: Named[Provider] = Named("provider kind")


def register_provider(kind: str, *, sdk: str) -> Callable[[ClientFactory], ClientFactory]:
    """Decorator: `factory` builds the client for endpoints of `kind`, over the `sdk` package."""

    def deco(factory: ClientFactory) -> ClientFactory:
        PROVIDERS.register(kind)(Provider(kind=kind, sdk=sdk, factory=factory))
        return factory

    return deco


def provider_for(kind: str) -> Provider:
    return PROVIDERS.get(kind)


def sdk_packages() -> tuple[str, ...]:
    """The SDK packages of every registered provider, once each (their exceptions are the adapters' to map)."""
    return tuple(sorted({PROVIDERS.get(k).sdk for k in PROVIDERS.names()}))
