"""Scripted transcripts for the fake provider server, shared by the provider tests."""

from __future__ import annotations

WORDFREQ = r"""#!/usr/bin/env python3
import re, sys
from collections import Counter
counts = Counter(w.lower() for w in re.findall(r"[A-Za-z]+", sys.stdin.read()))
for word, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:3]:
    print(n, word)
"""

# Wrong on purpose: counts case-sensitively and ignores ties, so the verifier must give 0.
WRONG_WORDFREQ = r"""#!/usr/bin/env python3
import sys
from collections import Counter
for word, n in Counter(sys.stdin.read().split()).most_common(3):
    print(n, word)
"""


def bash(command: str) -> dict:
    return {"name": "bash", "arguments": {"command": command}}


def finish(summary: str = "done") -> dict:
    return {"name": "finish", "arguments": {"summary": summary}}


def write_script_turns(program: str, say: str = "") -> list[dict]:
    return [
        {
            "text": say or "I'll look around first.",
            "tool_calls": [bash("pwd; ls -la /app; env | sort")],
            "usage": {"input": 1000, "output": 50},
        },
        {
            "text": "Writing /app/wordfreq.",
            "tool_calls": [bash(f"cat > /app/wordfreq <<'PY'\n{program}PY\nchmod +x /app/wordfreq")],
            "usage": {"input": 1500, "output": 200},
        },
        {"tool_calls": [bash("printf 'b a b a c' | /app/wordfreq")], "usage": {"input": 1800, "output": 40}},
        {"text": "Done.", "tool_calls": [finish("wrote /app/wordfreq")], "usage": {"input": 2000, "output": 20}},
    ]


def solving() -> dict:
    return {"turns": write_script_turns(WORDFREQ)}


def wrong() -> dict:
    return {"turns": write_script_turns(WRONG_WORDFREQ)}
