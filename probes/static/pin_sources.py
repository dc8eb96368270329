"""Where a pinned package would be installed from: the question online_pins.py asks an index, read from the files.

- apt: the release of the image the pin is installed in (the FROM of the Dockerfile stage its line is in, through
  `FROM builder` to the image; solve.sh and test.sh run in the final stage), as core/package_index.py
  `distribution_of` reads an image's name. A build that adds its own apt sources (a sources.list line, a .sources
  file, a PPA, a snapshot archive) installs from places qa does not read: a version the default archive lacks is
  then not checked, never gone.
- pip: the index URLs the pip command names (`-i` / `--index-url`, `--extra-index-url`, uv's `--default-index` /
  `--index`; a requirements file's options hold for the whole file), else the environment's (`PIP_INDEX_URL`,
  `PIP_EXTRA_INDEX_URL`, `UV_INDEX_URL`, in the Dockerfile's ENV, which holds for solve.sh too); an index URL
  replaces the default, an extra one adds to it. `--find-links`, `--no-index`, a pip.conf or an index URL built
  from a variable: not checked when the indexes lack the version.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from envqa.core.input_files import InputFileError, read_text
from envqa.core.package_index import Distribution, distribution_of
from envqa.core.parsers.dockerfile import Span
from envqa.core.parsers.shell import logical_line_end

OWN_APT_SOURCES = re.compile(
    r"sources\.list|\.sources\b|add-apt-repository|\bdeb\s+(\[[^\]]*\]\s+)?\w+://|snapshot\.(debian\.org|ubuntu\.com)"
    r"|/etc/apt/(preferences|trusted)|\bextrepo\b"
)
INDEX_URL = re.compile(r"(?:--index-url|--default-index|(?<![\w-])-i)(?:=|\s+)['\"]?([^\s'\"]+)")
EXTRA_URL = re.compile(r"(?:--extra-index-url|--index)(?:=|\s+)['\"]?([^\s'\"]+)")
ENV_INDEX_URL = re.compile(r"\b(?:PIP_INDEX_URL|UV_INDEX_URL|UV_DEFAULT_INDEX)\s*[=\s]\s*['\"]?([^\s'\"]+)")
ENV_EXTRA_URL = re.compile(r"\b(?:PIP_EXTRA_INDEX_URL|UV_EXTRA_INDEX_URL|UV_INDEX)\s*[=\s]\s*['\"]?([^\s'\"]+)")
OWN_PIP_SOURCES = re.compile(r"--find-links|(?<![\w-])-f\s|--no-index")
ENV_OWN_PIP_SOURCES = re.compile(r"pip\.conf|PIP_FIND_LINKS|PIP_NO_INDEX|PIP_CONFIG_FILE")


@dataclass(frozen=True)
class AptQuestion:
    dist: Distribution | None
    image: str  # the FROM image (for the note when `dist` is None)
    own_sources: str | None  # why the archive's answer cannot be final (None: the default sources)


@dataclass(frozen=True)
class PipQuestion:
    urls: tuple[str, ...]  # the indexes, in order ("": the configured default)
    own_sources: str | None


def _stage_images(spans: list[Span]) -> dict[int, str]:
    """stage -> the image it is built from, `FROM builder` followed to the image `builder` was built from."""
    names: dict[str, int] = {}
    images: dict[int, str] = {}
    for span in spans:
        if span.keyword != "FROM":
            continue
        words = [w for w in (span.resolved or span.value).split() if not w.startswith("--")]
        ref = words[0] if words else ""
        images[span.stage] = images.get(names[ref.lower()], ref) if ref.lower() in names else ref
        if len(words) >= 3 and words[1].lower() == "as":
            names[words[2].lower()] = span.stage
    return images


def _text(root, file: str) -> str:
    try:
        return read_text(root / file, strict=False)
    except (InputFileError, OSError):
        return ""


def apt_question(spans: list[Span], dockerfile: str, root, file: str, line: int) -> AptQuestion:
    images = _stage_images(spans)
    stage = max(images, default=-1)
    if file == dockerfile:
        stage = max((s.stage for s in spans if s.start < line and s.stage >= 0), default=stage)
    image = images.get(stage, "")
    texts = _text(root, dockerfile) + ("\n" + _text(root, file) if file != dockerfile else "")
    m = OWN_APT_SOURCES.search(texts)
    own = f"the build adds its own apt sources ({m.group(0).strip()})" if m else None
    return AptQuestion(distribution_of(image) if image else None, image, own)


def _command_text(text: str, line: int) -> str:
    """The logical line a command starts on (its `\\` continuations joined): where its options are."""
    lines = text.split("\n")
    if not 0 < line <= len(lines):
        return ""
    return " ".join(lines[line - 1 : logical_line_end(lines, line - 1)])


def pip_question(root, dockerfile: str, file: str, line: int) -> PipQuestion:
    """The indexes of the pip command at `file:line`: its own options (a requirements file's hold for the whole
    file), else the environment's (PIP_INDEX_URL in the Dockerfile's ENV or the file), else the default."""
    text = _text(root, file)
    scripts = file == dockerfile or file.endswith(".sh")
    command = _command_text(text, line) if scripts else text
    env_text = text + ("\n" + _text(root, dockerfile) if file != dockerfile else "")
    main = INDEX_URL.findall(command) or ENV_INDEX_URL.findall(env_text)
    extra = EXTRA_URL.findall(command) + ENV_EXTRA_URL.findall(env_text)
    own = None
    if m := OWN_PIP_SOURCES.search(command) or ENV_OWN_PIP_SOURCES.search(env_text):
        own = f"the build installs from its own sources ({m.group(0).strip()})"
    elif any("$" in u for u in main + extra):
        own = "the build's index URL is built from a variable"
    main, extra = _urls(main), _urls(extra)
    return PipQuestion(tuple(dict.fromkeys((main or [""]) + extra)), own)


def _urls(values: list[str]) -> list[str]:
    """The plain http(s) URLs among an option's values (`sed -i s/a/b/` is not an index; "" is the default)."""
    return [v.rstrip("/") for v in values if v.startswith(("http://", "https://")) and "$" not in v]
