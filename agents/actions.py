"""The `text` action protocol: a model acts by writing one fenced bash block per reply (issue 26).

This is how mini-swe-agent, Terminus and most RL harnesses drive a policy served without a tool-call
parser (vLLM, llama.cpp). A reply with exactly one bash block runs it; none or several runs nothing and
gets a format-error observation (prompts/solver_text_format_error.j2). A block whose first line is
`echo COMPLETE_TASK_AND_SUBMIT` submits: the loop ends as `finished`, and nothing in that block runs.
`<think>...</think>` sections are not read (a reasoning model's drafts are not its action).

Fences are read line by line, so a ```python block next to a bash block is skipped rather than swallowing
it; unlabelled fences and ```sh / ```shell count as bash. A block left open (the reply was cut at
max_tokens) is not a block.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SUBMIT = "COMPLETE_TASK_AND_SUBMIT"
BASH_LANGS = {"", "bash", "sh", "shell", "console", "zsh"}
_OPEN = re.compile(r"^\s*```+\s*([A-Za-z0-9_+-]*)\s*$")
_CLOSE = re.compile(r"^\s*```+\s*$")
# mini-swe-agent's own spelling (..._FINAL_OUTPUT) too: policies trained in that harness write it.
_SUBMIT_LINE = re.compile(rf"^\s*echo\s+(['\"]?){SUBMIT}(?:_FINAL_OUTPUT)?\1\s*;?\s*(?:&&.*)?$")
# Reasoning models served without a reasoning parser put their thinking in the content; drafts of blocks
# in there are not actions. An unclosed <think> (cut at max_tokens) hides everything after it.
_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.S)
TRUNCATED = ("length", "max_tokens")  # finish_reason (OpenAI) / stop_reason (Anthropic) at the output limit


@dataclass
class TextAction:
    """What one plain-text reply asks for: a command, a submit, or nothing (with how many blocks it held)."""

    command: str | None
    blocks: int
    submit: bool = False

    @property
    def ok(self) -> bool:
        return self.blocks == 1


def bash_blocks(text: str) -> list[str]:
    """The bodies of the complete bash-like fenced blocks in `text`, in order."""
    blocks: list[str] = []
    lang: str | None = None
    body: list[str] = []
    for line in (text or "").splitlines():
        if lang is None:
            m = _OPEN.match(line)
            if m:
                lang, body = m[1].lower(), []
            continue
        if _CLOSE.match(line) or line.rstrip().endswith("```"):
            tail = line.rstrip()
            if not _CLOSE.match(line):  # `ls```: a closing fence glued to the last command line
                body.append(tail[:-3].rstrip("`"))
            if lang in BASH_LANGS:
                blocks.append("\n".join(body).strip("\n"))
            lang = None
            continue
        body.append(line)
    return blocks


def parse_text_action(text: str) -> TextAction:
    blocks = bash_blocks(_THINK.sub("", text or ""))
    if len(blocks) != 1:
        return TextAction(command=None, blocks=len(blocks))
    command = blocks[0]
    first = next((ln for ln in command.splitlines() if ln.strip()), "")
    if _SUBMIT_LINE.match(first):
        return TextAction(command=command, blocks=1, submit=True)
    return TextAction(command=command, blocks=1)
