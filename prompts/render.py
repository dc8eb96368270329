"""Render the prompt templates in this folder with Jinja StrictUndefined: a missing variable is an error."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import jinja2


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(Path(__file__).parent)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=False,
        autoescape=False,  # noqa: S701 - prompts, not HTML
    )


def render(name: str, **variables) -> str:
    return _env().get_template(name).render(**variables).strip()
