"""The generated parts of the documentation: the rule catalogue from the rule registry, and the configuration
reference from the pydantic models of `qa.toml` (their field descriptions, types, bounds and defaults).

Each page is prose written by people around one block written by this module, between two HTML comments.
`make docs` (scripts/gen_docs.py) rewrites the blocks; tests/test_docs.py renders them again in memory and
fails, saying "run make docs", when a page differs, so neither page can drift from what it describes.
"""

from __future__ import annotations

import inspect
import json
import re
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

from annotated_types import Ge, Gt, Le, Lt
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from envqa.app.cli.rules import MARK_BEGIN, MARK_END, catalogue_markdown
from envqa.core.config import QAConfig

CONFIG_BEGIN = "<!-- make docs: configuration begin -->"
CONFIG_END = "<!-- make docs: configuration end -->"


@dataclass(frozen=True)
class GeneratedPage:
    """A page with one generated block: where it is, its markers, and what renders the block."""

    path: str  # relative to the repository root
    begin: str
    end: str
    render: Callable[[], str]


def pages() -> tuple[GeneratedPage, ...]:
    return (
        GeneratedPage("docs/reference/rules.md", MARK_BEGIN, MARK_END, catalogue_markdown),
        GeneratedPage("docs/reference/configuration.md", CONFIG_BEGIN, CONFIG_END, config_markdown),
    )


def with_block(text: str, page: GeneratedPage, block: str) -> str:
    """`text` with the part between the page's markers replaced by `block`. Markers missing: ValueError
    naming the page (the prose around a block is hand-written, so the markers are never recreated silently)."""
    if text.count(page.begin) != 1 or text.count(page.end) != 1 or text.index(page.begin) > text.index(page.end):
        raise ValueError(f"{page.path}: needs exactly one {page.begin} followed by one {page.end}")
    head, rest = text.split(page.begin, 1)
    tail = rest.split(page.end, 1)[1]
    return f"{head}{page.begin}\n{block.rstrip(chr(10))}\n{page.end}{tail}"


def stale_pages(root: Path, generated: tuple[GeneratedPage, ...] | None = None) -> list[str]:
    """The pages whose generated block is not what their source says now (nothing is written)."""
    stale = []
    for page in generated or pages():
        text = (root / page.path).read_text()
        if with_block(text, page, page.render()) != text:
            stale.append(page.path)
    return stale


def write_pages(root: Path) -> list[str]:
    """Regenerate every block in place; returns the pages that changed."""
    changed = []
    for page in pages():
        path = root / page.path
        text = path.read_text()
        new = with_block(text, page, page.render())
        if new != text:
            path.write_text(new)
            changed.append(page.path)
    return changed


# --- the configuration reference -------------------------------------------------------------------------


def _section_model(annotation: Any) -> type[BaseModel] | None:
    return annotation if inspect.isclass(annotation) and issubclass(annotation, BaseModel) else None


def _dict_of_sections(annotation: Any) -> type[BaseModel] | None:
    if get_origin(annotation) is dict:
        return _section_model(get_args(annotation)[1])
    return None


def _type_name(annotation: Any) -> str:
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (Union, types.UnionType):
        return " or ".join(_type_name(a) for a in args if a is not type(None))
    if origin is Literal:
        return " | ".join(json.dumps(a) for a in args)
    if origin is list:
        return f"list of {_type_name(args[0])}"
    if origin is dict:
        return "tables by name (below)" if _section_model(args[1]) else f"table of {_type_name(args[1])}"
    names = {int: "integer", float: "number", str: "string", bool: "boolean", Path: "path"}
    return names.get(annotation, getattr(annotation, "__name__", str(annotation)))


