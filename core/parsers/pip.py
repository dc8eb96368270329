"""What a pip / python -m pip / uv pip install / uv add command installs, from its parsed words.

Shared by the unpinned-python-dependency rule (probes/static/findings.py) and the pin fixer (agents/fixers/pins.py):
both read pip's arguments the same way, so the fixer pins exactly what the rule reported.
"""

from __future__ import annotations

import re

from envqa.core.parsers.shell import Command

PIP_VALUE_OPTIONS = {
    "-r",
    "--requirement",
    "-c",
    "--constraint",
    "-e",
    "--editable",
    "-i",
    "--index-url",
    "--extra-index-url",
    "-f",
    "--find-links",
    "-t",
    "--target",
    "--prefix",
    "--root",
    "--src",
    "--python-version",
    "--platform",
    "--implementation",
    "--abi",
    "--trusted-host",
    "--cache-dir",
    "--progress-bar",
    "--log",
    "--timeout",
    "--retries",
    "--exists-action",
    "--proxy",
    "--cert",
    "--client-cert",
    "--upgrade-strategy",
    "--only-binary",
    "--no-binary",
    "-C",
    "--config-settings",
    "--global-option",
    "--use-feature",
    "--python",
    "-p",
    "--group",
    "--extra",
}


def pip_args(cmd: Command) -> list[str] | None:
    """The arguments after `install` of a pip / python -m pip / uv pip install / uv add command, else None."""
    w = cmd.words
    if not w:
        return None
    name = cmd.name
    if re.fullmatch(r"python[\d.]*", name) and w[1:3] == ["-m", "pip"]:
        w = w[2:]
        name = "pip"
    if re.fullmatch(r"pip[\d.]*", name):
        rest = [x for x in w[1:] if x not in ("--quiet", "-q", "-qq", "--user")]
        return rest[1:] if rest[:1] == ["install"] else None
    if name == "uv" and w[1:3] == ["pip", "install"]:
        return w[3:]
    if name == "uv" and w[1:2] == ["add"]:
        return w[2:]
    return None


def unpinned_packages(args: list[str]) -> list[str]:
    out, skip = [], False
    for tok in args:
        if skip:
            skip = False
            continue
        if tok.startswith("-"):
            skip = tok in PIP_VALUE_OPTIONS  # `-r file`, `-i URL`, ...: the next word is the option's value
            continue
        if "/" in tok or tok.startswith((".", "$", "~")) or tok.endswith((".whl", ".tar.gz", ".zip")):
            continue  # a path, an archive or a variable: nothing to pin here
        if not re.search(r"(==|===|@)", tok):
            out.append(tok)
    return out
