"""The documentation holds together: the generated pages are what their sources say now (else "run make docs"),
every relative link in README.md, CONTRIBUTING.md and docs/ resolves (the file, and the #anchor to a heading),
every page under docs/ can be reached by links from the README, and the README stays a front door."""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envqa.app.cli.rules import catalogue_markdown
from envqa.app.docs_pages import GeneratedPage, pages, stale_pages, undocumented_fields
from envqa.core.registry import RULES
from qa_testkit import REPO

pytestmark = pytest.mark.fast  # the fast tier (make test-fast): no Docker, Redis or Postgres

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
CODE_SPAN = re.compile(r"`[^`\n]*`")


def _pages() -> list[Path]:
    return [REPO / "README.md", REPO / "CONTRIBUTING.md", *sorted((REPO / "docs").rglob("*.md"))]


def _prose(text: str) -> str:
    """The text without code blocks and code spans, where `[x](y)` is code, not a link."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def _links(path: Path) -> list[str]:
    return LINK.findall(_prose(path.read_text()))


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading anchors by its text
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for line in FENCE.sub("", path.read_text()).splitlines():
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if match:
            slug = _slug(match.group(1))
            out.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
            seen[slug] = seen.get(slug, 0) + 1
    return out


def _local(target: str) -> bool:
    return not re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I)  # http:, https:, mailto:, ...


def _resolve(page: Path, target: str) -> tuple[Path, str]:
    path, _, anchor = target.partition("#")
    return ((page.parent / path).resolve() if path else page), anchor


def test_every_relative_link_resolves():
    broken, checked = [], 0
    for page in _pages():
        for target in filter(_local, _links(page)):
            dest, anchor = _resolve(page, target)
            checked += 1
            if not dest.exists():
                broken.append(f"{page.relative_to(REPO)}: {target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
                broken.append(f"{page.relative_to(REPO)}: {target} (no heading #{anchor} in {dest.name})")
    assert checked >= 40, checked  # the links are really read (not vacuous)
    assert not broken, "\n".join(broken)


def test_a_broken_link_and_a_wrong_anchor_are_caught(tmp_path):
    """The checker is live: a missing file and a missing heading are both reported."""
    page = tmp_path / "page.md"
    (tmp_path / "other.md").write_text("# Other\n\n## The `qa rules` table: all of it\n")
    page.write_text(
        "[a](other.md#the-qa-rules-table-all-of-it) [b](missing.md) [c](other.md#nope) "
        "`[d](code-span.md)`\n\n```\n[e](fenced.md)\n```\n"
    )
    targets = _links(page)
    assert targets == ["other.md#the-qa-rules-table-all-of-it", "missing.md", "other.md#nope"]
    dest, anchor = _resolve(page, targets[0])
    assert anchor in _anchors(dest)
    assert not _resolve(page, targets[1])[0].exists()
    assert _resolve(page, targets[2])[1] not in _anchors(dest)


def test_every_docs_page_is_reachable_from_the_readme():
    reached, todo = set(), [REPO / "README.md"]
    while todo:
        page = todo.pop()
        if page in reached:
            continue
        reached.add(page)
        for target in filter(_local, _links(page)):
            dest = _resolve(page, target)[0]
            if dest.suffix == ".md" and dest.is_file():
                todo.append(dest)
            elif dest.is_file():
                reached.add(dest)
    files = {p.resolve() for p in (REPO / "docs").rglob("*") if p.is_file()} | {(REPO / "CONTRIBUTING.md").resolve()}
    assert len(files) >= 15, files
    unreached = sorted(str(p.relative_to(REPO)) for p in files - reached)
    assert not unreached, f"not linked from the README or any page it leads to: {unreached}"


def test_the_readme_is_a_front_door():
    text = (REPO / "README.md").read_text()
    assert len(text.splitlines()) <= 300, "README.md is the front door: move the detail into docs/"
    for heading in (
        "## The two commands",
        "## Quickstart",
        "## Exit codes",
        "## What it checks",
        "## Architecture",
        "## Documentation",
    ):
        assert heading in text, heading
    assert "make demo" in text and "make test" in text  # the README's two commands, which .ci/run runs
    assert "make test" in (REPO / ".ci" / "run").read_text()


def test_the_generated_pages_are_fresh():
    stale = stale_pages(REPO)
    assert not stale, f"stale: {stale}: run make docs"


def test_every_config_key_has_a_description():
    """The configuration reference is the fields' descriptions: a key without one would be a blank row."""
    assert not undocumented_fields(), f"add Field(description=...) in core/config.py: {undocumented_fields()}"


def test_the_catalogue_is_stale_when_a_rule_changes():
    """The generated catalogue follows the registry: one rule's summary changed, the page on disk is stale."""
    changed = tuple(
        dataclasses.replace(r, summary=r.summary + " (changed)") if i == 3 else r for i, r in enumerate(RULES)
    )
    assert catalogue_markdown(changed) != catalogue_markdown()
    rules_page = next(p for p in pages() if p.path.endswith("rules.md"))
    assert stale_pages(REPO, (rules_page,)) == []
    edited = GeneratedPage(rules_page.path, rules_page.begin, rules_page.end, lambda: catalogue_markdown(changed))
    assert stale_pages(REPO, (edited,)) == ["docs/reference/rules.md"]


def _copy_of_the_code(tmp_path: Path) -> Path:
    copy = tmp_path / "repo"
    shutil.copytree(
        REPO,
        copy,
        symlinks=True,
        ignore=shutil.ignore_patterns(
            ".venv", ".git", ".qa", ".cache", "__pycache__", "tests", "examples", "benchmarks", "*.egg-info"
        ),
    )
    return copy


def _check(copy: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(copy)}  # `envqa` (and so every layer) from the copy
    return subprocess.run(
        [sys.executable, str(copy / "scripts" / "gen_docs.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=copy,
        env=env,
    )


def test_make_docs_check_fails_on_a_changed_source_until_regenerated(tmp_path):
    """End to end, in a copy of the code: a rule's summary edited in rules.toml, or a config field's description
    in core/config*.py, without `make docs`, makes `scripts/gen_docs.py --check` fail saying "run make docs"."""
    copy = _copy_of_the_code(tmp_path)
    assert _check(copy).returncode == 0, _check(copy).stderr
    toml = copy / "core" / "registry" / "rules.toml"
    text = toml.read_text()
    summary = re.search(r'^summary = "(.+)"$', text, re.M).group(1)
    toml.write_text(text.replace(f'summary = "{summary}"', f'summary = "{summary}, reworded"', 1))
    res = _check(copy)
    assert res.returncode == 1 and "docs/reference/rules.md is stale: run make docs" in res.stderr, res.stderr
    env = {**os.environ, "PYTHONPATH": str(copy)}
    subprocess.run(
        [sys.executable, str(copy / "scripts" / "gen_docs.py")],
        check=True,
        timeout=120,
        cwd=copy,
        env=env,
        capture_output=True,
    )
    assert f"{summary}, reworded" in (copy / "docs" / "reference" / "rules.md").read_text()
    assert _check(copy).returncode == 0
    config = copy / "core" / "config_models.py"  # [hunter] is defined beside core/config.py
    config.write_text(
        config.read_text().replace(
            'description="hunter trials per version"', 'description="hunter trials for each version"', 1
        )
    )
    res = _check(copy)
    assert res.returncode == 1 and "docs/reference/configuration.md is stale: run make docs" in res.stderr, res.stderr