def _bounds(field: FieldInfo) -> list[str]:
    """Bounds and patterns pydantic enforces on a field, as a reader would write them."""
    out = []
    for meta in field.metadata:
        for kind, attr, sign in ((Ge, "ge", "≥"), (Gt, "gt", ">"), (Le, "le", "≤"), (Lt, "lt", "<")):
            if isinstance(meta, kind):
                out.append(f"{sign} {getattr(meta, attr)}")
        pattern = getattr(meta, "pattern", None)
        if pattern:
            choices = re.fullmatch(r"\^\(([\w|-]+)\)\$", pattern)
            out.append(
                "one of " + ", ".join(f'"{c}"' for c in choices.group(1).split("|"))
                if choices
                else f"matches `{pattern}`"
            )
    return out


def _toml(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, Path)):
        return json.dumps(str(value))
    if isinstance(value, BaseModel):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.model_dump().items() if v is not None) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + " }" if value else "{}"
    return str(value)


def _default(field: FieldInfo) -> str:
    """The default as TOML; a default that depends on the environment says so (`doc_default`)."""
    extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
    if "doc_default" in extra:
        return str(extra["doc_default"])
    if field.is_required():
        return "required"
    value = field.get_default(call_default_factory=True)
    if isinstance(value, dict) and value and all(isinstance(v, BaseModel) for v in value.values()):
        return "entries " + ", ".join(f"`{k}`" for k in value)
    return "`" + _toml(value) + "`" if value is not None else "unset"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _table(model: type[BaseModel], instance: BaseModel | None) -> list[str]:
    rows = ["| key | type | default | what it does |", "|---|---|---|---|"]
    for name, field in model.model_fields.items():
        if _section_model(field.annotation):
            continue  # a nested table gets its own heading
        key = field.alias or name
        kind = ", ".join([_type_name(field.annotation), *_bounds(field)])
        default = _default(field)
        if instance is not None and _dict_of_sections(field.annotation) is None:
            value = getattr(instance, name)
            default = "`" + _toml(value) + "`" if value is not None else "unset"
        rows.append(f"| `{key}` | {_cell(kind)} | {_cell(default)} | {_cell(field.description or '')} |")
    return rows if len(rows) > 2 else []


def _sections(model: type[BaseModel], prefix: str, instance: BaseModel | None) -> list[tuple[str, type, Any]]:
    """(heading, model, instance whose values are the defaults) for `model` and every table under it."""
    out: list[tuple[str, type, Any]] = [(prefix, model, instance)]
    for name, field in model.model_fields.items():
        key = field.alias or name
        sub = _section_model(field.annotation)
        if sub is not None:
            default = getattr(instance, name) if instance is not None else field.get_default(call_default_factory=True)
            out += _sections(sub, f"{prefix}.{key}" if prefix else key, default)
        elif (entry := _dict_of_sections(field.annotation)) is not None:
            out += _sections(entry, f'{prefix}.{key}."NAME"' if prefix else f'{key}."NAME"', None)
    return out


def _intro(model: type[BaseModel]) -> str:
    doc = model.__dict__.get("__doc__")
    return inspect.cleandoc(doc) if doc else ""


def config_markdown(model: type[BaseModel] = QAConfig) -> str:
    """One heading per TOML table (`[sandbox]`, `[scheduler.defaults]`, `[providers."NAME"]`, …) with its
    model's docstring and a row per key: type and bounds, default, and the field's description."""
    lines: list[str] = []
    for heading, section, instance in _sections(model, "", None):
        table = _table(section, instance if heading else None)
        if not table:
            continue
        lines += [f"### `[{heading}]`" if heading else "### Top level", ""]
        intro = _intro(section)
        lines += [intro, ""] if intro else []
        lines += table + [""]
    return "\n".join(lines).rstrip("\n") + "\n"


def undocumented_fields(model: type[BaseModel] = QAConfig) -> list[str]:
    """Every `qa.toml` key whose field has no description (the reference would leave its row blank)."""
    missing = []
    for heading, section, _ in _sections(model, "", None):
        for name, field in section.model_fields.items():
            if not _section_model(field.annotation) and not field.description:
                missing.append(f"{heading}.{field.alias or name}" if heading else field.alias or name)
    return missing
